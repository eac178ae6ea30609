"""Small helpers shared by the benchmarks: statistics, ratios and the report they write.

Every benchmark reports medians (and percentiles where the tail matters) and a
ratio against a baseline measured in the same run on the same machine, so the
figures compare across machines. Results go to ``bench/results/<name>.json``
and ``.txt`` (gitignored) and are printed.
"""

from __future__ import annotations

import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def median(values: Iterable[float]) -> float:
    """The median of ``values`` (NaN for none)."""
    values = list(values)
    return statistics.median(values) if values else math.nan


def percentile(values: Iterable[float], p: float) -> float:
    """The ``p``-th percentile (0..100) by linear interpolation between closest ranks."""
    data = sorted(values)
    if not data:
        return math.nan
    if len(data) == 1:
        return float(data[0])
    rank = (len(data) - 1) * p / 100.0
    lo, hi = math.floor(rank), math.ceil(rank)
    return data[lo] + (data[hi] - data[lo]) * (rank - lo)


def ratio(value: float, baseline: float) -> float:
    """``value / baseline`` (NaN when the baseline is zero)."""
    return value / baseline if baseline else math.nan


def proc_kb(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` memory field (``VmRSS``, ``VmHWM``, ...) in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def mb(kb: int) -> float:
    """Kilobytes as megabytes (MiB)."""
    return kb / 1024.0


def stop_process(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM, as systemd stops the service; killed if it has not ended within ``timeout`` seconds."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def is_quick() -> bool:
    """True when ``BENCH_QUICK=1`` (or ``python -m bench --quick``): fewer runs, smaller bursts."""
    return os.environ.get("BENCH_QUICK", "") not in ("", "0")


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds``."""

    def __enter__(self) -> "Stopwatch":
        self.start = time.perf_counter()
        self.seconds = math.nan
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


@dataclass
class Report:
    """What one benchmark measured: figures (median etc.), ratios, and the raw runs."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    ratios: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def figure(self, key: str, value: float, unit: str, what: str) -> None:
        """Record one figure (usually a median)."""
        self.figures[key] = {"value": value, "unit": unit, "what": what}

    def series(self, key: str, values: Sequence[float], unit: str, what: str,
               percentiles: Sequence[float] = ()) -> float:
        """Record raw runs under ``key`` and their median (plus percentiles); returns the median."""
        self.runs[key] = list(values)
        m = median(values)
        self.figure(key, m, unit, f"{what} (median of {len(values)})")
        for p in percentiles:
            self.figure(f"{key}_p{p:g}", percentile(values, p), unit, f"{what} (p{p:g})")
        return m

    def ratio(self, key: str, value: float, baseline: float, what: str, target: str | None = None) -> float:
        """Record ``value / baseline`` with what it means and the target, if any."""
        r = ratio(value, baseline)
        self.ratios[key] = {"value": r, "what": what, "target": target}
        return r

    def text(self) -> str:
        """The human-readable report."""
        lines = [f"== {self.name} ==", "  " + ", ".join(f"{k}={v}" for k, v in self.params.items())]
        for key, f in self.figures.items():
            lines.append(f"  {key:<34} {_fmt(f['value']):>12} {f['unit']:<8} {f['what']}")
        for key, r in self.ratios.items():
            target = f"  [target {r['target']}]" if r.get("target") else ""
            lines.append(f"  {key:<34} {_fmt(r['value']):>12} x        {r['what']}{target}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def write(self, directory: Path = RESULTS_DIR) -> Path:
        """Write ``<name>.json`` and ``<name>.txt``; print the text; return the JSON path."""
        directory.mkdir(parents=True, exist_ok=True)
        doc = {
            "name": self.name,
            "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                        "cpus": os.cpu_count()},
            "params": self.params,
            "figures": self.figures,
            "ratios": self.ratios,
            "runs": self.runs,
            "notes": self.notes,
        }
        path = directory / f"{self.name}.json"
        path.write_text(json.dumps(doc, indent=2, default=str) + "\n")
        text = self.text()
        (directory / f"{self.name}.txt").write_text(text + "\n")
        print(text, flush=True)
        return path


def _fmt(value: float) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"

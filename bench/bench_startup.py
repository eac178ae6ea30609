"""Start-up time and resident memory of ``tabletop serve`` (issue 9: small enough for a Pi Zero 2 W).

Each run starts ``tabletop serve --pads sim`` as a subprocess on a free port
with a fresh data directory and an empty config, and times from ``Popen``
until ``GET /api/health`` answers 200. Right then the process's resident set
(VmRSS) and peak (VmHWM) are read from /proc; then the pages a phone and the
table screen load first (/, /screen, /join.svg, /calibrate) are fetched and
the resident set read again. Medians of several runs.

Baselines measured in the same run, the same way (``Popen`` until it is
ready): a bare ``python -c pass``, and an interpreter that imports Flask and
waitress (the floor of any Flask + waitress service; bench_memory's baseline,
reused from there). Targets (issue 9): start-up under 3 s, resident under 60 MB.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_memory import _baseline_rss_kb
from bench.common import Report, Stopwatch, is_quick, mb, median, proc_kb, stop_process

REPO = Path(__file__).resolve().parent.parent
#: Bounds a hang only.
START_TIMEOUT_S = 60.0
TARGET_START_S = 3.0
TARGET_RSS_MB = 60.0
FIRST_PAGES = ("/", "/screen", "/join.svg", "/calibrate", "/api/state")


def free_port() -> int:
    """A TCP port on loopback that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str, timeout: float = 5.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def serve_once(tmp: Path, run: int) -> dict[str, float]:
    """Start ``tabletop serve`` once; seconds until healthy and memory figures (kB)."""
    config = tmp / f"config-{run}.toml"
    config.write_text("")  # an empty config: every default, nothing from the user's home
    port = free_port()
    cmd = [sys.executable, "-m", "companion.cli", "serve", "--pads", "sim", "--host", "127.0.0.1",
           "--port", str(port), "--data", str(tmp / f"data-{run}"), "--config", str(config), "--no-qr"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "0"})
    try:
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"tabletop serve exited with {proc.returncode}: {err[-2000:]}")
            try:
                if _get(port, "/api/health", timeout=2.0) == 200:
                    break
            except OSError:
                pass
            if time.perf_counter() - t0 > START_TIMEOUT_S:
                raise RuntimeError(f"tabletop serve did not answer /api/health within {START_TIMEOUT_S:g} s")
            time.sleep(0.005)
        started = time.perf_counter() - t0
        rss = proc_kb(proc.pid, "VmRSS")
        hwm = proc_kb(proc.pid, "VmHWM")
        for path in FIRST_PAGES:
            status = _get(port, path)
            if status != 200:
                raise RuntimeError(f"GET {path} answered {status}")
        rss_pages = proc_kb(proc.pid, "VmRSS")
        hwm_pages = proc_kb(proc.pid, "VmHWM")
    finally:
        stop_process(proc, timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    return {"start_s": started, "rss_kb": rss, "hwm_kb": hwm, "rss_pages_kb": rss_pages, "hwm_pages_kb": hwm_pages}


def python_start(code: str) -> float:
    """Seconds from Popen until ``python -c code`` has finished."""
    with Stopwatch() as sw:
        subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
    return sw.seconds


def main() -> Report:
    """Run the benchmark and write bench/results/startup.{json,txt}."""
    runs = 3 if is_quick() else 7
    report = Report("startup", params={"runs": runs, "pads": "sim", "cpus": os.cpu_count()})
    # Warm the page cache and bytecode once, as a Pi that has started the service before.
    python_start("import flask, waitress")
    with tempfile.TemporaryDirectory(prefix="tabletop-start-") as tmpdir:
        tmp = Path(tmpdir)
        serve_once(tmp, -1)
        results = []
        bare: list[float] = []
        flask_waitress: list[float] = []
        for run in range(runs):
            # Interleave the baselines with the runs, so a busy moment hits both alike.
            bare.append(python_start("pass"))
            flask_waitress.append(python_start("import flask, waitress"))
            results.append(serve_once(tmp, run))
    start = report.series("serve_start_s", [r["start_s"] for r in results], "s",
                          f"tabletop serve: Popen until /api/health answers  [target < {TARGET_START_S:g}]")
    bare_s = report.series("python_bare_s", bare, "s", "python -c pass")
    fw_s = report.series("python_flask_waitress_s", flask_waitress, "s", "python -c 'import flask, waitress'")
    rss = median(mb(r["rss_kb"]) for r in results)
    report.figure("rss_at_start_mb", rss, "MB", f"resident (VmRSS) when healthy (median)  [target < {TARGET_RSS_MB:g}]")
    report.figure("hwm_at_start_mb", median(mb(r["hwm_kb"]) for r in results), "MB", "peak resident (VmHWM) when healthy")
    rss_pages = median(mb(r["rss_pages_kb"]) for r in results)
    report.figure("rss_after_first_pages_mb", rss_pages, "MB",
                  f"resident after {', '.join(FIRST_PAGES)}  [target < {TARGET_RSS_MB:g}]")
    report.figure("hwm_after_first_pages_mb", median(mb(r["hwm_pages_kb"]) for r in results), "MB",
                  "peak resident after the first pages")
    base_kb = _baseline_rss_kb()
    report.figure("baseline_flask_waitress_mb", mb(base_kb), "MB", "bare interpreter with flask + waitress imported")
    report.ratio("start_vs_bare_python", start, bare_s, "serve start-up / python -c pass")
    report.ratio("start_vs_flask_waitress", start, fw_s, "serve start-up / python importing flask + waitress")
    report.ratio("rss_vs_flask_waitress", rss, mb(base_kb), "resident at start / bare flask+waitress interpreter")
    report.notes.append(
        f"start-up {'meets' if start < TARGET_START_S else 'MISSES'} the {TARGET_START_S:g} s target; "
        f"resident {'meets' if max(rss, rss_pages) < TARGET_RSS_MB else 'MISSES'} the {TARGET_RSS_MB:g} MB target"
    )
    report.write()
    return report


if __name__ == "__main__":
    main()

"""Pad box detection: the real firmware image in simavr on the table model's random Taco rounds, new against old.

The table model (firmware/sim/table_model.py, MODEL.md) draws random rounds
of 2 to 8 players on a table of eight piezo pads: hands from sharp (clipped)
to soft, feints, slow presses, discs wired either way, crosstalk between
pads, mains hum, noise and drift, near ties. Each scenario file runs through
the real firmware image in simavr (firmware/sim/harness) and the box's
lines are decoded by the host's own parser (hardware/protocol.py). Two
firmwares in the same run:

* **new**: the working tree's firmware/, on the biased (mid-supply) input;
* **old**: firmware/ as of commit b3ea79e (exported with ``git archive`` and
  built with its own Makefile), on the old half-wave input it was made for
  (``harness --frontend halfwave``). Both run in this tree's harness.

Hits are matched to true contacts per pad (within 3 ms, each hit to at most
one contact, closest first). Reported: slaps dropped or reported as touches
(by hand), touches found, presses, false slaps and touches (a hit with no
contact: crosstalk, hum), the onset error (reported onset minus the moment
of contact) by hand and disc polarity, the order of every pair of slaps
0.5 ms or more apart, the Taco verdict (first and last slapper) of every
round whose deciding gap is 1 ms or more (the last as the referee judges it,
docs/games/taco.md: a slapper whose slap was dropped is a never-slapper, and
a lone never-slapper is last; also apart, the last slap heard against the
last slapper), the scan period and the longest
gap between two samples of a pad, flash, RAM and the stack's high-water
mark. A contact is "shaken" when crosstalk over the touch threshold is on
its pad while its push rises (the model's flag): such slaps are split out.
Then the 10 s hum-only scenario and the fixed hardest cases apart.
With ``--warmup`` every table starts with a warm-up (each player slaps alone
once, hard; MODEL.md), not judged: what the box learns of a table before
the rounds that count (each pair's vibration delay, firmware 2.4). With
``--warmup-slaps 2`` they go round twice, as the table screen's check-in
asks of each player (docs/games/taco.md: two rounds leave the box knowing
93 % of the pairs' delays on seed 20261201's tables, one round 77 %); with
``--warmup-slaps 3`` three times: a box that has heard the table for a
while, which has learnt about half the discs' polarities too (one or two
rounds teach it none).
With ``--table-rounds N`` each table plays N rounds (~6 by default: every
table, and every box, new): a box that has played on its table for a while,
where a slow drift would show (firmware 2.19.0 fixed one: the noise floor of
most pads only ever rose).
The bench reports; it asserts nothing. Targets are printed beside the new
firmware's figures.

    python -m bench.bench_padbox_detection [--rounds 1000] [--quick] [--no-baseline] [--seed S] [--jobs 2] [--keep DIR] [--warmup]
    python -m bench.bench_padbox_detection --warmup --warmup-slaps 3 ... (each player slaps alone three times first)
    python -m bench.bench_padbox_detection --table-rounds 80 ... (80 rounds a table: long tables)
    python -m bench.bench_padbox_detection --host [--slot-us US | --adclogs DIR] ...
    python -m bench.bench_padbox_detection --seeds 20261201,7,3 ... (each seed, then the counts summed)
    python -m bench.bench_padbox_detection --draw 1 ... (the new image with 1 cycle more a scan: another draw)

``--adclogs DIR`` keeps the sample times the new image took in DIR; the same
command with ``--host`` then feeds the host's core (built from the working
tree, with ``HOSTCC`` if set) the very same samples: the image's hits
exactly, for the tree the logs came from, and for a changed core, what the
change does on the same samples, apart from what the image's timing does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script
    sys.path.insert(0, str(REPO))

from bench.common import Report, is_quick, median, percentile  # noqa: E402
from hardware import protocol as p  # noqa: E402

FIRMWARE = REPO / "firmware"
BASELINE_COMMIT = "b3ea79ee463e90eac95332c471f781c500ddbbf1"
#: A hit belongs to a true contact on its pad if its onset is within this of the contact.
MATCH_US = 3000
#: Presses rise for 2-5 ms: their hit may come that much later.
PRESS_MATCH_EXTRA = 2.0
#: Pairs of slaps at least this far apart must come out in the right order.
ORDER_MIN_GAP_US = 500
#: Verdicts are judged where the deciding gap is at least this.
VERDICT_MIN_GAP_US = 1000
DEFAULT_ROUNDS = 1000
QUICK_ROUNDS = 60
SEED = 20261201
HUM_CASE = "model_hum_touches"
TARGETS = {
    "dropped": "0", "as_touch": "0", "false": "0", "onset_p99": "p99 <= 150", "onset_worst": "|worst| <= 300",
    "order": "0 wrong", "verdict": "0 wrong", "scan_p99": "<= 150", "gap": "<= 250", "lost": "0",
}


def _load(name: str, path: Path) -> ModuleType:
    """A module from a file outside any package (firmware/sim), loaded once."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


simtools = _load("padbox_simtools", FIRMWARE / "sim" / "simtools.py")
table_model = simtools.load_sibling("table_model")


@dataclass
class Firmware:
    """One image under test and how it is wired."""

    label: str
    what: str
    build: Any  # simtools.Build
    frontend: str


@dataclass(frozen=True)
class HitSeen:
    """A HIT line as the host decoded it."""

    pad: int
    t_us: int
    kind: str
    peak: int


def host_tasks(binary: Path, scenarios: Sequence[str], jobs: int,
               options: Sequence[str] = ()) -> list[tuple[str, str, list[str]]]:
    """_run_host's tasks: the scenarios (longest first) dealt out in four batches a job, so the pool ends together."""
    n = max(1, jobs) * 4
    return [("host", str(binary), [*options, *scenarios[i::n]]) for i in range(n) if scenarios[i::n]]


def _run_host(task: tuple[str, str, list[str]]) -> list[tuple[str, str, list[HitSeen], dict[str, int], int, float]]:
    """Run scenarios through the detection core on the host (hostrun, in a worker): per file as _run_file."""
    label, binary, scns = task
    t0 = time.perf_counter()
    out = subprocess.run([binary, *scns], capture_output=True, text=True, check=True).stdout
    per = simtools.hostrun_hits(out)
    secs = (time.perf_counter() - t0) / max(1, len(scns))
    return [(label, name, [HitSeen(*h) for h in hits], {}, 0, secs) for name, hits in per.items()]


def _run_file(task: tuple[str, ...]) -> tuple[str, str, list[HitSeen], dict[str, int], int, float]:
    """Run one scenario on one image (in a worker): the decoded hits, the harness report, refused lines, seconds.

    The task: label, elf, harness, scenario, frontend, a scratch folder, and optionally a file
    to log the image's sample times to (``--adclogs``)."""
    label, elf, harness, scn, frontend, tmp, *adclog = task
    t0 = time.perf_counter()
    build = simtools.Build(Path(elf), Path(elf), Path(harness), "")
    out = Path(tmp) / label
    out.mkdir(parents=True, exist_ok=True)
    run = simtools.run(build, Path(scn), out, frontend=frontend, timeout=900,
                       adclog=Path(adclog[0]) if adclog else None)
    events = p.PadBoxProtocol().data_received(run.uart)
    hits = [HitSeen(e.pad, e.device_us, e.kind, e.peak) for e in events if isinstance(e, p.Hit)]
    refused = sum(isinstance(e, (p.Refused, p.Dropped)) for e in events)
    return label, Path(scn).stem, hits, run.report, refused, time.perf_counter() - t0


# ------------------------------------------------------------------ judging


def _hand_class(c: Any) -> str:
    return c.hand


def _crossing_us(c: Any, elec: Any) -> float:
    """When the contact's own waveform plus the hum first reaches the touch threshold (as scenario.c)."""
    ev = simtools.Event(c.pad, c.t_us, c.expect, peak_mv=c.peak_mv, rise_us=c.rise_us, ring=c.ring, hz=c.ring_hz,
                        tau_us=c.tau_us, pol=float(c.pol))
    scn = simtools.Scenario(Path("-"), hum_mv=elec.hum_mv, hum_hz=elec.hum_hz)
    return scn.truth_onset(ev, table_model.TOUCH_THRESHOLD_COUNTS)


@dataclass
class Tally:
    """What one firmware did on a set of scenario files."""

    slaps: Counter = field(default_factory=Counter)  # (hand, outcome) -> n
    touches: Counter = field(default_factory=Counter)
    presses: Counter = field(default_factory=Counter)
    false: Counter = field(default_factory=Counter)  # (kind, cause) -> n
    # false slaps on a pad whose player had not slapped yet (in the round's window, before the player's
    # own slap): the only false slaps the referee can be misled by (it ignores pads with no player)
    false_before_player: int = 0
    errors: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    pairs: Counter = field(default_factory=Counter)
    verdicts: Counter = field(default_factory=Counter)
    scans: list[tuple[str, float, float, float]] = field(default_factory=list)  # file, median, p99, gap (us)
    stack_min: int = 0xFFFF
    restarts: int = 0  # times the firmware's sample FIFO overflowed (its sampler started afresh)
    fifo_peak: int = -1  # the fullest the FIFO was at a scan's end (-1: a firmware without one)
    latency_max_us: float = -1  # the longest from a HIT's onset to its line's end on the wire (-1: none measured)
    refused: int = 0
    rounds: int = 0
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def example(self, key: str, text: str, limit: int = 12) -> None:
        """Keep a few examples of a failure, for the JSON."""
        if len(self.examples[key]) < limit:
            self.examples[key].append(text)

    def judge_file(self, sf: Any, hits: list[HitSeen], report: dict[str, int]) -> None:
        """Match the hits of one file to its truth and count everything."""
        self.scans.append((sf.name, report.get("scan_cycles_median", 0) / 16, report.get("scan_cycles_p99", 0) / 16,
                           report.get("gap_cycles_max", 0) / 16))
        self.stack_min = min(self.stack_min, report.get("stack_min_address", 0xFFFF))
        self.restarts += report.get("sampler_restarts", 0)
        self.fifo_peak = max(self.fifo_peak, report.get("fifo_peak", -1))
        self.latency_max_us = max(self.latency_max_us, report.get("hit_latency_max_us", -1))
        # (a warm-up's slaps are matched, so their hits are no false ones, but not judged)
        contacts = [(c, r) for r in [*sf.warmup, *sf.rounds] for c in r.contacts]
        match = _match(contacts, hits)  # contact index -> hit index
        used = set(match.values())
        for k, (c, r) in enumerate(contacts):
            if r.case == "warmup":
                continue
            h = hits[match[k]] if k in match else None
            where = f"{sf.name} round {r.index} pad {c.pad} {c.hand} {c.peak_mv} mV pol {c.pol} at {c.t_us} us ({r.case})"
            if c.expect == "press":
                self.presses["total"] += 1
                self.presses["found" if h else "missed"] += 1
                if h:
                    self.errors["press"].append(h.t_us - c.t_us)
                continue
            if c.expect == "slap":
                self.slaps[(c.hand, "total")] += 1
                if c.clipped:
                    self.slaps[("clipped", "total")] += 1
                if c.shaken:
                    self.slaps[("shaken", "total")] += 1
                if h is None:
                    self.slaps[(c.hand, "dropped")] += 1
                    if c.shaken:
                        self.slaps[("shaken", "dropped")] += 1
                    self.example("slap dropped" + (" (shaken)" if c.shaken else " (clean)"), where)
                elif h.kind != "S":
                    self.slaps[(c.hand, "as_touch")] += 1
                    self.example("slap reported as touch", f"{where}: peak {h.peak}")
            else:
                self.touches["total"] += 1
                self.touches["missed" if h is None else ("found" if h.kind == "T" else "as_slap")] += 1
                if h is None:
                    self.example("touch missed", where)
                elif h.kind != "T":
                    self.example("touch reported as slap", f"{where}: peak {h.peak}")
            if h is None:
                continue
            err = float(h.t_us - c.t_us)
            self.errors["all"].append(err)
            self.errors[_hand_class(c)].append(err)
            if c.clipped:
                self.errors["clipped"].append(err)
            self.errors["shaken" if c.shaken else "clean"].append(err)
            self.errors[f"pol {c.pol:+d}"].append(err)
            crossing = _crossing_us(c, sf.electrical)
            if crossing >= 0:
                self.errors["vs crossing"].append(h.t_us - crossing)
            if abs(err) > 300:
                self.example("onset off by more than 300 us", f"{where}: reported {h.t_us} ({err:+.0f} us)")
        xt_by_pad: dict[int, list[int]] = defaultdict(list)
        for r in sf.rounds:
            for x in r.crosstalk:
                if x.peak_mv >= 100:
                    xt_by_pad[x.pad].append(x.t_us)
        first_round = min((r.start_us for r in sf.rounds), default=0)
        warmup_from = sf.warmup[0].start_us if sf.warmup else first_round
        for i, h in enumerate(hits):
            if i in used:
                continue
            if h.t_us < warmup_from - 5000:
                cause = "start-up"
            elif h.t_us < first_round - 5000:
                continue  # during the warm-up: not judged
            elif any(t - 500 <= h.t_us <= t + 10_000 for t in xt_by_pad[h.pad]):
                cause = "crosstalk"
            else:
                cause = "other"
            self.false[(h.kind, cause)] += 1
            self.example(f"false {h.kind}", f"{sf.name} pad {h.pad} at {h.t_us} us peak {h.peak} ({cause})")
            if h.kind == "S" and _before_players_slap(sf, h):
                self.false_before_player += 1
        by_contact = {id(contacts[k][0]): hits[i] for k, i in match.items()}
        for r in sf.rounds:
            self._round(sf, r, hits, by_contact)

    def _round(self, sf: Any, r: Any, hits: list[HitSeen], by_contact: dict[int, HitSeen]) -> None:
        self.rounds += 1
        slaps = r.slaps()
        for a_i, a in enumerate(slaps):
            for b in slaps[a_i + 1:]:
                if b.t_us - a.t_us < ORDER_MIN_GAP_US:
                    continue
                self.pairs["total"] += 1
                ha, hb = by_contact.get(id(a)), by_contact.get(id(b))
                if ha is None or hb is None:
                    self.pairs["missing"] += 1
                elif ha.t_us >= hb.t_us:
                    self.pairs["wrong"] += 1
                    self.example("order wrong", f"{sf.name} round {r.index}: pad {a.pad} ({a.hand}) at {a.t_us} "
                                 f"before pad {b.pad} ({b.hand}) at {b.t_us}; reported {ha.t_us} vs {hb.t_us}")
        # The referee's view: the earliest slap (S) on each player's pad in the round's slot.
        lo, hi = _referee_window(sf, r)
        pressing = {c.pad for c in r.contacts if c.expect == "press"}
        seen: dict[int, int] = {}
        for h in hits:
            if h.kind == "S" and lo <= h.t_us < hi and h.pad in r.players and h.pad not in pressing:
                seen[h.pad] = min(seen.get(h.pad, h.t_us), h.t_us)
        if not slaps:
            return
        first_gap, last_gap = r.deciding_gaps_us()
        ranked = sorted(seen, key=lambda pad: (seen[pad], pad))
        # The referee (docs/games/taco.md): a player with no slap in the window is last;
        # of several such, one by seat order, which the bench does not know: not judged right.
        never = [c.pad for c in slaps if c.pad not in seen]
        if never:
            taker = never[0] if len(never) == 1 else None
        else:
            taker = ranked[-1] if ranked else None
        for which, gap, truth, said in (("first", first_gap, slaps[0].pad, ranked[0] if ranked else None),
                                        ("last heard", last_gap, slaps[-1].pad, ranked[-1] if ranked else None),
                                        ("last", last_gap, slaps[-1].pad, taker)):
            if gap < VERDICT_MIN_GAP_US:
                continue
            self.verdicts[f"{which} judged"] += 1
            if said != truth:
                self.verdicts[f"{which} wrong"] += 1
                self.example(f"{which} slapper wrong", f"{sf.name} round {r.index} ({r.case}): truth pad {truth}, "
                             f"reported {said}; gap {gap:.0f} us")


def _referee_window(sf: Any, r: Any) -> tuple[int, int]:
    """The times [lo, hi) in which the referee takes round r's slaps: its slot, from 5 ms before its start."""
    return r.start_us - 5000, r.start_us + sf.spacing_us - 5000


def _before_players_slap(sf: Any, h: HitSeen) -> bool:
    """Whether hit h fell in a round's window (the referee's, as in Tally._round) on the pad of a player of
    that round, before that player's own slap: a false slap there can make the player seem earlier."""
    for r in sf.rounds:
        lo, hi = _referee_window(sf, r)
        if lo <= h.t_us < hi and h.pad in r.players:
            return any(c.pad == h.pad and c.t_us > h.t_us for c in r.slaps())
    return False


def _match(contacts: Sequence[tuple[Any, Any]], hits: Sequence[HitSeen]) -> dict[int, int]:
    """Contact index -> hit index: per pad, closest pairs first, each hit and contact at most once."""
    cands = []
    for k, (c, _) in enumerate(contacts):
        window = MATCH_US + (PRESS_MATCH_EXTRA * c.rise_us if c.expect == "press" else 0)
        for i, h in enumerate(hits):
            if h.pad == c.pad and abs(h.t_us - c.t_us) <= window:
                cands.append((abs(h.t_us - c.t_us), k, i))
    out: dict[int, int] = {}
    taken: set[int] = set()
    for _, k, i in sorted(cands):
        if k not in out and i not in taken:
            out[k] = i
            taken.add(i)
    return out


# ------------------------------------------------------------------ the table


def _stats(values: Sequence[float]) -> tuple[float, float, float]:
    """Median (signed), p99 of the magnitude, and the worst (signed, largest magnitude)."""
    if not values:
        return math.nan, math.nan, math.nan
    worst = max(values, key=abs)
    return median(values), percentile([abs(v) for v in values], 99), worst


def _f(v: float, digits: int = 0) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "-"
    return f"{v:.{digits}f}"


def _err_cell(values: Sequence[float]) -> str:
    m, p99, worst = _stats(values)
    return f"{_f(m)} / {_f(p99)} / {_f(worst)}  (n {len(values)})" if values else "-"


def _frac(a: int, b: int) -> str:
    return f"{a} / {b}"


class _Table:
    """Rows of (label, [cell per firmware], target)."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = list(labels)
        self.rows: list[tuple[str, list[str], str]] = []

    def row(self, label: str, cells: Sequence[str], target: str = "") -> None:
        self.rows.append((label, list(cells), target))

    def section(self, title: str) -> None:
        self.rows.append((title, [], ""))

    def text(self) -> str:
        w0 = max(len(r[0]) for r in self.rows if r[1]) + 2
        wc = max([len(c) for r in self.rows for c in r[1]] + [len(lab) for lab in self.labels]) + 2
        lines = [f"{'':<{w0}}" + "".join(f"{lab:<{wc}}" for lab in self.labels) + "target (new)"]
        for label, cells, target in self.rows:
            if not cells:
                lines.append(label)
                continue
            lines.append(f"{label:<{w0}}" + "".join(f"{c:<{wc}}" for c in cells) + target)
        return "\n".join(lines)


def build_table(fws: Sequence[Firmware], main: dict[str, Tally], hum: dict[str, Tally],
                cases: dict[str, dict[str, Tally]], sizes: dict[str, dict[str, int]],
                bss: dict[str, int]) -> str:
    """The report's table, one column per firmware."""
    labels = [f"{fw.label} ({fw.frontend})" for fw in fws]
    t = _Table(labels)
    cols = [main[fw.label] for fw in fws]
    hands = ("sharp", "normal", "soft")
    t.section(f"RANDOM ROUNDS ({cols[0].rounds})")
    total = [sum(c.slaps[(h, "total")] for h in hands) for c in cols]
    t.row("real slaps", [str(n) for n in total])
    t.row("  dropped (no hit)", [str(sum(c.slaps[(h, "dropped")] for h in hands)) for c in cols], TARGETS["dropped"])
    t.row("  reported as touch", [str(sum(c.slaps[(h, "as_touch")] for h in hands)) for c in cols], TARGETS["as_touch"])
    for h in hands:
        t.row(f"  {h}: dropped / as touch / total",
              [f"{c.slaps[(h, 'dropped')]} / {c.slaps[(h, 'as_touch')]} / {c.slaps[(h, 'total')]}" for c in cols])
    t.row("  clipped (any hand): total", [str(c.slaps[("clipped", "total")]) for c in cols])
    t.row("  shaken: dropped / total", [f"{c.slaps[('shaken', 'dropped')]} / {c.slaps[('shaken', 'total')]}"
                                        for c in cols])
    t.row("touches: found / as slap / missed", [f"{c.touches['found']} / {c.touches['as_slap']} / {c.touches['missed']}"
                                                 for c in cols])
    t.row("presses: found (S or T) / missed", [f"{c.presses['found']} / {c.presses['missed']}" for c in cols])
    t.row("false slaps: crosstalk / other / start-up",
          [f"{c.false[('S', 'crosstalk')]} / {c.false[('S', 'other')]} / {c.false[('S', 'start-up')]}" for c in cols],
          TARGETS["false"])
    t.row("  on a player's pad before his slap", [str(c.false_before_player) for c in cols])
    t.row("false touches: crosstalk / other / start-up",
          [f"{c.false[('T', 'crosstalk')]} / {c.false[('T', 'other')]} / {c.false[('T', 'start-up')]}" for c in cols],
          TARGETS["false"])
    t.section("onset error, us (reported - contact): median / p99 |err| / worst")
    t.row("  all slaps and touches", [_err_cell(c.errors["all"]) for c in cols],
          f"{TARGETS['onset_p99']}, {TARGETS['onset_worst']}")
    for key in ("sharp", "normal", "soft", "clipped", "touch", "pol +1", "pol -1", "clean", "shaken"):
        label = {"sharp": "sharp (mostly clipped)", "clipped": "clipped (any hand)",
                 "clean": "clean (not shaken)", "shaken": "shaken (crosstalk > 293 mV on the pad)"}.get(key, key)
        t.row(f"  {label}", [_err_cell(c.errors[key]) for c in cols])
    t.row("  presses (apart)", [_err_cell(c.errors["press"]) for c in cols])
    t.row("  vs the touch-threshold crossing", [_err_cell(c.errors["vs crossing"]) for c in cols])
    t.section("order and verdicts")
    t.row(f"pairs >= {ORDER_MIN_GAP_US / 1000:g} ms apart: wrong / missing / total",
          [f"{c.pairs['wrong']} / {c.pairs['missing']} / {c.pairs['total']}" for c in cols], TARGETS["order"])
    t.row(f"first slapper wrong / rounds (gap >= {VERDICT_MIN_GAP_US / 1000:g} ms)",
          [_frac(c.verdicts["first wrong"], c.verdicts["first judged"]) for c in cols], TARGETS["verdict"])
    t.row(f"last slapper wrong / rounds (gap >= {VERDICT_MIN_GAP_US / 1000:g} ms)",
          [_frac(c.verdicts["last wrong"], c.verdicts["last judged"]) for c in cols], TARGETS["verdict"])
    t.row("  the last slap heard not the last slapper's",
          [_frac(c.verdicts["last heard wrong"], c.verdicts["last heard judged"]) for c in cols])
    t.section(f"HUM ONLY (10 s of 350 mV 50 Hz, then 8 touches: {HUM_CASE})")
    hcols = [hum[fw.label] for fw in fws]
    t.row("false slaps / false touches", [f"{sum(v for (k, _), v in c.false.items() if k == 'S')} / "
                                          f"{sum(v for (k, _), v in c.false.items() if k == 'T')}" for c in hcols],
          TARGETS["false"])
    t.row("touches: found / as slap / missed",
          [f"{c.touches['found']} / {c.touches['as_slap']} / {c.touches['missed']}" for c in hcols])
    t.section("HARDEST CASES (firmware/sim/scenarios/model_*.scn): right kind / expected, false hits, order wrong, worst onset us")
    for name in sorted(next(iter(cases.values()))):
        if name == HUM_CASE:
            continue
        cells = []
        for fw in fws:
            c = cases[fw.label][name]
            expected = sum(c.slaps[(h, "total")] for h in hands) + c.touches["total"]
            right = expected - sum(c.slaps[(h, "dropped")] + c.slaps[(h, "as_touch")] for h in hands) \
                - c.touches["missed"] - c.touches["as_slap"]
            worst = _stats(c.errors["all"])[2]
            cells.append(f"{right}/{expected}, false {sum(c.false.values())}, order {c.pairs['wrong']}, {_f(worst)}")
        t.row(f"  {name.removeprefix('model_')}", cells)
    if all(fw.build is None for fw in fws):
        # (the host has no sampler, flash or stack: those figures are the image's)
        return t.text()
    t.section("SCAN AND MEMORY (all files)")
    everything = {fw.label: [main[fw.label], hum[fw.label], *cases[fw.label].values()] for fw in fws}
    scans = {lab: [s for tally in ts for s in tally.scans] for lab, ts in everything.items()}
    t.row("scan period us: median (of files) / worst p99",
          [f"{_f(median(s[1] for s in scans[fw.label]))} / {_f(max(s[2] for s in scans[fw.label]))}" for fw in fws],
          TARGETS["scan_p99"])
    t.row("longest gap between samples of a pad, us",
          [f"{_f(max(s[3] for s in scans[fw.label]))}" for fw in fws], TARGETS["gap"])
    t.row("sample FIFO overflows (samples lost), all files",
          [str(sum(x.restarts for x in everything[fw.label])) for fw in fws], TARGETS["lost"])
    t.row("sample FIFO: fullest at a scan's end, samples",
          [_fifo_cell(max(x.fifo_peak for x in everything[fw.label])) for fw in fws])
    t.row("a HIT line on the wire after its onset: longest, ms",
          [_latency_cell(max(x.latency_max_us for x in everything[fw.label])) for fw in fws])
    t.row("flash / static RAM, bytes", [f"{sizes[fw.label]['flash']} / {sizes[fw.label]['ram']}" for fw in fws])
    stack = {lab: min(tally.stack_min for tally in ts) for lab, ts in everything.items()}
    t.row("stack: deepest / headroom above _end, bytes",
          [f"{simtools.RAMEND - stack[fw.label] + 1} / {stack[fw.label] - bss[fw.label]}" for fw in fws])
    t.row("lines refused by the host parser", [str(sum(x.refused for x in everything[fw.label])) for fw in fws], "0")
    return t.text()


def _fifo_cell(peak: int) -> str:
    """The FIFO's fullest as the harness reports it: a byte (GPIOR2), so 255 is 255 or more
    (firmware 2.29.0's FIFO holds 352)."""
    return "-" if peak < 0 else ">= 255" if peak >= 255 else str(peak)


def _latency_cell(us: float) -> str:
    return "-" if us < 0 else f"{us / 1000:.1f}"


class DetectionReport(Report):
    """A Report whose text is the comparison table."""

    table: str = ""

    def text(self) -> str:
        params = {k: v for k, v in self.params.items() if not k.endswith(".examples")}
        head = [f"== {self.name} ==", "  " + ", ".join(f"{k}={v}" for k, v in params.items())]
        return "\n".join(head + [self.table] + [f"note: {n}" for n in self.notes])


# ------------------------------------------------------------------ main


def _build(tmp: Path, baseline: bool, draw: int = 0) -> list[Firmware]:
    """Build the new image (and the harness) and, with ``baseline``, the old one.

    ``draw``: the new image with that many cycles more at each scan's end
    (make DRAW=K): the same detection, another draw of its sample timing."""
    try:
        new = simtools.build(tmp / "new", make_vars=[f"DRAW={draw}"] if draw else [])
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"the working tree's firmware does not build:\n{exc.stdout}\n{exc.stderr}") from exc
    cycles = f"{draw} cycle" + ("s" if draw != 1 else "")
    what = "working tree firmware/" + (f" (draw {draw}: {cycles} more a scan)" if draw else "")
    fws = [Firmware("new", what, new, "biased")]
    if baseline:
        src = simtools.firmware_at(BASELINE_COMMIT, tmp / "old-src")
        subprocess.run(["make", "-C", str(src), f"BUILD={tmp / 'old'}", "all"], capture_output=True, text=True,
                       check=True)
        old = simtools.Build(tmp / "old" / "padbox.elf", tmp / "old" / "padbox.hex", new.harness, "")
        fws.append(Firmware("old", f"firmware/ at {BASELINE_COMMIT[:7]}", old, "halfwave"))
    return fws


def main(argv: list[str] | None = None) -> Report:
    """Run the bench (``argv``: the command line; None when run by ``python -m bench``)."""
    ap = argparse.ArgumentParser(prog="python -m bench.bench_padbox_detection", description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=None, help=f"random rounds (default {DEFAULT_ROUNDS})")
    ap.add_argument("--quick", action="store_true", help=f"a smoke run ({QUICK_ROUNDS} rounds)")
    ap.add_argument("--no-baseline", action="store_true", help="only the new firmware")
    ap.add_argument("--seed", type=int, default=SEED, help=f"the model's seed (default {SEED})")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="harness runs in parallel (default: CPUs)")
    ap.add_argument("--keep", type=Path, help="also write the scenario files and truth.json here")
    ap.add_argument("--warmup", action="store_true",
                    help="each table starts with a warm-up (every player slaps alone once; not judged), "
                         "as players try their pads: what the box learns of the table from it")
    ap.add_argument("--warmup-slaps", type=int, default=1, metavar="N",
                    help=f"with --warmup: each player slaps alone N times round (1..{table_model.WARMUP_SLAPS_MAX}, default 1); "
                         "2 as the table screen's check-in asks; 3 teach the box about half the discs' polarities")
    ap.add_argument("--table-rounds", type=int, metavar="N",
                    help=f"each table plays N rounds (1..{table_model.TABLE_ROUNDS_MAX}) instead of ~6: long "
                         "tables, a box that has played on its table for a while (a slow drift shows there)")
    ap.add_argument("--frontend-gain", type=float, metavar="G", default=table_model.FRONTEND_GAIN,
                    help="the new firmware's input through a capacitor across each disc, gain G (0 < G <= 1, each "
                         "pad's within its disc's tolerance; the hardest cases too; default "
                         f"{table_model.FRONTEND_GAIN}, docs/wiring.md's CP since firmware 2.22.0). The old "
                         "firmware's halfwave input has no capacitor and ignores it")
    ap.add_argument("--no-frontend-gain", dest="frontend_gain", action="store_const", const=None,
                    help="no capacitor across the discs (the wiring before firmware 2.22.0, whose thresholds "
                         "were sized for it: build such a firmware to compare)")
    ap.add_argument("--host", action="store_true",
                    help="run the detection core on the host (firmware/sim/hostrun.c: fast, an approximate "
                         "schedule of samples, no scan figures) instead of the image in simavr")
    ap.add_argument("--adclogs", type=Path, metavar="DIR",
                    help="with the image: keep the times the new image took each sample in DIR "
                         "(<file>.adclog); with --host: take each sample at those times instead "
                         "(hostrun --adclog), so two detection cores are judged on the very same samples")
    ap.add_argument("--slot-us", type=float, default=None,
                    help="with --host: microseconds a sample slot (hostrun's default 18.5, the image's sampler on a quiet table)")
    ap.add_argument("--seeds", type=_seed_list, metavar="S1,S2,...",
                    help="run each of these seeds in turn (each one's table as with --seed), then their sums: "
                         "an image change moves a seed's counts by ten to thirty with its sample timing alone")
    ap.add_argument("--draw", type=int, default=0, metavar="K",
                    help="build the new image with K cycles more at each scan's end (make DRAW=K): the same "
                         "detection, another draw of the sample timing in bursts; run draws 0, 1, 2 ... to see "
                         "how far the counts move with timing alone (firmware/README.md, \"Draws\")")
    args = ap.parse_args(argv or [])
    if args.draw < 0 or args.draw > 255:
        ap.error("--draw: 0 to 255 cycles")
    if args.draw and args.host:
        ap.error("--draw builds the image: the host's core has no sample timing to draw (drop --host)")
    if args.seeds:
        if args.keep:
            ap.error("--seeds and --keep: keep one seed's scenarios at a time (--seed)")
        return _over_seeds(args.seeds, _without_seeds(argv or []), args.adclogs)
    if args.slot_us is not None and (not args.host or args.slot_us <= 0):
        ap.error("--slot-us needs --host and a positive number of microseconds")
    if args.adclogs is not None and args.slot_us is not None:
        ap.error("--adclogs and --slot-us: the samples are taken either at the logged times or every slot")
    quick = args.quick or is_quick()
    rounds = args.rounds or (QUICK_ROUNDS if quick else DEFAULT_ROUNDS)
    started = time.perf_counter()
    most = table_model.WARMUP_SLAPS_MAX
    if not 1 <= args.warmup_slaps <= most or (args.warmup_slaps != 1 and not args.warmup):
        ap.error(f"--warmup-slaps needs --warmup and a count within 1..{most}")
    if args.frontend_gain is not None and not 0.0 < args.frontend_gain <= 1.0:
        ap.error("--frontend-gain: more than 0 and at most 1")
    try:
        files = table_model.generate(rounds, args.seed, warmup=args.warmup, warmup_slaps=args.warmup_slaps,
                                     table_rounds=args.table_rounds, frontend_gain=args.frontend_gain)
    except ValueError as exc:  # (--table-rounds out of range: generate() says which range)
        ap.error(f"--table-rounds: {exc}")
    drawn: dict[str, Any] = {"rounds": rounds, "seed": args.seed, "warmup": args.warmup}
    if args.warmup_slaps != 1:  # (only then: adclog dirs made before --warmup-slaps still match)
        drawn["warmup_slaps"] = args.warmup_slaps
    if args.table_rounds:  # (likewise)
        drawn["table_rounds"] = args.table_rounds
    if args.frontend_gain is not None:  # (likewise)
        drawn["frontend_gain"] = args.frontend_gain
    cases = table_model.hardest_cases(args.frontend_gain)
    with tempfile.TemporaryDirectory(prefix="padbox-detect-") as tmp_s:
        tmp = Path(tmp_s)
        scn_dir = tmp / "scenarios"
        for where in [scn_dir, *([args.keep] if args.keep else [])]:
            table_model.write(files, where, seed=args.seed, rounds=rounds)
            table_model.write_cases(where, cases)
        by_name = {sf.name: sf for sf in [*files, *cases]}
        order = sorted(by_name.values(), key=lambda sf: -sf.duration_us)  # the longest first: the pool ends together
        if args.host:
            binary = simtools.build_hostrun(tmp)  # (HOSTCC from the environment, as make takes it)
            fws = [Firmware("host", "working tree firmware/padbox/detect.c on the host", None, "biased")]
            slot = ["--slot-us", str(args.slot_us)] if args.slot_us else []
            if args.adclogs:
                made = args.adclogs / "rounds.json"
                if not made.is_file() or json.loads(made.read_text()) != drawn:
                    ap.error(f"--adclogs: {args.adclogs} holds no image run of these rounds ({drawn}): run the "
                             f"image once with the same options and --adclogs {args.adclogs} (without --host)")
                logs = {sf.name: args.adclogs / f"{sf.name}.adclog" for sf in order}
                missing = [str(p) for p in logs.values() if not p.is_file()]
                if missing:
                    ap.error(f"--adclogs: no log of the image's samples for {len(missing)} file(s), e.g. "
                             f"{missing[0]}: run the image once with the same --seed, --rounds, --warmup(-slaps) and "
                             f"--adclogs {args.adclogs} (without --host)")
                tasks_host = [("host", str(binary), ["--adclog", str(logs[sf.name]), str(scn_dir / f"{sf.name}.scn")])
                              for sf in order]
            else:
                tasks_host = host_tasks(binary, [str(scn_dir / f"{sf.name}.scn") for sf in order], args.jobs, slot)
        else:
            fws = _build(tmp, baseline=not args.no_baseline, draw=args.draw)
        built = time.perf_counter()
        if args.adclogs and not args.host:
            args.adclogs.mkdir(parents=True, exist_ok=True)
            (args.adclogs / "rounds.json").write_text(json.dumps(drawn) + "\n")  # (what the logs are of)
        tasks = [] if args.host else [
            (fw.label, str(fw.build.elf), str(fw.build.harness), str(scn_dir / f"{sf.name}.scn"), fw.frontend,
             str(tmp / "runs"), *([str(args.adclogs / f"{sf.name}.adclog")] if args.adclogs and fw.label == "new" else []))
            for sf in order for fw in fws]
        main_t = {fw.label: Tally() for fw in fws}
        hum_t = {fw.label: Tally() for fw in fws}
        case_t: dict[str, dict[str, Tally]] = {fw.label: {sf.name: Tally() for sf in cases} for fw in fws}
        sim_s: Counter = Counter()
        def results() -> Any:
            with multiprocessing.Pool(max(1, args.jobs)) as pool:
                if args.host:
                    for batch in pool.imap_unordered(_run_host, tasks_host):
                        yield from batch
                else:
                    yield from pool.imap_unordered(_run_file, tasks)

        for label, name, hits, report, refused, secs in results():
            sim_s[label] += secs
            sf = by_name[name]
            tally = hum_t[label] if name == HUM_CASE else case_t[label][name] if name in case_t[label] \
                else main_t[label]
            tally.refused += refused
            tally.judge_file(sf, hits, report)
        sizes = {fw.label: simtools.avr_size(fw.build.elf) if fw.build else {"flash": 0, "ram": 0} for fw in fws}
        bss = {fw.label: simtools.bss_end(fw.build.elf) if fw.build else 0 for fw in fws}
        table = build_table(fws, main_t, hum_t, case_t, sizes, bss)
    wall = time.perf_counter() - started
    report = DetectionReport("padbox_detection", params={
        "rounds": rounds, "files": len(files), "seed": args.seed, "players": "2-8",
        **({"table_rounds": args.table_rounds} if args.table_rounds else {}),
        "firmwares": "; ".join(f"{fw.label} = {fw.what} on the {fw.frontend} input" for fw in fws),
        "wall_s": round(wall, 1), "build_s": round(built - started, 1),
        "harness_cpu_s": {k: round(v, 1) for k, v in sim_s.items()}, "jobs": args.jobs,
    })
    report.table = table
    _figures(report, fws, main_t, hum_t, sizes)
    for fw in fws:
        for name, tally in [(HUM_CASE, hum_t[fw.label]), *case_t[fw.label].items()]:
            if tally.examples:
                report.params[f"{fw.label}.{name}.examples"] = dict(tally.examples)
    report.notes.append(f"hits matched to contacts on their pad within {MATCH_US} us (presses: plus twice their rise)")
    report.notes.append("onset error = reported onset - the moment of contact; the crossing row compares with the "
                        "moment the contact's own waveform plus hum reaches the touch threshold")
    report.notes.append("the old firmware runs on the half-wave input (the wiring it was made for); "
                        "the new one on the biased input; the same waveforms")
    report.write()
    return report


def _seed_list(text: str) -> list[int]:
    """``--seeds``: whole numbers, comma-separated."""
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds are whole numbers separated by commas, got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError("give at least one seed")
    return seeds


def _without_seeds(argv: Sequence[str]) -> list[str]:
    """The command line less ``--seeds``, ``--seed`` and ``--adclogs`` (and their values)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--seeds", "--seed", "--adclogs"):
            skip = True
            continue
        if a.startswith(("--seeds=", "--seed=", "--adclogs=")):
            continue
        out.append(a)
    return out


#: The figures summed over seeds (counts; the rest are per seed only).
SUMMED = ("slaps", "slaps_dropped", "slaps_as_touch", "false_slaps", "false_slaps_before_player", "false_touches",
          "order_wrong",
          "verdict_first_wrong", "verdict_last_wrong")


def _over_seeds(seeds: Sequence[int], argv: list[str], adclogs: Path | None) -> Report:
    """Run main() once per seed (``--adclogs DIR``: DIR/seed_<S> each), then a report of the counts summed."""
    per: dict[int, Report] = {}
    for seed in seeds:
        extra = ["--seed", str(seed)] + (["--adclogs", str(adclogs / f"seed_{seed}")] if adclogs else [])
        per[seed] = main([*argv, *extra])
    labels = sorted({k.split(".")[0] for r in per.values() for k in r.figures})
    report = Report("padbox_detection_seeds", params={"seeds": list(seeds), "argv": " ".join(argv)})
    for label in labels:
        for key in SUMMED:
            values = [r.figures[f"{label}.{key}"]["value"] for r in per.values() if f"{label}.{key}" in r.figures]
            if values:
                report.figure(f"{label}.{key}", sum(values), "sum", " + ".join(f"{v:g}" for v in values))
    report.notes.append("each seed's own table is printed above it; counts here are summed over the seeds")
    report.write()
    return report


def _figures(report: Report, fws: Sequence[Firmware], main_t: dict[str, Tally], hum_t: dict[str, Tally],
             sizes: dict[str, dict[str, int]]) -> None:
    """The JSON figures: the headline numbers per firmware, and a few examples of each failure."""
    hands = ("sharp", "normal", "soft")
    for fw in fws:
        c, h = main_t[fw.label], hum_t[fw.label]
        pre = fw.label
        report.figure(f"{pre}.slaps", sum(c.slaps[(x, "total")] for x in hands), "slaps", "real slaps")
        report.figure(f"{pre}.slaps_dropped", sum(c.slaps[(x, "dropped")] for x in hands), "slaps", "no hit [target 0]")
        report.figure(f"{pre}.slaps_as_touch", sum(c.slaps[(x, "as_touch")] for x in hands), "slaps",
                      "reported as touch [target 0]")
        report.figure(f"{pre}.touches_missed", c.touches["missed"] + c.touches["as_slap"], "touches",
                      f"missed or reported as slap, of {c.touches['total']}")
        report.figure(f"{pre}.false_slaps", sum(v for (k, _), v in c.false.items() if k == "S"), "hits", "[target 0]")
        report.figure(f"{pre}.false_slaps_before_player", c.false_before_player, "hits",
                      "false slaps on a player's pad before his own slap (what can mislead the referee)")
        report.figure(f"{pre}.false_touches", sum(v for (k, _), v in c.false.items() if k == "T"), "hits",
                      "[target 0]")
        report.figure(f"{pre}.hum_false_hits", sum(h.false.values()), "hits", "10 s of hum [target 0]")
        m, p99, worst = _stats(c.errors["all"])
        report.figure(f"{pre}.onset_err_median", m, "us", "reported - contact")
        report.figure(f"{pre}.onset_err_p99", p99, "us", "|reported - contact| [target <= 150]")
        report.figure(f"{pre}.onset_err_worst", worst, "us", "[target |worst| <= 300]")
        report.figure(f"{pre}.order_wrong", c.pairs["wrong"], "pairs", f"of {c.pairs['total']} >= 0.5 ms apart")
        report.figure(f"{pre}.verdict_first_wrong", c.verdicts["first wrong"], "rounds",
                      f"of {c.verdicts['first judged']}")
        report.figure(f"{pre}.verdict_last_wrong", c.verdicts["last wrong"], "rounds",
                      f"of {c.verdicts['last judged']}")
        if fw.build is not None:  # (the image's alone: the host has no sampler or memory map)
            report.figure(f"{pre}.scan_p99_worst", max(s[2] for s in c.scans), "us", "[target <= 150]")
            report.figure(f"{pre}.gap_max", max(s[3] for s in c.scans), "us", "[target <= 250]")
            if c.latency_max_us >= 0:
                report.figure(f"{pre}.hit_latency_max", c.latency_max_us / 1000, "ms", "a HIT line after its onset")
            report.figure(f"{pre}.flash", sizes[fw.label]["flash"], "bytes", "text + data")
            report.figure(f"{pre}.ram", sizes[fw.label]["ram"], "bytes", "data + bss")
        report.runs[f"{pre}.onset_err_us"] = c.errors["all"]
        report.params[f"{pre}.examples"] = dict(c.examples)


if __name__ == "__main__":
    main(sys.argv[1:])

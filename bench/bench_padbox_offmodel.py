"""Pad box detection on tables the table model does not cover.

bench_padbox_detection judges the detection on the table model's random
rounds (firmware/sim/table_model.py, MODEL.md), and the detection was
tuned on them: a real table may differ. Each condition below changes the
model in one way (its module monkeypatched while the rounds are drawn,
restored afterwards, so conditions never leak into each other), draws
the same seed's rounds, runs them through the detection core on the host
(firmware/sim/hostrun.c) and, with ``--image``, through the real image
in simavr, and judges them with bench_padbox_detection's own Tally (its
matching, counting and verdicts). One table: a row per condition, the
model as it is (baseline) first. The bench reports; it asserts nothing.

    python -m bench.bench_padbox_offmodel [--rounds 300] [--quick] [--image] [--only NAME,...] [--seed S] [--jobs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script
    sys.path.insert(0, str(REPO))

from bench import bench_padbox_detection as detection  # noqa: E402
from bench.common import Report, is_quick  # noqa: E402

simtools = detection.simtools
tm = detection.table_model  # the very module the detection bench draws and judges with
SEED = detection.SEED
DEFAULT_ROUNDS = 300
QUICK_ROUNDS = 40
HANDS = ("sharp", "normal", "soft")


# ------------------------------------------------------------------ conditions


@contextlib.contextmanager
def patched(obj: Any, **attrs: Any) -> Iterator[None]:
    """Set attributes of ``obj`` for the duration of the block; the old values come back even on an error."""
    old = {k: getattr(obj, k) for k in attrs}  # (getattr first: a misspelt name fails instead of adding one)
    try:
        for k, v in attrs.items():
            setattr(obj, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(obj, k, v)


def _materials(**over: Any) -> dict[str, Any]:
    """Every table top with some fields replaced."""
    return {k: tm.Material(**{**m.__dict__, **over}) for k, m in tm.MATERIALS.items()}


@contextlib.contextmanager
def baseline(seed: int) -> Iterator[None]:
    """The model as it is: the detection bench's rounds (its default parameters)."""
    yield


@contextlib.contextmanager
def close_pads(seed: int, nearest_m: float = 0.25) -> Iterator[None]:
    """Pads closer together (a small table, or pads placed towards the middle): the seats scaled about the
    table's centre so the closest two are 0.25 m apart (the model's 0.46). The decay length is the top's and
    stays: pads across the table now get more of each other, and shakes arrive sooner."""
    f = nearest_m / tm.NEAR_DISTANCE_M
    cx, cy = tm.TABLE_LENGTH_M / 2, tm.TABLE_WIDTH_M / 2
    pos = tuple((round(cx + (x - cx) * f, 4), round(cy + (y - cy) * f, 4)) for x, y in tm.PAD_POSITIONS_M)
    with patched(tm, PAD_POSITIONS_M=pos):
        # (the coupling law is anchored at the nearest pair: recomputed from the new seats)
        near = min(tm.distance_m(i, j) for i in range(1, tm.PADS + 1) for j in range(1, tm.PADS + 1) if i != j)
        with patched(tm, NEAR_DISTANCE_M=near):
            yield


@contextlib.contextmanager
def fast_top(seed: int) -> Iterator[None]:
    """A stiffer top than the model's: bending waves at 1500-2500 m/s (the model's 500-1500). A shake reaches
    the nearest pad 180-300 us after its slap: the nearest pads' delays shrink to one or two scans."""
    with patched(tm, MATERIALS=_materials(speed_m_s=(1500, 2500))):
        yield


@contextlib.contextmanager
def close_fast(seed: int) -> Iterator[None]:
    """Both: the closest pads 0.25 m apart on a 1500-2500 m/s top, shakes 100-167 us after their slap."""
    with close_pads(seed), fast_top(seed):
        yield


@contextlib.contextmanager
def strong_coupling(seed: int) -> Iterator[None]:
    """A lively top (thin, light, on a frame that carries vibration well): the nearest pads get 0.40-0.50 of
    each other (the model's 0.13-0.38). The cap (COUPLING_MAX 0.40) would clip that: raised with it to 0.50;
    a hot pair (a brace under two pads) stays hotter than the rest."""
    with patched(tm, NEAR_COUPLING=(0.40, 0.50), COUPLING_MAX=0.50, HOT_COUPLING=(0.52, 0.55)):
        yield


@contextlib.contextmanager
def low_long_ring(seed: int) -> Iterator[None]:
    """A top that rings low and long (a large thin panel, a door on trestles): 800-1200 Hz for 5-8 ms (the
    model's 1.5-3 kHz for 2-4 ms). The crosstalk's frequency and decay are clamped to XT_HZ_RANGE /
    XT_TAU_RANGE_US: widened too, else the clamp would put the model's back."""
    with patched(tm, MATERIALS=_materials(ring_hz=(800, 1200), ring_tau_us=(5000, 8000)),
                 XT_HZ_RANGE=(700, 1400), XT_TAU_RANGE_US=(4000, 9000)):
        yield


@contextlib.contextmanager
def hum_drift(seed: int) -> Iterator[None]:
    """Bad electrics everywhere: 60 Hz hum of 300-350 mV on every file (the model's worst band, on a fifth
    of its files) and a DC drift of 300-700 mV with a period of 0.5-2 s (a bias network drifting with heat or
    charge, a cable moved): the rest point wanders by up to 0.7 V."""
    with patched(tm, HUM_BANDS=((1.0, (300, 350)),), HUM_HZ=(60, 60), DRIFT_MV=(300, 700),
                 DRIFT_PERIOD_US=(500_000, 2_000_000)):
        yield


@contextlib.contextmanager
def soft_reversed(seed: int) -> Iterator[None]:
    """Gentle players on a box whose discs are all wired the other way: every slap 1.2-2.5 V whatever the
    hand (the loud neighbours of the model's special rounds too), every disc reversed."""
    hands = dict(tm.HANDS)
    for k in ("sharp", "normal", "soft"):
        hands[k] = tm.Hand(k, hands[k].rise_us, (1200, 2500), "slap")
    hands["press"] = tm.Hand("press", hands["press"].rise_us, (1200, 2500), "press")
    with patched(tm, HANDS=hands, LOUD_MV=(1200, 2500), REVERSED_P=1.0):
        yield


@contextlib.contextmanager
def smeared_crosstalk(seed: int) -> Iterator[None]:
    """Crosstalk arrives smeared: bending waves are dispersive (a wavefront's low frequencies lag) and soft foam
    under a pad low-passes what it passes on. The model's 100-200 us crosstalk rise becomes 250-450 us (a first
    half-wave of 0.5-0.9 ms: as long as a normal hand's push)."""
    with patched(tm, XT_RISE_US=(250, 450)):
        yield


@contextlib.contextmanager
def xt_follows_force(seed: int, share: tuple[float, float] = (0.5, 0.8)) -> Iterator[None]:
    """The neighbour's crosstalk follows the source hand's force: its rise is at least 0.5-0.8 x the source's
    rise (a normal hand's 300-700 us gives 150-560 us; the model's 100-200 us is kept where longer). The table
    is a (dispersive) filter of the hand's force, not a fixed sharp impulse (MODEL.md, Simplified). Presses
    keep the model's crosstalk."""
    orig = tm.crosstalk_from
    rng = random.Random(seed ^ 0xF0CE)  # its own draws: the model's sequence is left as the baseline's

    def crosstalk_from(model_rng: random.Random, table: Any, c: Any, hot: Any = None) -> list[Any]:
        out: list[Any] = orig(model_rng, table, c, hot)
        if c.hand != "press":
            for x in out:
                x.rise_us = max(x.rise_us, round(c.rise_us * rng.uniform(*share)))
        return out

    with patched(tm, crosstalk_from=crosstalk_from):
        yield


def _point_coupling(table: Any, p: tuple[float, float], j: int) -> tuple[float, float]:
    """(distance m, coupling) from a point on the table to pad j, by the model's law (only the pad's foam)."""
    x, y = tm.PAD_POSITIONS_M[j - 1]
    d = math.hypot(x - p[0], y - p[1])
    return d, table.coupling_over(d, table.foam[j - 1])


@contextlib.contextmanager
def table_knocks(seed: int, p_round: float = 0.15) -> Iterator[None]:
    """A player misses the pad and slaps the bare table (or bangs a fist or a cup down): in 15 % of rounds a
    3-12 V-equivalent sharp hit on the top 0.15-0.4 m from the nearest pad, within the round's spread. Every
    pad gets the model's crosstalk from that point, but no pad has a contact: every hit it causes is false."""
    orig = tm.draw_round
    rng = random.Random(seed ^ 0x7AB1E)

    def draw_round(model_rng: random.Random, table: Any, elec: Any, index: int, start_us: int,
                   players: tuple[int, int] = (2, 8)) -> Any:
        rnd = orig(model_rng, table, elec, index, start_us, players)
        if rng.random() >= p_round:
            return rnd
        for _ in range(200):  # a point 0.15-0.4 m from the nearest pad (the last draw if none is found)
            p = (rng.uniform(0.1, tm.TABLE_LENGTH_M - 0.1), rng.uniform(0.08, tm.TABLE_WIDTH_M - 0.08))
            if 0.15 <= min(math.hypot(x - p[0], y - p[1]) for x, y in tm.PAD_POSITIONS_M) <= 0.40:
                break
        amp = rng.randint(3000, 12000)
        t = min(c.t_us for c in rnd.contacts) + rng.randint(0, tm.SPREAD_US)
        for j in range(1, tm.PADS + 1):
            d, k = _point_coupling(table, p, j)
            # Drawn before the floor test, as crosstalk_from does: the floor never shifts the sequence.
            rise, ring = rng.randint(*tm.XT_RISE_US), round(rng.uniform(*tm.XT_RING), 2)
            hz = round(table.ring_hz * rng.uniform(0.9, 1.1))
            tau = round(table.ring_tau_us * rng.uniform(0.9, 1.1))
            if amp * k < tm.XT_FLOOR_MV:
                continue
            delay = round(d / table.speed_m_s * 1e6)
            rnd.crosstalk.append(tm.Crosstalk(pad=j, t_us=t + delay, from_pad=0, delay_us=delay, coupling=round(k, 3),
                                              peak_mv=round(amp * k), rise_us=rise, ring_hz=hz, ring=ring, tau_us=tau,
                                              pol=rng.choice((-1, 1))))
        rnd.case += f"+table_slap({p[0]:.2f},{p[1]:.2f} m, {amp} mV at {t})"
        rnd.mark_shaken()
        return rnd

    with patched(tm, draw_round=draw_round):
        yield


@contextlib.contextmanager
def edge_echoes(seed: int, reflect: tuple[float, float] = (0.5, 0.8)) -> Iterator[None]:
    """The vibration also reaches each pad reflected off the table's four edges (a free edge reflects bending
    waves strongly; the model has one direct path). Each image path: delay = its length / c, coupling by the
    model's law over its length times a reflection factor 0.5-0.8. Echoes within 60 us of the direct wave
    (they would merge with it) or under 60 mV are left out."""
    orig = tm.crosstalk_from
    rng = random.Random(seed ^ 0xEC40)

    def crosstalk_from(model_rng: random.Random, table: Any, c: Any, hot: Any = None) -> list[Any]:
        out: list[Any] = orig(model_rng, table, c, hot)
        xs, ys = tm.PAD_POSITIONS_M[c.pad - 1]
        length, width = tm.TABLE_LENGTH_M, tm.TABLE_WIDTH_M
        images = [(-xs, ys), (2 * length - xs, ys), (xs, -ys), (xs, 2 * width - ys)]
        for x in list(out):
            xj, yj = tm.PAD_POSITIONS_M[x.pad - 1]
            d0 = math.hypot(xs - xj, ys - yj)
            for ix, iy in images:
                d = math.hypot(ix - xj, iy - yj)
                r = rng.uniform(*reflect)
                k = table.coupling_over(d, table.foam[c.pad - 1], table.foam[x.pad - 1]) * r
                peak = c.peak_mv * k * (tm.PRESS_XTALK if c.hand == "press" else 1.0)
                extra = round((d - d0) / table.speed_m_s * 1e6)
                if peak < 60 or extra < 60:
                    continue
                out.append(tm.Crosstalk(pad=x.pad, t_us=x.t_us + extra, from_pad=c.pad, delay_us=x.delay_us + extra,
                                        coupling=round(k, 3), peak_mv=round(peak), rise_us=x.rise_us,
                                        ring_hz=x.ring_hz, ring=x.ring, tau_us=x.tau_us, pol=rng.choice((-1, 1))))
        return out

    with patched(tm, crosstalk_from=crosstalk_from):
        yield


@dataclass(frozen=True)
class Condition:
    """One way a table may differ from the model: a name, one line of what, and the patch (given the seed)."""

    name: str
    what: str
    patch: Callable[[int], AbstractContextManager[None]]


CONDITIONS: tuple[Condition, ...] = (
    Condition("baseline", "the bench's model, default parameters", baseline),
    Condition("close_pads", "seats scaled: nearest pads 0.25 m (was 0.46), same tops (500-1500 m/s)", close_pads),
    Condition("close_fast", "nearest 0.25 m on a 1500-2500 m/s top: nearest delays 100-167 us", close_fast),
    Condition("fast_top", "bending waves 1500-2500 m/s (was 500-1500)", fast_top),
    Condition("strong_coupling", "near coupling 0.40-0.50 (was 0.13-0.38), cap 0.50 (was 0.40)", strong_coupling),
    Condition("low_long_ring", "table rings 800-1200 Hz (was 1.5-3 kHz), tau 5-8 ms (was 2-4)", low_long_ring),
    Condition("hum_drift", "60 Hz hum 300-350 mV on every file, DC drift 300-700 mV over 0.5-2 s", hum_drift),
    Condition("soft_reversed", "every slap 1.2-2.5 V, every disc reversed", soft_reversed),
    Condition("smeared_xt", "crosstalk rise 250-450 us (dispersion / soft foam), was 100-200", smeared_crosstalk),
    Condition("xt_follows_force", "crosstalk rise >= 0.5-0.8 x the source hand's rise (was 100-200 us)",
              xt_follows_force),
    Condition("table_knocks", "15 % of rounds: a 3-12 V slap on the bare table 0.15-0.4 m from a pad", table_knocks),
    Condition("edge_echoes", "crosstalk also reflected off the 4 table edges (x0.5-0.8)", edge_echoes),
)


# ------------------------------------------------------------------ generation


def _tables(files: Sequence[Any]) -> str:
    """What the drawn tables look like: the nearest and farthest pairs' delays and couplings."""
    pairs = [(i, j) for i in range(1, tm.PADS + 1) for j in range(i + 1, tm.PADS + 1)]
    near = min(pairs, key=lambda p: tm.distance_m(*p))
    far = max(pairs, key=lambda p: tm.distance_m(*p))
    nd = [sf.table.delay_us(*near) for sf in files]
    ks = [sf.table.coupling(*near) for sf in files]
    fd = [sf.table.delay_us(*far) for sf in files]
    return (f"{len(files)} files; nearest pads {tm.distance_m(*near):.3f} m, delay {min(nd)}-{max(nd)} us, "
            f"k {min(ks):.2f}-{max(ks):.2f}; farthest {tm.distance_m(*far):.2f} m, delay {min(fd)}-{max(fd)} us")


def generate(cond: Condition, rounds: int, seed: int, dirs: Sequence[Path]) -> tuple[list[Any], str]:
    """The condition's rounds, written (scenarios and truth.json) into each of ``dirs``, and a line on their tables."""
    before = dict(vars(tm))
    with cond.patch(seed):
        files: list[Any] = tm.generate(rounds, seed)
        for d in dirs:  # (inside: a file's comments and the distances read the patched model)
            tm.write(files, d, seed=seed, rounds=rounds, condition=cond.name)
        tables = _tables(files)
    leaked = sorted(k for k, v in before.items() if getattr(tm, k, None) is not v)
    if leaked:
        raise RuntimeError(f"{cond.name} left the table model patched: {', '.join(leaked)}")
    return files, tables


# ------------------------------------------------------------------ running and judging


def _longest_first(files: Sequence[Any], d: Path) -> list[str]:
    """The scenario paths, the longest file first (so the pool's workers end together)."""
    return [str(d / f"{sf.name}.scn") for sf in sorted(files, key=lambda sf: -sf.duration_us)]


def run_host(pool: Pool, hostrun: Path, files: Sequence[Any], d: Path, jobs: int) -> dict[str, list[Any]]:
    """Each file's hits from the detection core on the host (bench_padbox_detection's worker, a few files a call)."""
    tasks = detection.host_tasks(hostrun, _longest_first(files, d), jobs)
    return {name: hits for batch in pool.imap_unordered(detection._run_host, tasks)
            for _, name, hits, _, _, _ in batch}


def run_image(pool: Pool, build: Any, files: Sequence[Any], d: Path, runs: Path) -> dict[str, tuple[list[Any], dict[str, int], int]]:
    """Each file's hits, harness report and refused lines from the image in simavr (the biased input)."""
    tasks = [("image", str(build.elf), str(build.harness), scn, "biased", str(runs)) for scn in _longest_first(files, d)]
    return {name: (hits, report, refused)
            for _, name, hits, report, refused, _ in pool.imap_unordered(detection._run_file, tasks)}


def judge(files: Sequence[Any], hits: dict[str, list[Any]],
          reports: dict[str, dict[str, int]] | None = None) -> Any:
    """bench_padbox_detection's Tally of the files."""
    t = detection.Tally()
    for sf in files:
        t.judge_file(sf, hits.get(sf.name, []), (reports or {}).get(sf.name, {}))
    return t


def figures(t: Any) -> dict[str, float]:
    """The figures of one run of one condition (the table's, and a few more for the JSON)."""
    return {
        "slaps": sum(t.slaps[(h, "total")] for h in HANDS),
        "dropped": sum(t.slaps[(h, "dropped")] for h in HANDS),
        "as_touch": sum(t.slaps[(h, "as_touch")] for h in HANDS),
        "false_slaps": sum(v for (k, _), v in t.false.items() if k == "S"),
        "false_touches": sum(v for (k, _), v in t.false.items() if k == "T"),
        "onset_p99": detection._stats(t.errors["all"])[1],
        "pairs_wrong": t.pairs["wrong"],
        "pairs_missing": t.pairs["missing"],
        "first_wrong": t.verdicts["first wrong"],
        "first_judged": t.verdicts["first judged"],
        "last_wrong": t.verdicts["last wrong"],
        "last_judged": t.verdicts["last judged"],
        "fifo_overflows": t.restarts,
        "refused": t.refused,
    }


UNITS = {"slaps": "slaps", "dropped": "slaps", "as_touch": "slaps", "false_slaps": "hits", "false_touches": "hits",
         "onset_p99": "us", "pairs_wrong": "pairs", "pairs_missing": "pairs", "first_wrong": "rounds",
         "first_judged": "rounds", "last_wrong": "rounds", "last_judged": "rounds", "fifo_overflows": "times",
         "refused": "lines"}
#: The table's columns: (figure, heading); verdicts carry the rounds judged.
COLUMNS = (("dropped", "dropped"), ("false_slaps", "false S"), ("false_touches", "false T"),
           ("onset_p99", "onset p99 us"), ("pairs_wrong", "pairs wrong"), ("first_wrong", "first wrong"),
           ("last_wrong", "last wrong"))


def _num(v: float) -> str:
    return "-" if isinstance(v, float) and math.isnan(v) else f"{v:.0f}"


def table(rows: dict[str, dict[str, dict[str, float]]], runners: Sequence[str]) -> str:
    """One row per condition; each cell the runners' figures (host / image)."""
    head = ["condition", "slaps", *(h for _, h in COLUMNS)]
    lines = []
    for cond, by_runner in rows.items():
        first = by_runner[runners[0]]
        cells = [cond, _num(first["slaps"])]
        for key, _ in COLUMNS:
            cell = " / ".join(_num(by_runner[r][key]) for r in runners)
            if key in ("first_wrong", "last_wrong"):
                cell += f" of {_num(first[key.replace('wrong', 'judged')])}"
            cells.append(cell)
        lines.append(cells)
    widths = [max(len(x) for x in col) for col in zip(head, *lines)]
    out = [f"each cell: {' / '.join(runners)}" if len(runners) > 1 else f"run: {runners[0]}"]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *lines]]
    return "\n".join(out)


# ------------------------------------------------------------------ main


def _build(tmp: Path, image: bool) -> tuple[Path, Any]:
    """hostrun and, with ``image``, the image and its harness, built from this tree's firmware/ into ``tmp``."""
    hostrun = simtools.build_hostrun(tmp)
    try:
        return hostrun, simtools.build(tmp / "image") if image else None
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"the working tree's firmware does not build:\n{exc.stdout}\n{exc.stderr}") from exc


def main(argv: list[str] | None = None) -> Report:
    """Run the bench (``argv``: the command line; None when run by ``python -m bench``)."""
    names = [c.name for c in CONDITIONS]
    ap = argparse.ArgumentParser(prog="python -m bench.bench_padbox_offmodel", description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=None, help=f"random rounds per condition (default {DEFAULT_ROUNDS})")
    ap.add_argument("--quick", action="store_true", help=f"a smoke run ({QUICK_ROUNDS} rounds per condition)")
    ap.add_argument("--image", action="store_true", help="also run the image in simavr (minutes)")
    ap.add_argument("--only", default="", help=f"comma-separated conditions (the baseline always runs): {', '.join(names[1:])}")
    ap.add_argument("--seed", type=int, default=SEED, help=f"the model's seed (default {SEED})")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs in parallel (default: CPUs)")
    ap.add_argument("--keep", type=Path, help="also write each condition's scenario files and truth.json in DIR/<condition>")
    args = ap.parse_args(argv or [])
    only = [n for n in args.only.split(",") if n]
    if unknown := [n for n in only if n not in names]:
        ap.error(f"no condition {', '.join(unknown)}; there are {', '.join(names)}")
    chosen = [c for c in CONDITIONS if not only or c.name == "baseline" or c.name in only]
    rounds = args.rounds or (QUICK_ROUNDS if args.quick or is_quick() else DEFAULT_ROUNDS)
    runners = ["host", "image"] if args.image else ["host"]
    if missing := simtools.missing_tools(simulator=args.image):
        raise RuntimeError(f"missing: {', '.join(missing)}")
    started = time.perf_counter()
    rows: dict[str, dict[str, dict[str, float]]] = {}
    report = detection.DetectionReport("padbox_offmodel")
    with tempfile.TemporaryDirectory(prefix="padbox-offmodel-") as tmp_s, \
            multiprocessing.Pool(max(1, args.jobs)) as pool:
        tmp = Path(tmp_s)
        hostrun, build = _build(tmp, args.image)
        for cond in chosen:
            t0 = time.perf_counter()
            d = tmp / "sets" / cond.name
            files, tables = generate(cond, rounds, args.seed, [d, *([args.keep / cond.name] if args.keep else [])])
            tallies = {"host": judge(files, run_host(pool, hostrun, files, d, args.jobs))}
            if build is not None:
                got = run_image(pool, build, files, d, tmp / "runs" / cond.name)
                tallies["image"] = judge(files, {k: v[0] for k, v in got.items()}, {k: v[1] for k, v in got.items()})
                tallies["image"].refused = sum(v[2] for v in got.values())
            rows[cond.name] = {r: figures(t) for r, t in tallies.items()}
            for r, t in tallies.items():
                for key, value in rows[cond.name][r].items():
                    report.figure(f"{r}.{cond.name}.{key}", value, UNITS[key], cond.what)
                report.params[f"{r}.{cond.name}.examples"] = dict(t.examples)
            report.notes.append(f"{cond.name}: {cond.what}. {tables}")
            print(f"  {cond.name}: {time.perf_counter() - t0:.1f} s", flush=True)
    report.params = {"rounds": rounds, "seed": args.seed, "runs": " + ".join(runners), "jobs": args.jobs,
                     "wall_s": round(time.perf_counter() - started, 1), **report.params}
    report.table = table(rows, runners)
    report.notes.append("judged by bench_padbox_detection's Tally: hits matched to contacts on their pad within "
                        f"{detection.MATCH_US} us; pairs >= {detection.ORDER_MIN_GAP_US} us apart; verdicts where the "
                        f"deciding gap is >= {detection.VERDICT_MIN_GAP_US} us (the last slapper by the referee's rule)")
    if args.image:
        overflows = sum(rows[c]["image"]["fifo_overflows"] for c in rows)
        report.notes.append(f"image: {overflows} sample FIFO overflows in all conditions")
    report.write()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])

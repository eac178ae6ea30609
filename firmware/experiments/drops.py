"""Why the host's core drops the real slaps it drops: which could timing alone have saved.

    python3 firmware/experiments/drops.py [--list] [--adclogs ADCDIR] HOSTRUN DIR [-- HOSTRUN_ARGS...]

``DIR`` holds scenario files of the table model (``bench_padbox_detection
--keep DIR``); ``HOSTRUN`` is a build of ``sim/hostrun.c`` (``make -C
firmware BUILD=DIR DIR/hostrun``, ``HOSTCC="gcc -D..."`` for a variant).
Every real slap with no hit on its pad within 3 ms is put in one class, by
the real slaps and touches on other pads that began up to 3.4 ms before it
(the most vibration takes, ``XT_DELAY_MAX_US`` + ``XT_LATE_US``), each
with the pair's true delay (the file's crosstalk comments) and what the
core had learnt of it by the file's end (``hostrun --show-learnt``).
With ``--adclogs ADCDIR`` (the image's sample times of the same files,
``bench_padbox_detection --adclogs ADCDIR``: one ``<file>.adclog`` each)
every file is replayed at the times the image in simavr took its samples
(``hostrun --adclog``), so the drops are the image's own:

* ``no contact before``: nothing on another pad could have shaken it (its
  own shape, or the mask of an earlier false hit on its pad);
* ``too soon for every source, all pairs learnt by the file's end`` / ``...
  not all ...``: each of them began less than its true delay less 300 µs
  before it, so the pair rules (Detection, step 9) would have kept it had
  the pairs been known when it came (hostrun tells what was learnt only at
  a file's end: on a long table a pair may have been learnt after the
  slap, or learnt short);
* ``a source's delay allows a shake``: only sizes and shapes can tell.

Printed: the counts by class, by hand and by shaken / clean, and with
``--list`` every dropped slap with its candidate sources.
"""

from __future__ import annotations

import argparse
import glob
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

MATCH_US = 3000
#: The most a shake can come after its slap: XT_DELAY_MAX_US + XT_LATE_US (detect.c).
SOURCE_WINDOW_US = 3400
#: DETECT_PAIR_EARLY_US (detect.h): a contact this much sooner than the pair's delay is no shake.
EARLY_US = 300

LINE = re.compile(r"hit (\d+) (\d+) (\d+) (\w+) rise=(\d+).*?#\s*(.*)")
CROSSTALK = re.compile(r"crosstalk from pad (\d+): [\d.]+ x after (\d+) us")


@dataclass(frozen=True)
class Contact:
    """A real contact of a scenario file."""

    pad: int
    t_us: int
    mv: int
    expect: str
    rise_us: int
    note: str


@dataclass(frozen=True)
class Source:
    """A contact on another pad that began before a dropped slap, as its shake's possible source."""

    pad: int
    mv: int
    gap_us: int
    delay_us: int | None  # the pair's true delay (None: no shake of it in the file)
    learnt_us: int  # what the core had learnt (0: nothing)

    @property
    def too_soon(self) -> bool:
        """Whether the slap began too soon after it to be its shake."""
        return self.delay_us is not None and self.gap_us < self.delay_us - EARLY_US


def read_scenario(path: str) -> tuple[list[Contact], dict[tuple[int, int], int]]:
    """A file's real contacts and the true delay of every pair that one of its shakes shows."""
    contacts, delays = [], {}
    with open(path) as lines:
        for line in lines:
            m = LINE.match(line)
            if not m:
                continue
            pad, note = int(m[1]), m[6]
            x = CROSSTALK.match(note)
            if x:
                delays[(int(x[1]), pad)] = delays[(pad, int(x[1]))] = int(x[2])
            elif m[4] in ("slap", "touch", "press"):
                contacts.append(Contact(pad, int(m[2]), int(m[3]), m[4], int(m[5]), note))
    return contacts, delays


def adclog_of(adclogs: str, scenario: str) -> Path:
    """Where ``bench_padbox_detection --adclogs`` kept the image's sample times of ``scenario``."""
    return Path(adclogs) / (Path(scenario).stem + ".adclog")


def missing_adclogs(files: list[str], adclogs: str | None) -> str | None:
    """What to fix when a file has no adclog in ``adclogs`` (None: all there, or no replay asked)."""
    missing = [f for f in files if adclogs and not adclog_of(adclogs, f).is_file()]
    if not missing:
        return None
    return (f"no adclog in {adclogs} for {Path(missing[0]).name} ({len(missing)} missing): "
            "python -m bench.bench_padbox_detection --adclogs DIR, the same seed and options\n")


def run_core(hostrun: str, files: list[str], args: list[str], adclogs: str | None = None,
             ) -> tuple[dict[str, list[tuple[int, int, str]]], dict[str, dict[tuple[int, int], int]]]:
    """Each file's hits (pad, onset, S or T) and learnt pair delays, from one hostrun over all files, or
    with ``adclogs`` one a file, at the sample times of its ``<file>.adclog`` there."""
    if adclogs is None:
        runs = [[hostrun, "--show-learnt", *args, *files]]
    else:
        runs = [[hostrun, "--show-learnt", "--adclog", str(adclog_of(adclogs, f)), *args, f] for f in files]
    out = "".join(subprocess.run(run, capture_output=True, text=True, check=True).stdout for run in runs)
    hits: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    learnt: dict[str, dict[tuple[int, int], int]] = defaultdict(dict)
    name = ""
    for line in out.splitlines():
        f = line.split()
        if f[0] == "FILE":
            name = f[1]
        elif f[0] == "HIT":
            hits[name].append((int(f[1]), int(f[2]), f[3]))
        elif f[:2] == ["LEARNT", "DELAY"] and int(f[4]):
            learnt[name][(int(f[2]), int(f[3]))] = int(f[4])
    return hits, learnt


def classify(sources: list[Source]) -> str:
    """The class of a dropped slap, by its possible sources."""
    if not sources:
        return "no contact before"
    if all(s.too_soon for s in sources):
        learnt = "all" if all(s.learnt_us for s in sources) else "not all"
        return f"too soon for every source, {learnt} pairs learnt by the file's end"
    return "a source's delay allows a shake"


def main(argv: list[str] | None = None) -> int:
    """Run the core over the files and print the dropped slaps' classes; 0, or 2 (and why) with no
    hostrun or no scenario files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print every dropped slap with its possible sources")
    ap.add_argument("--adclogs", metavar="ADCDIR", help="replay each file at the image's sample times, ADCDIR/<file>.adclog")
    ap.add_argument("hostrun")
    ap.add_argument("dir")
    ap.add_argument("hostrun_args", nargs="*", help="after --: more hostrun options, e.g. -- --slot-us 20")
    args = ap.parse_args(argv)
    files = sorted(glob.glob(f"{args.dir}/table_*.scn"))
    if not Path(args.hostrun).is_file():
        sys.stderr.write(f"no hostrun at {args.hostrun}: make -C firmware BUILD=B B/hostrun\n")
        return 2
    if not files:
        sys.stderr.write(f"no table_*.scn in {args.dir}: python -m bench.bench_padbox_detection --host --keep DIR\n")
        return 2
    if (problem := missing_adclogs(files, args.adclogs)) is not None:
        sys.stderr.write(problem)
        return 2
    hits, learnt = run_core(args.hostrun, files, args.hostrun_args, args.adclogs)
    classes: Counter[str] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    slaps = 0
    for path in files:
        contacts, delays = read_scenario(path)
        for c in contacts:
            if c.expect != "slap":
                continue
            slaps += 1
            if any(pad == c.pad and abs(t - c.t_us) <= MATCH_US for pad, t, _ in hits[path]):
                continue
            sources = [Source(o.pad, o.mv, c.t_us - o.t_us, delays.get((o.pad, c.pad)),
                              learnt[path].get((min(o.pad, c.pad), max(o.pad, c.pad)), 0))
                       for o in contacts if o.pad != c.pad and 0 <= c.t_us - o.t_us <= SOURCE_WINDOW_US]
            cls = classify(sources)
            classes[cls] += 1
            hand = c.note.split(",")[0]
            by_kind[(hand, "shaken" if "shaken" in c.note else "clean")] += 1
            if args.list:
                text = "; ".join(f"pad {s.pad} {s.mv} mV {s.gap_us} us before, delay {s.delay_us}, learnt "
                                 f"{s.learnt_us}{' (too soon)' if s.too_soon else ''}" for s in sources)
                print(f"{path.rsplit('/', 1)[-1]} pad {c.pad} at {c.t_us} us, {c.mv} mV, rise {c.rise_us} us "
                      f"({c.note}): {text or 'none'} [{cls}]")
    print(f"dropped {sum(classes.values())} of {slaps} real slaps")
    for cls, n in classes.most_common():
        print(f"  {n:5d}  {cls}")
    for (hand, shaken), n in sorted(by_kind.items()):
        print(f"  {n:5d}  {hand}, {shaken}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

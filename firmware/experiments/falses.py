"""What the host's core reports that no player did: every false slap, with the shakes that made it.

    python3 firmware/experiments/falses.py [--adclogs ADCDIR] HOSTRUN DIR [-- HOSTRUN_ARGS...]

``DIR``, ``HOSTRUN`` and ``--adclogs`` as for ``drops.py`` (beside this file). A false
slap is a slap hit with no real contact (slap, touch or press) on its pad
within 3 ms. Each is printed with the shakes that reached its pad from 0.4
ms after to 5 ms before its onset (size, how long before the reported
onset they arrived: negative, the onset was dated before the shake came;
the file's own crosstalk note: whose, how strong, after how long), and the
real slaps on other pads within the 6 ms before it (``clip``: at the
rails). The kinds seen so far are in ``README.md`` ("Tried in stop 51").

With ``--why DEBUG_HOSTRUN`` (a ``hostrun`` built with ``HOSTCC="gcc
-DDETECT_DEBUG"``) each false slap also gets the rule that let it out, read
from the core's trace of its decision (``crosstalk_source()``'s last word on
its pad), and the counts by rule end the listing:

* ``not sharp``: its first half-wave was longer than a shake's (the sharp
  limit, step 13), so it was taken for a hand's push and no source was
  looked for;
* ``push``: its low-passed deviation sized it as a hand's (step 34);
* ``clip max``: longer at the rails than any shake;
* ``pair early`` / ``late`` / ``bound``: a source was ruled out by its
  pair's learnt delay (step 9) or, for a pair not yet learnt, a bound on
  it (steps 25, 29, 31);
* ``nearer``: larger than the source's sure shake on a nearer pad allows
  (steps 10, 36); ``shook already``: louder than the shake that source
  already made on the pad (step 27);
* ``sizes``: every source looked at was too small, or clipped too briefly,
  to make it (steps 5, 11);
* ``no source``: no contact on another pad in its window.
"""

from __future__ import annotations

import argparse
import glob
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (drops.py beside it, also when loaded from elsewhere)
from drops import LINE, MATCH_US, adclog_of, missing_adclogs, run_core  # noqa: E402

REAL = ("slap", "touch", "press")
#: The debug trace's words for a source ruled out, in the order a look checks them, and their short names.
WHY = (("not sharp", "not sharp"), (": push", "push"), ("clip max", "clip max"), ("pair early", "pair early"),
       ("late (", "late"), ("larger than its sure shake", "nearer"), ("shook the pad already", "shook already"),
       ("bound rule", "bound"))


def trace_lines(debug_hostrun: str, path: str, pad: int, args: list[str], adclogs: str | None) -> list[str]:
    """The debug core's trace of one pad in one file (its stderr)."""
    run = [debug_hostrun, *(["--adclog", str(adclog_of(adclogs, path))] if adclogs else []), *args, "--trace", str(pad),
           path]
    return subprocess.run(run, capture_output=True, text=True, check=True).stderr.splitlines()


#: A reported onset may lie up to this far before the rules' (steps 37 and 38 date the report apart).
REPORT_SHIFT_US = 200


def why_reported(trace: list[str], pad: int, onset: int) -> str:
    """The rule that let pad's contact reported at onset out as a slap: the last word of its decision's
    look (the decision whose rules' onset is nearest the reported one, within REPORT_SHIFT_US)."""
    decide = re.compile(rf"pad {pad} decide at \d+ onset (\d+) .*-> report")
    decisions = [(abs(int(m.group(1)) - onset), i) for i, line in enumerate(trace) if (m := decide.match(line))]
    off, i = min(decisions, default=(REPORT_SHIFT_US + 1, -1))
    if off > REPORT_SHIFT_US:
        return "?"
    k = i - 1  # (the look's lines follow the decision's XC lines, or the pad's decision before)
    while k >= 0 and not trace[k].startswith(("XC pad", f"pad {pad} decide")):
        k -= 1
    look = [x.strip() for x in trace[k + 1:i] if x.strip().startswith(f"pad {pad} vs source")]
    if not look:
        return "no source"
    last = look[-1]
    for words, name in WHY:
        if words in last:
            return name
    return "sizes"


def main(argv: list[str] | None = None) -> int:
    """Run the core over the files and print each false slap; 0, or 2 (and why) with no hostrun or files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adclogs", metavar="ADCDIR", help="replay each file at the image's sample times, ADCDIR/<file>.adclog")
    ap.add_argument("--why", metavar="DEBUG_HOSTRUN",
                    help="a hostrun built with -DDETECT_DEBUG: name the rule that let each false slap out")
    ap.add_argument("hostrun")
    ap.add_argument("dir")
    ap.add_argument("hostrun_args", nargs="*", help="after --: more hostrun options")
    args = ap.parse_args(argv)
    files = sorted(glob.glob(f"{args.dir}/table_*.scn"))
    if not Path(args.hostrun).is_file() or not files:
        sys.stderr.write("need a hostrun (make -C firmware BUILD=B B/hostrun) and table_*.scn files "
                         "(python -m bench.bench_padbox_detection --host --keep DIR)\n")
        return 2
    if (problem := missing_adclogs(files, args.adclogs)) is not None:
        sys.stderr.write(problem)
        return 2
    if args.why and not Path(args.why).is_file():
        sys.stderr.write(f"no {args.why}: make -C firmware BUILD=B HOSTCC=\"gcc -DDETECT_DEBUG\" B/hostrun\n")
        return 2
    hits, _ = run_core(args.hostrun, files, args.hostrun_args, args.adclogs)
    false = 0
    rules: Counter[str] = Counter()
    traces: dict[tuple[str, int], list[str]] = {}  # (one debug run a file and pad, however many false slaps it has)
    for path in files:
        # (pad, t, mV, kind, note) of every contact and shake in the file
        with open(path) as lines:
            events = [(int(m[1]), int(m[2]), int(m[3]), m[4], m[6]) for m in map(LINE.match, lines) if m]
        for pad, t, kind in hits[path]:
            if kind != "S" or any(e[0] == pad and e[3] in REAL and abs(e[1] - t) <= MATCH_US for e in events):
                continue
            false += 1
            shakes = "; ".join(f"{e[2]} mV {t - e[1]} us before ({e[4]})" for e in events
                               if e[0] == pad and e[3] == "none" and -400 <= t - e[1] <= 5000)
            slaps = "; ".join(f"pad {e[0]} {e[2]} mV {t - e[1]} us before{' clip' if 'clipped' in e[4] else ''}"
                              for e in events if e[3] == "slap" and e[0] != pad and 0 <= t - e[1] <= 6000)
            why = ""
            if args.why:
                if (path, pad) not in traces:
                    traces[path, pad] = trace_lines(args.why, path, pad, args.hostrun_args, args.adclogs)
                rule = why_reported(traces[path, pad], pad, t)
                rules[rule] += 1
                why = f" [{rule}]"
            print(f"{path.rsplit('/', 1)[-1]} pad {pad} at {t} us{why}: shakes {shakes or 'none'} | slaps {slaps or 'none'}")
    print(f"false slaps {false}")
    for rule, n in rules.most_common():
        print(f"  {n:5d}  {rule}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

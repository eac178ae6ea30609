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
"""

from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path

from drops import LINE, MATCH_US, missing_adclogs, run_core

REAL = ("slap", "touch", "press")


def main(argv: list[str] | None = None) -> int:
    """Run the core over the files and print each false slap; 0, or 2 (and why) with no hostrun or files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adclogs", metavar="ADCDIR", help="replay each file at the image's sample times, ADCDIR/<file>.adclog")
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
    hits, _ = run_core(args.hostrun, files, args.hostrun_args, args.adclogs)
    false = 0
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
            print(f"{path.rsplit('/', 1)[-1]} pad {pad} at {t} us: shakes {shakes or 'none'} | slaps {slaps or 'none'}")
    print(f"false slaps {false}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

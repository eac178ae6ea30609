"""Which hits a detection change moved, and whether nearer the moment of contact.

    python3 firmware/experiments/hitdiff.py [--all] BEFORE.hits AFTER.hits

Each ``.hits`` file is ``hostrun``'s output over scenario files with the file
in front of each HIT line::

    hostrun SCN... | awk '$1=="FILE"{f=$2} $1=="HIT"{print f, $0}' > x.hits

(build each core with ``make -C firmware BUILD=DIR HOSTCC="gcc -D..." DIR/hostrun``;
the scenarios from ``bench_padbox_detection --keep DIR``). Every hit in only
one of the two is matched to a hit on the same pad within 2 ms in the other
(moved) and to the nearest real contact on its pad within 3 ms in the
scenario file (its truth). Printed: the hits found or lost, and the moved
ones whose error is over 300 µs either side (``--all``: every moved one
that got worse), then how many moved nearer and further.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from functools import cache

Hit = tuple[int, int, str, int]  # pad, onset us, kind, peak
Contact = tuple[int, int, str, str]  # pad, time us, expect, the line's comment

MOVED_US = 2000
MATCH_US = 3000
SHOW_US = 300


def load(path: str) -> dict[str, set[Hit]]:
    """The hits of one run, by scenario file."""
    hits: dict[str, set[Hit]] = defaultdict(set)
    with open(path) as lines:
        rows = [line.split()[:6] for line in lines if line.strip()]
    for f, _, pad, t, kind, peak in rows:
        hits[f].add((int(pad), int(t), kind, int(peak)))
    return hits


@cache
def contacts(scenario: str) -> list[Contact]:
    """The real contacts (slaps, touches, presses) of a scenario file."""
    out = []
    with open(scenario) as lines:
        text = lines.read().splitlines()
    for line in text:
        m = re.match(r"hit (\d+) (\d+) \d+ (slap|touch|press)\b", line)
        if m:
            out.append((int(m[1]), int(m[2]), m[3], line.split("#")[-1].strip()))
    return out


def truth(scenario: str, hit: Hit) -> Contact | None:
    """The real contact on the hit's pad nearest it, within MATCH_US."""
    near = [c for c in contacts(scenario) if c[0] == hit[0] and abs(c[1] - hit[1]) <= MATCH_US]
    return min(near, key=lambda c: abs(c[1] - hit[1]), default=None)


def moved_to(hit: Hit, others: set[Hit]) -> Hit | None:
    """The other run's hit on the same pad within MOVED_US, if any."""
    return next((o for o in sorted(others) if o[0] == hit[0] and abs(o[1] - hit[1]) < MOVED_US), None)


def describe(contact: Contact | None) -> str:
    """A real contact as the report names it."""
    return f"real {contact[1]} {contact[3][:40]}" if contact else "no real contact"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="print every moved hit that got worse")
    ap.add_argument("before")
    ap.add_argument("after")
    args = ap.parse_args()
    before, after = load(args.before), load(args.after)
    nearer = further = 0
    for f in sorted(set(before) | set(after)):
        name = f.rsplit("/", 1)[-1]
        only_a, only_b = before[f] - after[f], after[f] - before[f]
        for h in sorted(only_a):
            c, h2 = truth(f, h), moved_to(h, only_b)
            if h2 is None:
                print(f"{name} lost:  pad {h[0]} {h[1]} {h[2]} peak {h[3]}, {describe(c)}")
            elif c is None:
                print(f"{name} false hit moved: pad {h[0]} {h[1]} -> {h2[1]}")
            else:
                ea, eb = h[1] - c[1], h2[1] - c[1]
                nearer += abs(eb) < abs(ea)
                further += abs(eb) > abs(ea)
                if max(abs(ea), abs(eb)) > SHOW_US or (args.all and abs(eb) > abs(ea)):
                    print(f"{name} pad {h[0]} {describe(c)}: {ea:+d} -> {eb:+d} us")
        for h in sorted(only_b):
            if moved_to(h, only_a) is None:
                print(f"{name} found: pad {h[0]} {h[1]} {h[2]} peak {h[3]}, {describe(truth(f, h))}")
    print(f"moved: {nearer} nearer the moment of contact, {further} further")


if __name__ == "__main__":
    main()

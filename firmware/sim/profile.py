"""Where the pad box image spends its cycles: the harness's per-address profile, summed over scenarios, by function.

    python3 firmware/sim/profile.py [--all] [--by-address] [--harness PATH] ELF SCENARIO...

Runs ``firmware/sim/harness`` on each scenario with ``HARNESS_PROFILE`` (two
at a time) and maps the cycles to the ELF's functions (``avr-nm -n``: each
address belongs to the symbol at or before it). By default only the cycles
spent while the sampler is slowed down count (``HARNESS_PROFILE_PACED``: the
bursts in which the scan loop falls behind, which is what the pacing of
firmware/README.md is about); ``--all`` counts the whole run.
``--by-address`` also prints every address's cycles, for a look at one
function's instructions beside ``avr-objdump -d``.
"""

from __future__ import annotations

import argparse
import bisect
import os
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HARNESS = Path(__file__).resolve().parent / "harness"


def profile_one(harness: Path, elf: str, scenario: str, paced: bool) -> Counter[int]:
    """Cycles per flash byte address of one harness run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.txt"
        env = dict(os.environ, HARNESS_PROFILE=str(out))
        if paced:
            env["HARNESS_PROFILE_PACED"] = "1"
        subprocess.run([str(harness), elf, scenario], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        cycles: Counter[int] = Counter()
        for line in out.read_text().splitlines():
            address, count = line.split()
            cycles[int(address, 16)] += int(count)
        return cycles


def functions(elf: str) -> tuple[list[int], list[str]]:
    """The ELF's code symbols, sorted: their start addresses and names."""
    listing = subprocess.run(["avr-nm", "-n", "-C", elf], capture_output=True, text=True, check=True).stdout
    starts, names = [], []
    for line in listing.splitlines():
        parts = line.split(None, 2)
        # (__stack is the linker's top of RAM, a weak symbol whose value 0x8ff also falls among the code's
        # addresses: taken as code, it took the cycles of the end of whatever function spans 0x8ff)
        if len(parts) == 3 and parts[1] in "tTwW" and parts[2] != "__stack":
            starts.append(int(parts[0], 16))
            names.append(parts[2])
    return starts, names


def by_function(cycles: Counter[int], starts: list[int], names: list[str]) -> Counter[str]:
    """Cycles summed per function (the symbol at or before each address)."""
    out: Counter[str] = Counter()
    for address, count in cycles.items():
        i = bisect.bisect_right(starts, address) - 1
        out[names[i] if i >= 0 else "?"] += count
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("elf")
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--all", action="store_true", help="the whole run, not only while the sampler is slowed down")
    ap.add_argument("--by-address", action="store_true", help="also every address's cycles")
    ap.add_argument("--top", type=int, default=30, help="functions listed (default 30)")
    ap.add_argument("--harness", type=Path, default=HARNESS, help=f"the simavr harness (default {HARNESS})")
    args = ap.parse_args(argv)
    if not args.harness.exists():
        sys.stderr.write(f"no harness at {args.harness}: make -C firmware harness\n")
        return 2
    total: Counter[int] = Counter()
    with ThreadPoolExecutor(2) as pool:
        for cycles in pool.map(lambda scn: profile_one(args.harness, args.elf, scn, not args.all), args.scenarios):
            total.update(cycles)
    per = by_function(total, *functions(args.elf))
    whole = sum(per.values())
    lines = [f"cycles: {whole} ({'the whole runs' if args.all else 'while the sampler was slowed down'})"]
    lines += [f"{100 * count / max(1, whole):6.2f} % {count:11d}  {name}" for name, count in per.most_common(args.top)]
    if args.by_address:
        lines += [f"{address:#06x} {total[address]}" for address in sorted(total)]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

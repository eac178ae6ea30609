"""``python -m bench [--quick] [NAME ...]``: run every ``bench_*.py`` (or those whose name contains NAME).

Each benchmark module exposes ``main() -> Report`` and writes its results
under ``bench/results/``. A benchmark that fails is reported and the others
still run; the exit code is 1 if any failed.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
from pathlib import Path


def discover() -> list[str]:
    """Module names of every benchmark, in name order."""
    here = Path(__file__).resolve().parent
    return sorted(p.stem for p in here.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    """Run the selected benchmarks; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only benchmarks whose name contains one of these")
    parser.add_argument("--quick", action="store_true", help="fewer runs and smaller loads (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        os.environ["BENCH_QUICK"] = "1"
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    chosen = [n for n in discover() if not args.names or any(s in n for s in args.names)]
    if not chosen:
        print(f"no benchmark matches {args.names}; available: {', '.join(discover())}", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        print(f"-- running {name}", flush=True)
        try:
            importlib.import_module(f"bench.{name}").main()
        except Exception:
            traceback.print_exc()
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``tabletop`` command: one entry point, one module per subcommand.

Each module in ``companion.commands`` listed in ``SUBCOMMANDS`` exposes
``add_parser(subparsers)`` which registers its parser and sets
``func=<callable(args) -> int>``. Every start (``serve`` too) builds all
the parsers, so a command module keeps its top-level imports light and imports
what only its own run needs inside its run function (tests/service/test_cli_startup.py
checks the heavy ones stay out). Errors of the project's own hierarchy are
printed as one clear line and exit 2; anything else is a bug and shows a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from companion import __version__
from core.errors import CompanionError

#: Subcommand modules under companion.commands, in the order --help lists them.
SUBCOMMANDS: tuple[str, ...] = (
    "serve",
    "pads",
    "emulate",
    "doctor",
    "service",
    "backup",
    "phones",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="tabletop", description="A table-side referee and score keeper.")
    parser.add_argument("--version", action="version", version=f"tabletop-companion {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"companion.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"companion.commands.{name}":
                continue  # not written yet in this checkout
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tabletop``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CompanionError as exc:
        print(f"tabletop: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

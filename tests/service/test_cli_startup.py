"""`tabletop` builds every subcommand's parser on each start, `serve` included: building
them must not import what only another subcommand runs (the emulator, the systemd
templates, the backup archiver...), or every `tabletop serve` pays for it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from companion.cli import build_parser
from companion.commands import emulate
from hardware import protocol as p

REPO = Path(__file__).resolve().parents[2]

#: Modules only `emulate`, `install-service`/`uninstall-service` or `export`/`import` need.
HEAVY = (
    "hardware.emulator",
    "hardware.keyboard",
    "hardware.script",
    "hardware.protocol",
    "companion.systemd",
    "companion.backup",
)


def _modules_after(code: str) -> set[str]:
    """The names in sys.modules after running ``code`` in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=120,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_building_the_parser_imports_no_other_subcommands_heavy_modules() -> None:
    loaded = _modules_after("import companion.cli; companion.cli.build_parser()")
    # Every subcommand module is there (the parser lists them all)...
    assert {f"companion.commands.{name}" for name in ("serve", "emulate", "service", "backup")} <= loaded
    # ...but none of what only their run functions use.
    assert sorted(loaded & set(HEAVY)) == []


def test_the_heavy_modules_load_when_their_subcommand_runs() -> None:
    # The check above would also pass if the modules were gone; make sure the run path imports them.
    loaded = _modules_after(
        "import argparse\n"
        "from companion.commands import emulate\n"
        "emulate.run(argparse.Namespace(pads=99, resolution_us=100))"
    )
    assert "hardware.protocol" in loaded


def test_emulate_help_names_the_protocols_pad_limit() -> None:
    # The help text cannot import hardware.protocol, so it carries its own copy of the limit.
    assert emulate.MAX_PADS_HELP == p.MAX_PADS
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices and "emulate" in a.choices)
    assert f"pad count, 1 to {p.MAX_PADS} (default 4)" in sub.choices["emulate"].format_help()

"""Shared fixtures of the pad box tests (a PadBoxEmulator on a real pty). Import them into a test module.

* ``private_emulator_dir`` (autouse once imported): emulators a test starts
  announce themselves only to that test, not to other tests or a real session.
* ``emu``: a started 4-pad emulator (resolution 120 us), stopped afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from hardware import ports
from hardware.emulator import PadBoxEmulator


@pytest.fixture(autouse=True)
def private_emulator_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Emulators of this test announce themselves only to this test."""
    monkeypatch.setenv(ports.EMULATOR_DIR_ENV, str(tmp_path / "emulators"))


@pytest.fixture
def emu() -> Iterator[PadBoxEmulator]:
    """A started PadBoxEmulator with 4 pads on a pty; stopped afterwards."""
    box = PadBoxEmulator(pads=4, resolution_us=120).start()
    yield box
    box.stop()

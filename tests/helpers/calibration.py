"""Services for the calibration tests (the JSON API and the browser page): on the emulator, or on simulated pads."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.service import TableService
from hardware.emulator import PadBoxEmulator
from hardware.padbox import SerialPadBox
from hardware.sim import SimulatedPads

from helpers.browser import make_service as make_table_service
from helpers.browser import stop_service as stop_table_service
from helpers.padbox import emu  # noqa: F401  (the fixture box_service stands on)

#: Bounds a hang only; LVL lines come every 50 ms.
WAIT_S = 10.0


def make_service(tmp_path: Path, source: Any) -> TableService:
    """A started service without games reading ``source``, its data in ``tmp_path / "data"``."""
    return make_table_service(tmp_path / "data", games={}, source=source)


def stop_service(service: TableService) -> None:
    """Close the calibration, then stop the service and its store."""
    service.calibration.close()
    stop_table_service(service)


@pytest.fixture
def box_service(tmp_path: Path, emu: PadBoxEmulator) -> Iterator[TableService]:
    """A started TableService reading a real SerialPadBox on the emulator's pty."""
    assert emu.path is not None
    source = SerialPadBox(port=emu.path, hello_timeout_s=3.0, retry_s=0.1)
    service = make_service(tmp_path, source)
    assert source.wait_connected(WAIT_S), source.status()
    try:
        yield service
    finally:
        stop_service(service)


@pytest.fixture
def sim_service(tmp_path: Path) -> Iterator[TableService]:
    service = make_service(tmp_path, SimulatedPads(pad_count=4))
    try:
        yield service
    finally:
        stop_service(service)


def rung_down(levels: dict[str, Any]) -> bool:
    """Pad 3's latest fresh peak is back at the noise floor: its contact is over."""
    return bool(levels["live"]) and levels["peaks"][2] <= 20

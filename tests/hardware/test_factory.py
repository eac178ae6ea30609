"""open_source: the config and the command line choose the pad source."""

from __future__ import annotations

import math
import queue
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from companion.config import Config, parse_config
from core.errors import ConfigError, InputError, PadSourceError
from hardware.factory import gpio_pins_for, open_source
from hardware.gpio import GpioPads
from hardware.mockpins import TimedMockFactory
from hardware.script import ScriptedPads
from hardware.sim import SimulatedPads


def test_default_is_simulated_pads_with_the_configured_count() -> None:
    sink: queue.Queue[Any] = queue.Queue()
    source = open_source(parse_config({"pads": {"count": 6}}), sink)
    assert isinstance(source, SimulatedPads)
    assert source.pad_count == 6
    assert source.queue is sink


def test_gpio_uses_the_first_count_pins_and_the_mask(mock_factory: TimedMockFactory) -> None:
    config = parse_config({"pads": {"source": "gpio", "count": 3, "gpio": {"pins": [5, 6, 13, 19], "mask_ms": 12}}})
    source = open_source(config)
    try:
        assert isinstance(source, GpioPads)
        assert source.pins == (5, 6, 13)
        assert source.mask_s == pytest.approx(0.012)
    finally:
        source.stop()


def test_gpio_with_fewer_pins_than_pads_names_both_keys() -> None:
    config = parse_config({"pads": {"count": 4, "gpio": {"pins": [17, 27]}}})
    with pytest.raises(ConfigError, match="pads.count.*pads.gpio.pins"):
        gpio_pins_for(config)


def test_kind_overrides_the_config(mock_factory: TimedMockFactory) -> None:
    config = parse_config({"pads": {"source": "gpio"}})
    assert isinstance(open_source(config, kind="sim"), SimulatedPads)


def test_script_option_gives_a_scripted_source(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text("0 1\n10 2\n")
    source = open_source(Config(), script=path, speed=None)
    assert isinstance(source, ScriptedPads)
    assert source.pad_count == Config().pads_count
    assert math.isinf(source.speed)


def test_script_cannot_be_combined_with_hardware(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text("0 1\n")
    with pytest.raises(InputError, match="--pads gpio"):
        open_source(Config(), kind="gpio", script=path)
    with pytest.raises(InputError, match="--script"):
        open_source(Config(), kind="script")


def test_unknown_kind_is_an_input_error() -> None:
    with pytest.raises(InputError, match="'usb' is not known"):
        open_source(Config(), kind="usb")


def test_serial_is_built_lazily_from_config_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    made: dict[str, Any] = {}

    class FakeBox:
        def __init__(self, port: str | None, baud: int, hello_timeout_s: float, pad_count: int | None = None, sink: Any = None) -> None:
            made.update(port=port, baud=baud, hello_timeout_s=hello_timeout_s, pad_count=pad_count, sink=sink)

    module = types.ModuleType("hardware.padbox")
    module.SerialPadBox = FakeBox  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hardware.padbox", module)
    config = parse_config({"pads": {"serial": {"port": "/dev/ttyUSB0", "baud": 115200, "hello_timeout_s": 2.5}}})
    sink: queue.Queue[Any] = queue.Queue()
    assert isinstance(open_source(config, sink, kind="serial"), FakeBox)
    assert made == {"port": "/dev/ttyUSB0", "baud": 115200, "hello_timeout_s": 2.5, "pad_count": None, "sink": sink}
    open_source(config, kind="serial", port="/dev/pts/7")
    assert made["port"] == "/dev/pts/7"


def test_serial_backend_missing_is_a_pad_source_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hardware.padbox", None)  # import fails
    with pytest.raises(PadSourceError, match="serial pad box"):
        open_source(Config(), kind="serial")

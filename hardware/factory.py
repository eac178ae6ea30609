"""Open the pad source a config (and the command line) asks for: sim, gpio, serial or a script.

Backends are imported only when chosen, so a laptop without GPIO or a pad
box never loads their libraries (and a backend still being written does not
break the others).
"""

from __future__ import annotations

import os
import queue
from typing import Any

from typing import Protocol

from core.errors import ConfigError, InputError, PadSourceError
from hardware.pins import PAD_SOURCES
from hardware.source import PadSource


class SourceSettings(Protocol):
    """The plain values a pad source is opened from (``companion.config.Config`` has them all).

    Declared here so the hardware layer names what it needs without importing
    the service's config class; any object with these attributes will do.
    """

    @property
    def pads_source(self) -> str: ...
    @property
    def pads_count(self) -> int: ...
    @property
    def sim_resolution_us(self) -> int: ...
    @property
    def gpio_pins(self) -> tuple[int, ...]: ...
    @property
    def gpio_mask_ms(self) -> float: ...
    @property
    def gpio_pin_factory(self) -> str | None: ...
    @property
    def serial_port(self) -> str | None: ...
    @property
    def serial_baud(self) -> int: ...
    @property
    def serial_hello_timeout_s(self) -> float: ...

#: Every ``kind`` open_source accepts (``script`` needs a script file).
SOURCE_KINDS = (*PAD_SOURCES, "script")


def gpio_pins_for(config: SourceSettings) -> tuple[int, ...]:
    """The BCM pins of pads 1..pads.count: the first ``pads.count`` of ``pads.gpio.pins``."""
    if config.pads_count > len(config.gpio_pins):
        raise ConfigError(
            f"config key 'pads.count' is {config.pads_count} but 'pads.gpio.pins' lists only "
            f"{len(config.gpio_pins)} pins {list(config.gpio_pins)}; list one pin per pad or lower pads.count"
        )
    return tuple(config.gpio_pins[: config.pads_count])


def open_source(
    config: SourceSettings,
    sink: "queue.Queue[Any] | None" = None,
    *,
    kind: str | None = None,
    port: str | None = None,
    script: str | os.PathLike[str] | None = None,
    speed: float | None = 1.0,
) -> PadSource:
    """Create (not start) the pad source for this table.

    Args:
        config: the table's configuration; ``pads.source`` is used unless ``kind`` is given.
        sink: the queue hits go to (default: the source's own).
        kind: ``sim``, ``gpio``, ``serial`` or ``script`` (command line ``--pads``).
        port: serial port, overriding ``pads.serial.port`` (implies nothing for other kinds).
        script: a hit script file to replay (``--script``); implies ``kind="script"``.
        speed: replay speed of a script (1.0 real time, None as fast as possible).

    Raises ConfigError / InputError for a bad choice, PadSourceError when the
    hardware cannot be opened.
    """
    chosen = kind or ("script" if script is not None else config.pads_source)
    if chosen not in SOURCE_KINDS:
        raise InputError(f"pad source {chosen!r} is not known; choose one of {', '.join(SOURCE_KINDS)}")
    if script is not None and chosen not in ("script", "sim"):
        raise InputError(f"--script replays simulated hits; it cannot be combined with --pads {chosen}")

    if chosen == "script" or script is not None:
        if script is None:
            raise InputError("the script source needs a hit script file (--script FILE)")
        from hardware.script import ScriptedPads

        return ScriptedPads(script, pad_count=config.pads_count, speed=speed, resolution_us=config.sim_resolution_us, sink=sink)
    if chosen == "sim":
        from hardware.sim import SimulatedPads

        return SimulatedPads(pad_count=config.pads_count, resolution_us=config.sim_resolution_us, sink=sink)
    if chosen == "gpio":
        from hardware.gpio import GpioPads

        return GpioPads(
            gpio_pins_for(config),
            mask_ms=config.gpio_mask_ms,
            pin_factory=config.gpio_pin_factory,
            sink=sink,
        )
    # serial
    try:
        from hardware.padbox import SerialPadBox
    except ImportError as exc:
        raise PadSourceError(f"the serial pad box backend is not available in this installation: {exc}") from exc
    return SerialPadBox(
        port or config.serial_port,
        config.serial_baud,
        config.serial_hello_timeout_s,
        pad_count=None,
        sink=sink,
    )

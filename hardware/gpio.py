"""GPIO pads through gpiozero: one pin per pad, pull-up, active-low.

Timing: every hit is stamped with the ticks gpiozero hands the pin's change
callback (with the lgpio factory these are the kernel's edge timestamps,
CLOCK_MONOTONIC in nanoseconds), never with the time the callback ran. Ticks
are turned into integer microseconds on this source's clock with the
factory's own ``ticks_diff`` against an epoch taken at ``start()``, and
``now_us()`` reads the factory's ``ticks()`` on the same basis, so deadlines
and hits share one clock.

Debounce: gpiozero's ``bounce_time`` is NOT used (under lgpio it delays the
reported time by the debounce period). Instead each pad has a mask time
(config ``pads.gpio.mask_ms``), measured in edge ticks: a falling edge counts
as a slap only if the pad's last slap was at least ``mask_ms`` earlier and the
pad had been released (line high) for at least ``mask_ms``. So a chattering
contact gives at most one hit per mask time and the bounce of a hand lifting
off a pad never counts. See docs/pads.md.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

from gpiozero import DigitalInputDevice
from gpiozero.exc import GPIOPinInUse, GPIOZeroError, PinInvalidPin
from gpiozero.pins import Factory

from core.errors import ConfigError, PadSourceError
from core.hits import HitKind, PadHit
from hardware.pins import GPIO_PINS
from hardware.source import PadSource

log = logging.getLogger(__name__)

#: Environment variable gpiozero itself reads to choose a pin factory.
PIN_FACTORY_ENV = "GPIOZERO_PIN_FACTORY"

#: Honest timing resolution per pin factory, in microseconds. lgpio and pigpio
#: hand over driver timestamps (kernel ns / pigpiod µs); rpigpio and native
#: give no edge time, so gpiozero stamps the edge when its callback runs and
#: the jitter of that thread (around a millisecond on a busy Pi) is the
#: resolution. Mock factories are exact by construction.
RESOLUTION_US: dict[str, int] = {"lgpio": 1, "pigpio": 1, "mock": 1, "rpigpio": 1000, "native": 1000}

#: Ticks further than this from the clock's base are re-based, so factories
#: whose ticks wrap (pigpio: 32-bit µs, every 71.6 minutes) keep a steady clock.
_REBASE_S = 600.0

_FACTORY_CLASSES = {
    "LGPIOFactory": "lgpio",
    "PiGPIOFactory": "pigpio",
    "RPiGPIOFactory": "rpigpio",
    "NativeFactory": "native",
    "MockFactory": "mock",
}


def factory_name(factory: Factory) -> str:
    """The gpiozero name (``lgpio``, ``mock``, ...) of a pin factory instance."""
    for cls in type(factory).__mro__:
        if cls.__name__ in _FACTORY_CLASSES:
            return _FACTORY_CLASSES[cls.__name__]
    return type(factory).__name__


def requested_factory_name(configured: str | None) -> str | None:
    """The pin factory asked for: config ``pads.gpio.pin_factory``, else $GPIOZERO_PIN_FACTORY, else None (auto)."""
    return configured or os.environ.get(PIN_FACTORY_ENV) or None


def load_pin_factory(name: str | None) -> Factory:
    """Create the pin factory called ``name`` (gpiozero's entry points), or gpiozero's default choice.

    Raises PadSourceError saying what is missing when no factory can be made
    (e.g. not a Raspberry Pi, lgpio not installed).
    """
    from gpiozero import Device
    from importlib.metadata import entry_points

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if name is None:
                return Device._default_pin_factory()
            for ep in entry_points(group="gpiozero_pin_factories"):
                if ep.name == name.lower():
                    return ep.load()()
            raise PadSourceError(
                f"gpiozero has no pin factory called {name!r}; valid: lgpio, rpigpio, pigpio, native, mock"
            )
        except PadSourceError:
            raise
        except Exception as exc:  # gpiozero raises ImportError, OSError, BadPinFactory...
            tried = "; ".join(str(w.message) for w in caught)
            detail = f" ({tried})" if tried else ""
            raise PadSourceError(
                f"cannot use GPIO pin factory {name or 'auto'!r}: {exc}{detail}. "
                "On a Raspberry Pi install lgpio (pip install lgpio; Debian: python3-lgpio); "
                "elsewhere use simulated pads (--pads sim)"
            ) from exc


def check_pins(pins: Sequence[Any]) -> tuple[int, ...]:
    """Validate BCM pin numbers for pads; ConfigError names ``pads.gpio.pins`` and what is valid."""
    if isinstance(pins, (str, bytes)) or not pins:
        raise ConfigError(f"config key 'pads.gpio.pins': {pins!r} is not valid; "
                          "expected a non-empty list of BCM pin numbers such as [17, 27]")
    out: list[int] = []
    for pin in pins:
        if isinstance(pin, bool) or not isinstance(pin, int) or pin not in GPIO_PINS:
            raise ConfigError(
                f"config key 'pads.gpio.pins': {pin!r} is not valid; expected BCM pin numbers from "
                f"{min(GPIO_PINS)} to {max(GPIO_PINS)}"
            )
        if pin in out:
            raise ConfigError(f"config key 'pads.gpio.pins': pin {pin} is listed twice; give each pad its own pin")
        out.append(pin)
    return tuple(out)


class SlapPad(DigitalInputDevice):
    """One slap pad: a switch between a GPIO pin and ground, with the internal pull-up (active-low).

    It forwards every edge, with the ticks gpiozero got from the pin driver,
    to ``on_edge(pad, ticks, pressed)`` before gpiozero's own event handling.
    """

    def __init__(self, pin: int, *, pad: int, on_edge: Callable[[int, Any, bool], None], pin_factory: Factory) -> None:
        self.pad = pad
        self._on_edge = on_edge
        # bounce_time=None on purpose: masking is done on edge ticks (module docstring).
        super().__init__(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)

    def _pin_changed(self, ticks: Any, state: Any) -> None:
        self._on_edge(self.pad, ticks, bool(self._state_to_value(state)))
        super()._pin_changed(ticks, state)


@dataclass
class _PadTiming:
    last_onset_us: int | None = None
    last_release_us: int | None = None
    masked: int = 0


class GpioPads(PadSource):
    """Pads wired to Raspberry Pi GPIO pins (BCM numbers), pad N on ``pins[N-1]``.

    Args:
        pins: BCM pin numbers, one per pad.
        mask_ms: re-trigger mask per pad, in milliseconds of edge ticks.
        pin_factory: a gpiozero Factory instance, or a factory name
            (``lgpio``, ``mock``...), or None for $GPIOZERO_PIN_FACTORY /
            the factory already set on ``gpiozero.Device`` / gpiozero's default.
        resolution_us: override the reported timing resolution (default from
            :data:`RESOLUTION_US` for the factory in use).
        sink: queue hits are put on (default: a new one).
    """

    name: ClassVar[str] = "gpio"

    def __init__(
        self,
        pins: Sequence[int],
        mask_ms: float = 30.0,
        pin_factory: Factory | str | None = None,
        resolution_us: int | None = None,
        sink: "queue.Queue[Any] | None" = None,
    ) -> None:
        self.pins = check_pins(pins)
        if isinstance(mask_ms, bool) or not isinstance(mask_ms, (int, float)) or not 0 <= mask_ms <= 1000:
            raise ConfigError(f"config key 'pads.gpio.mask_ms': {mask_ms!r} is not valid; expected a number from 0 to 1000")
        self.mask_s = float(mask_ms) / 1000.0
        self.mask_us = round(float(mask_ms) * 1000)
        self.factory, self._owns_factory = self._resolve_factory(pin_factory)
        self.factory_name = factory_name(self.factory)
        if resolution_us is None:
            resolution_us = RESOLUTION_US.get(self.factory_name, 1000)
        super().__init__(len(self.pins), resolution_us, sink)
        if self.factory_name in ("rpigpio", "native"):
            log.warning(
                "gpio: pin factory %s gives no edge timestamps; hits are stamped when its callback runs "
                "(resolution about %d µs). Use lgpio for kernel edge times.", self.factory_name, resolution_us
            )
        self._timing = {pad: _PadTiming() for pad in range(1, len(self.pins) + 1)}
        self._clock_lock = threading.Lock()
        self._base_ticks: Any = None  # ticks at the clock's base; None until start()
        self._base_s = 0.0  # seconds on this source's clock at _base_ticks
        self._running = False
        self._stopped = False
        self.pressed_at_start: list[int] = []
        self.devices: list[SlapPad] = []
        try:
            for pad, pin in enumerate(self.pins, start=1):
                self.devices.append(SlapPad(pin, pad=pad, on_edge=self._on_edge, pin_factory=self.factory))
        except PinInvalidPin as exc:
            self._close_devices()
            raise ConfigError(f"config key 'pads.gpio.pins': {exc}; expected BCM pin numbers of this board") from exc
        except GPIOPinInUse as exc:
            self._close_devices()
            raise ConfigError(f"config key 'pads.gpio.pins': {exc}; each pad needs a pin no other device uses") from exc
        except GPIOZeroError as exc:
            self._close_devices()
            raise PadSourceError(f"cannot set up GPIO pads on pins {list(self.pins)}: {exc}") from exc

    @staticmethod
    def _resolve_factory(pin_factory: Factory | str | None) -> tuple[Factory, bool]:
        from gpiozero import Device

        if isinstance(pin_factory, Factory):
            return pin_factory, False
        name = requested_factory_name(pin_factory)
        if name is None and Device.pin_factory is not None:
            return Device.pin_factory, False  # e.g. a test's MockFactory
        if name is not None and Device.pin_factory is not None and factory_name(Device.pin_factory) == name.lower():
            return Device.pin_factory, False  # share gpiozero's, as other devices would
        return load_pin_factory(name), True

    # -- the clock -------------------------------------------------------

    def _signed_diff_s(self, later: Any, earlier: Any) -> float:
        """later - earlier in seconds, signed, correct across tick wrap-around."""
        forward = self.factory.ticks_diff(later, earlier)
        backward = self.factory.ticks_diff(earlier, later)
        return forward if forward <= backward else -backward

    def _ticks_to_s(self, ticks: Any) -> float:
        """Seconds since the epoch on this source's clock (caller holds _clock_lock)."""
        offset = self._signed_diff_s(ticks, self._base_ticks)
        seconds = self._base_s + offset
        if offset > _REBASE_S:
            self._base_ticks, self._base_s = ticks, seconds
        return seconds

    def now_us(self) -> int:
        with self._clock_lock:
            if self._base_ticks is None:
                return 0
            return round(self._ticks_to_s(self.factory.ticks()) * 1_000_000)

    def ticks_to_us(self, ticks: Any) -> int:
        """Integer microseconds on this source's clock for a tick value of the pin factory."""
        with self._clock_lock:
            if self._base_ticks is None:
                raise PadSourceError("gpio: the source has not been started")
            return round(self._ticks_to_s(ticks) * 1_000_000)

    # -- edges -----------------------------------------------------------

    def _on_edge(self, pad: int, ticks: Any, pressed: bool) -> None:
        """Called by gpiozero (any thread) for every edge of pad ``pad``, with the edge's ticks."""
        if not self._running:
            return
        with self._clock_lock:
            timing = self._timing[pad]
            # Mask references are kept in µs on this source's clock, not raw ticks:
            # ticks may wrap (pigpio), the re-based clock does not.
            at_us = round(self._ticks_to_s(ticks) * 1_000_000)
            if not pressed:
                timing.last_release_us = at_us
                return
            masked = any(
                ref is not None and at_us - ref < self.mask_us
                for ref in (timing.last_onset_us, timing.last_release_us)
            )
            if masked:
                timing.masked += 1
                return
            timing.last_onset_us = at_us
        self.emit(PadHit(pad=pad, at_us=at_us, kind=HitKind.SLAP, strength=None, resolution_us=self.resolution_us))

    # -- lifecycle -------------------------------------------------------

    def start(self) -> None:
        """Take the clock's epoch and begin turning edges into hits."""
        if self._stopped:
            raise PadSourceError("gpio: a stopped source cannot be started again; open a new one")
        if self._running:
            return
        with self._clock_lock:
            self._base_ticks = self.factory.ticks()
            self._base_s = 0.0
        self.pressed_at_start = [d.pad for d in self.devices if d.is_active]
        if self.pressed_at_start:
            log.warning("gpio: pads %s read pressed at start (held down, or wired to ground?)", self.pressed_at_start)
        self._running = True
        self.notify("connected", f"GPIO pads on BCM pins {list(self.pins)} ({self.factory_name} pin factory)")

    def _close_devices(self) -> None:
        for device in self.devices:
            try:
                device.close()
            except Exception:  # closing must never stop the others from closing
                log.exception("gpio: closing pad %d failed", device.pad)
        self.devices = []

    def stop(self) -> None:
        """Release the pins (and the pin factory if this source created it). Idempotent."""
        if self._stopped:
            return
        self._running = False
        self._stopped = True
        self._close_devices()
        if self._owns_factory:
            try:
                self.factory.close()
            except Exception:
                log.exception("gpio: closing the pin factory failed")

    def status(self) -> dict[str, Any]:
        """Source status plus pins, pin factory, mask time and edges masked per pad."""
        status = super().status()
        with self._clock_lock:
            masked = {pad: t.masked for pad, t in self._timing.items()}
        status.update(
            pins=list(self.pins),
            pin_factory=self.factory_name,
            mask_ms=self.mask_s * 1000.0,
            masked_edges=masked,
            pressed_at_start=list(self.pressed_at_start),
        )
        return status

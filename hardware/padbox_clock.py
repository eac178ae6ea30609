"""The pad box's clock as the source clock: box microseconds plus an offset, read "now" through the fit.

A mixin of :class:`hardware.padbox.SerialPadBox` (which owns these attributes;
see its module docstring for how the offset is chosen at each box session).
"""

from __future__ import annotations

import threading
import time

from hardware.boxclock import BoxClock, ClockFit


class PadBoxClock:
    """``now_us`` and ``host_seconds_until`` on the box's clock, fitted against the host's."""

    offset_us: int
    box_clock: BoxClock
    _fit: ClockFit
    _now_floor: int
    _state: threading.Lock

    def now_us(self) -> int:
        """The box clock now (source clock): the fit of box against host time, at the host's now; never goes back."""
        with self._state:
            now = self.offset_us + self._fit.box_at(time.monotonic_ns() // 1000)
            self._now_floor = max(self._now_floor, now)
            return self._now_floor

    def host_seconds_until(self, at_us: int) -> float:
        """Host seconds until the source clock reads ``at_us``, at the box clock's fitted rate."""
        return (at_us - self.now_us()) / self._fit.rate / 1e6

    def _reference(self, device_us: int, host_us: int) -> None:
        """A line the box sent at ``device_us`` was read at host time ``host_us``: one more point for the clock fit."""
        fit = self.box_clock.add(device_us, host_us)  # the fitting itself outside the lock
        with self._state:
            self._fit = fit

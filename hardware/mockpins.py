"""Mock GPIO pins whose edges happen at CHOSEN times (the hardware seam for GPIO tests).

gpiozero's :class:`~gpiozero.pins.mock.MockPin` stamps every edge with the
time the ``drive_*`` call ran. Pad timing tests need edges at exact,
chosen instants (two pads 300 µs apart, a contact chattering every 1 ms), so
this module ships:

- :class:`TimedMockPin`: ``drive_low(ticks=...)`` / ``drive_high(ticks=...)``
  stamp the edge with the given ticks (seconds, like MockFactory's ticks);
- :class:`TimedMockFactory`: a MockFactory whose clock only moves when told
  (``advance``/``set_time``), so "now" and edge times are both under the
  test's control and nothing depends on how fast the machine is.

Both are real gpiozero classes: every device, reservation and callback path is
gpiozero's own; only the clock and the edge stamps are chosen.
"""

from __future__ import annotations

import threading

from gpiozero.pins.mock import MockFactory, MockPin, PinState


class TimedMockPin(MockPin):
    """A MockPin whose ``drive_low``/``drive_high`` accept the edge's ticks.

    Without ``ticks`` the edge is stamped with the factory's current ticks
    (for :class:`TimedMockFactory` that is its manual clock).
    """

    # Set by MockPin (gpiozero has no type hints): declared so the overrides type-check.
    _state: bool
    _last_change: float
    states: list[PinState]

    def __init__(self, factory: MockFactory, info: object) -> None:
        self._pending_ticks: float | None = None
        super().__init__(factory, info)

    def _change_state(self, value: bool) -> bool:
        if self._state == value:
            return False
        t = self._pending_ticks if self._pending_ticks is not None else self.factory.ticks()
        self._state = value
        self.states.append(PinState(t - self._last_change, value))
        self._last_change = t
        return True

    def clear_states(self) -> None:
        self._last_change = self.factory.ticks()
        self.states = [PinState(0.0, self._state)]

    def drive_low(self, ticks: float | None = None) -> None:
        """Pull the pin low; the edge happened at ``ticks`` (default: the factory's now)."""
        self._pending_ticks = ticks
        try:
            super().drive_low()
        finally:
            self._pending_ticks = None

    def drive_high(self, ticks: float | None = None) -> None:
        """Let the pin go high; the edge happened at ``ticks`` (default: the factory's now)."""
        self._pending_ticks = ticks
        try:
            super().drive_high()
        finally:
            self._pending_ticks = None


class TimedMockFactory(MockFactory):
    """A MockFactory with :class:`TimedMockPin` pins and a clock moved by hand.

    ``ticks()`` returns seconds as a float, like gpiozero's own mock, but the
    value only changes through :meth:`advance` or :meth:`set_time`.
    """

    def __init__(self, revision: str | None = None, start: float = 1000.0) -> None:
        super().__init__(revision=revision, pin_class=TimedMockPin)
        self._clock = float(start)
        self._clock_lock = threading.Lock()

    def ticks(self) -> float:
        with self._clock_lock:
            return self._clock

    @staticmethod
    def ticks_diff(later: float, earlier: float) -> float:
        return later - earlier

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds``; returns the new ticks."""
        if seconds < 0:
            raise ValueError("a clock only moves forward")
        with self._clock_lock:
            self._clock += seconds
            return self._clock

    def set_time(self, ticks: float) -> None:
        """Set the clock to ``ticks`` (never backwards)."""
        with self._clock_lock:
            if ticks < self._clock:
                raise ValueError("a clock only moves forward")
            self._clock = float(ticks)

"""The pad box's clock against the host's: offset and rate fitted from timed lines, with no I/O.

Every line the box stamps with its send time (HELLO, HB, LVL) gives one pair
``(box_us, host_us)``: the box's clock when it sent the line, and the host's
monotonic clock when the line was read. Two things separate them:

* **delay**, never negative: the UART, USB polling (an FTDI bridge holds
  short packets up to its 16 ms latency timer), the kernel and the reader
  thread. Usually a few milliseconds, now and then hundreds.
* **rate**: the box counts its own microseconds from a 16 MHz crystal or
  ceramic resonator that may run hundreds of ppm (resonators: thousands)
  fast or slow, so the box gains or loses that many µs every second.

Taking the latest heartbeat as "box time now" inherits that heartbeat's
delay, and carrying it forward at the host's rate drifts with the box's
crystal (500 ppm is 5 ms in 10 s). :class:`BoxClock` instead fits the line
``box = c + rate * host`` to the *upper envelope* of the pairs over a sliding
window (the last minute by default): in the (host, box) plane a delayed line
lies to the right of, that is below, the true line, and no line can lie
above it. So:

1. the upper convex hull of the window's points is taken (the points with
   the least delay; a late point lies under the hull and changes nothing);
2. the rate is the least-squares slope of that hull over the middle 60 % of
   the window (the hull's two ends are the window's first and last points
   whatever their delay, so they are left out);
3. the line is then raised until it touches the highest point: no point may
   lie above it, and the one it touches is the line with the least delay.

While the window spans less than ``min_rate_span_us`` (10 s: the first
seconds after a HELLO), a slope from so few points would be worse than
none: the fit is offset-only, at the last fitted rate (1.0 after a
reset), raised to touch the points of the last ``recent_us``.

A box reset (a new HELLO) is the caller's cue to :meth:`BoxClock.reset`. A
point far *above* the fit (more than ``step_us`` plus ``max_ppm`` of the
time since the previous point) cannot be a delay: the box clock stepped, so
the window starts over from that point. A gap needs nothing: the window is
measured on the host clock, older points simply expire, and the last fitted
rate carries the estimate across until the window holds enough again.

All times are integer microseconds; the fit itself works in floats relative
to the window's first point, so 64-bit unwrapped box times lose nothing.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: Samples of the upper hull the slope is fitted to.
HULL_SAMPLES = 33


@dataclass(frozen=True, slots=True)
class ClockFit:
    """A line mapping host monotonic µs to box µs: ``box = box_ref_us + rate * (host - host_ref_us)``.

    ``rate_fitted`` is False while the rate is assumed (offset-only fit).
    ``points`` and ``span_us`` describe the window it was fitted to.
    """

    host_ref_us: int
    box_ref_us: float
    rate: float
    rate_fitted: bool
    points: int
    span_us: int

    @property
    def ppm(self) -> float:
        """How fast the box clock runs against the host's, in parts per million (negative: slow)."""
        return (self.rate - 1.0) * 1e6

    def box_at(self, host_us: int) -> int:
        """The box clock's value at host monotonic time ``host_us``."""
        return round(self.box_ref_us + self.rate * (host_us - self.host_ref_us))

    def host_at(self, box_us: int) -> int:
        """The host monotonic time at which the box clock reads ``box_us``."""
        return self.host_ref_us + round((box_us - self.box_ref_us) / self.rate)


class BoxClock:
    """Fits the box clock against the host clock from ``(box_us, host_us)`` pairs; no I/O, no threads.

    Args:
        window_us: how much host time of points the fit keeps (default 60 s).
        min_rate_span_us: the window must span this much before the rate is
            fitted (default 10 s); until then the fit is offset-only.
        recent_us: an offset-only fit touches the points of this last stretch.
        min_spacing_us: points closer than this to the first point of their
            group are merged, keeping the least delayed (bounds the work
            while LVL lines stream every 50 ms; heartbeats are 500 ms apart).
        trim: the share of the window at each end left out of the slope fit.
        max_ppm: the largest rate error believed; a fitted rate is clamped to it.
        step_us: a point this much earlier than the fit allows is a clock step.
        max_points: a hard cap on the points kept, whatever the spacing.

    Not thread-safe: one thread (the serial reader) adds; the immutable
    :class:`ClockFit` from :attr:`fit` may be handed to other threads.
    """

    def __init__(
        self,
        window_us: int = 60_000_000,
        min_rate_span_us: int = 10_000_000,
        recent_us: int = 2_000_000,
        min_spacing_us: int = 250_000,
        trim: float = 0.2,
        max_ppm: float = 20_000.0,
        step_us: int = 200_000,
        max_points: int = 2_000,
    ) -> None:
        if window_us <= 0 or min_rate_span_us <= 0 or recent_us < 0 or min_spacing_us < 0:
            raise ValueError("window_us and min_rate_span_us must be positive, recent_us and min_spacing_us not negative")
        if not 0.0 <= trim < 0.5:
            raise ValueError(f"trim must be at least 0 and under 0.5, got {trim!r}")
        if not 0.0 < max_ppm < 1e6 or step_us <= 0 or max_points < 2:
            raise ValueError("max_ppm must be in (0, 1e6), step_us positive, max_points at least 2")
        self.window_us = window_us
        self.min_rate_span_us = min_rate_span_us
        self.recent_us = recent_us
        self.min_spacing_us = min_spacing_us
        self.trim = trim
        self.max_ppm = max_ppm
        self.step_us = step_us
        self.max_points = max_points
        self._points: deque[tuple[int, int]] = deque()  # (host_us, box_us), host_us ascending
        self._group_start = 0  # host_us of the first point merged into the last kept one
        self._rate_hint = 1.0
        self._fit: ClockFit | None = None
        #: The latest pair given to add(), as ``(box_us, host_us)``, merged or not (None after a reset).
        self.last_pair: tuple[int, int] | None = None
        #: pairs given to add(), pairs merged into a neighbour, clock steps (window restarted), resets.
        self.counters: dict[str, int] = {"added": 0, "merged": 0, "steps": 0, "resets": 0}

    @property
    def fit(self) -> ClockFit | None:
        """The current fit, or None before the first point (and after :meth:`reset`)."""
        return self._fit

    def reset(self) -> None:
        """Forget everything, the rate included: the box restarted (a new HELLO), or another box is there."""
        self._points.clear()
        self._rate_hint = 1.0
        self._fit = None
        self.last_pair = None
        self.counters["resets"] += 1

    def add(self, box_us: int, host_us: int) -> ClockFit:
        """One line sent at box time ``box_us`` was read at host monotonic time ``host_us``; returns the new fit."""
        self.counters["added"] += 1
        self.last_pair = (box_us, host_us)
        points = self._points
        if points and host_us < points[-1][0]:
            host_us = points[-1][0]  # the host clock is monotonic; a caller's rounding must not break the order
        fit = self._fit
        if fit is not None and points:
            allowed = self.step_us + self.max_ppm * 1e-6 * (host_us - points[-1][0])
            early = box_us - (fit.box_ref_us + fit.rate * (host_us - fit.host_ref_us))
            if early > allowed:
                # Earlier than any delay allows: the box clock stepped, or (before the rate is
                # fitted, from a handful of points) every point so far was late. Either way the
                # old points are worth nothing.
                if fit.rate_fitted:
                    self.counters["steps"] += 1
                    log.warning("box clock: a line %.1f ms earlier than possible; the clock stepped, fit starts over", early / 1000)
                points.clear()
        if points and host_us - self._group_start < self.min_spacing_us:
            self.counters["merged"] += 1
            last_host, last_box = points[-1]
            rate = self._rate_hint
            if box_us - rate * (host_us - last_host) > last_box:  # less delayed than the one kept
                points[-1] = (host_us, box_us)
        else:
            points.append((host_us, box_us))
            self._group_start = host_us
        while len(points) > self.max_points or (len(points) > 1 and points[0][0] < points[-1][0] - self.window_us):
            points.popleft()
        self._fit = self._compute()
        return self._fit

    def status(self) -> dict[str, Any]:
        """What status pages show: the rate in ppm, whether it is fitted, the window, the counters."""
        fit = self._fit
        return {
            "ppm": round(fit.ppm, 1) if fit else None,
            "rate_fitted": fit.rate_fitted if fit else False,
            "points": len(self._points),
            "span_s": round(fit.span_us / 1e6, 1) if fit else 0.0,
            **self.counters,
        }

    # ------------------------------------------------------------ the fit

    def _compute(self) -> ClockFit:
        points = self._points
        host0, box0 = points[0]
        xs = [float(h - host0) for h, _ in points]
        ys = [float(b - box0) for _, b in points]
        span = xs[-1]
        if span >= self.min_rate_span_us and len(points) >= 3:
            rate = self._hull_slope(xs, ys)
            bound = self.max_ppm * 1e-6
            rate = min(1.0 + bound, max(1.0 - bound, rate))
            self._rate_hint = rate
            fitted = True
            first = 0
        else:
            rate = self._rate_hint
            fitted = False
            first = next(i for i, x in enumerate(xs) if x >= span - self.recent_us)
        intercept = max(y - rate * x for x, y in zip(xs[first:], ys[first:]))
        return ClockFit(
            host_ref_us=points[-1][0],
            box_ref_us=box0 + intercept + rate * span,
            rate=rate,
            rate_fitted=fitted,
            points=len(points),
            span_us=int(span),
        )

    def _hull_slope(self, xs: list[float], ys: list[float]) -> float:
        """Least-squares slope of the upper hull, sampled evenly over the window minus its trimmed ends."""
        hull: list[tuple[float, float]] = []
        for x, y in zip(xs, ys):
            while len(hull) >= 2:
                (x1, y1), (x2, y2) = hull[-2], hull[-1]
                # Drop the middle point when it is on or under the line from hull[-2] to (x, y).
                if (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1) >= 0:
                    hull.pop()
                else:
                    break
            hull.append((x, y))
        lo = xs[0] + self.trim * (xs[-1] - xs[0])
        hi = xs[-1] - self.trim * (xs[-1] - xs[0])
        samples: list[tuple[float, float]] = []
        j = 0
        for k in range(HULL_SAMPLES):
            x = lo + (hi - lo) * k / (HULL_SAMPLES - 1)
            while j < len(hull) - 2 and hull[j + 1][0] < x:
                j += 1
            (x1, y1), (x2, y2) = hull[j], hull[j + 1]
            y = y1 if x2 == x1 else y1 + (y2 - y1) * (x - x1) / (x2 - x1)
            samples.append((x, y))
        mx = sum(x for x, _ in samples) / len(samples)
        my = sum(y for _, y in samples) / len(samples)
        sxx = sum((x - mx) ** 2 for x, _ in samples)
        sxy = sum((x - mx) * (y - my) for x, y in samples)
        return sxy / sxx if sxx > 0 else self._rate_hint

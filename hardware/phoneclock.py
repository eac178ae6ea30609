"""A phone's clock against the pad clock, from timed round trips: offset, drift and a hard error bound. No I/O.

One round trip gives four stamps: the phone sends at ``t1`` (its own clock),
the table receives it at ``t2`` and answers at ``t3`` (the pad clock), the
phone reads the answer at ``t4`` (its clock). Whatever the network did, the
request cannot arrive before it was sent and the answer cannot arrive before
it was sent, so the pad clock's offset from the phone clock, ``theta(x) =
pad(x) - x`` at phone time ``x``, obeys

    theta(t1) <= t2 - t1        (the request took no negative time)
    theta(t4) >= t3 - t4        (nor did the answer)

NTP takes the midpoint of one round's interval; here every round in the
window is a pair of such half-planes on a drifting offset ``theta(x) = a +
b * (x - ref)``, with the rate ``b`` (phone crystal against pad clock) no
larger than ``max_ppm``. The set of lines ``(a, b)`` that break no round's
limits is a convex polygon, kept by clipping a box with each round's two
half-planes. At any phone time the polygon's lines give the least and the
greatest offset still possible, and the error bound is how far the farthest
of them lies from the estimate. The estimate is the line at the rate where the polygon is widest (every round's
least delay still inside), through the middle of that chord. So:

* the fastest rounds in each direction decide (a slow round's half-plane lies
  outside the polygon and cuts nothing), with no threshold to tune;
* drift is tracked without being fitted: the polygon narrows ``b`` as the
  window lengthens, and a time away from the rounds (a hit 2 s after the last
  answer) widens the bound by what the possible rates allow;
* the bound holds whenever delays are not negative and the drift is linear
  within ``max_ppm`` over the window. What no round trip can see is a
  difference between the two directions' *least* delays; the bound includes
  it (it is half the width), the estimate does not.

A round that no line can satisfy together with the older ones (the phone's
clock stepped, the page was frozen, the drift is not linear over so long)
restarts the window from the newest rounds that agree with each other.

Each new round only clips the last polygon (moved to its time); the whole
window is solved again every :data:`FULL_SOLVE_EVERY` rounds, so rounds that
left the window stop limiting it, and whenever a round came out of order.

Stamps are integer microseconds; the polygon works in floats relative to the
newest round, so phone stamps of any size lose nothing.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

#: A vertex of the feasible polygon: (a, b), offset at the reference time and rate.
Vertex = tuple[float, float]


@dataclass(frozen=True, slots=True)
class SyncRound:
    """One round trip: ``t1``/``t4`` on the phone's clock, ``t2``/``t3`` on the pad clock, all in µs."""

    t1: int
    t2: int
    t3: int
    t4: int

    def __post_init__(self) -> None:
        for name in ("t1", "t2", "t3", "t4"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be whole microseconds, got {value!r}")
        if self.t4 < self.t1:
            raise ValueError(f"the answer came back (t4={self.t4}) before the request left (t1={self.t1})")
        if self.t3 < self.t2:
            raise ValueError(f"the table answered (t3={self.t3}) before it received the request (t2={self.t2})")

    @property
    def delay_us(self) -> int:
        """Time on the wire, both ways together (the round trip less the table's own time)."""
        return (self.t4 - self.t1) - (self.t3 - self.t2)


@dataclass(frozen=True, slots=True)
class PhoneFit:
    """What the rounds in the window allow: the polygon of offset lines, and how to read it.

    ``ref_us`` is the phone time the polygon's offsets ``a`` are measured at:
    the newest round's ``t4``, so also how fresh the fit is.
    """

    ref_us: int
    vertices: tuple[Vertex, ...]
    rounds: int
    span_us: int
    best_delay_us: int
    #: How far the estimate lies from the chord's middle (µs): the floor correction of :func:`floor_shift`.
    shift_us: float = 0.0
    #: chord_mid, worked out once on first use (it tries RATE_STEPS rates: a fraction of a millisecond).
    _mid: Vertex | None = field(default=None, compare=False, repr=False)

    def offset_range(self, phone_us: int) -> tuple[float, float]:
        """The least and greatest pad-minus-phone offset possible at phone time ``phone_us``."""
        dx = float(phone_us - self.ref_us)
        values = [a + b * dx for a, b in self.vertices]
        return min(values), max(values)

    def to_pad(self, phone_us: int) -> tuple[int, int]:
        """``(pad_us, error_us)``: the pad clock at phone time ``phone_us``, and how far off it may be either way.

        The estimate is the line of :attr:`chord_mid`; the error bound is the
        farthest any possible line lies from it there, so it holds whichever
        line is true.
        """
        lo, hi = self.offset_range(phone_us)
        mid = self._line(phone_us)
        return phone_us + round(mid), max(1, int(max(hi - mid, mid - lo)) + 1)

    def error_us(self, phone_us: int) -> int:
        """The error bound of :meth:`to_pad` at ``phone_us`` (µs, either way)."""
        return self.to_pad(phone_us)[1]

    @property
    def chord_mid(self) -> Vertex:
        """The estimate's line ``(a, b)``: the middle of the polygon's chord at the rate of its widest stretch.

        The chord at rate ``b`` is the range of offsets every round allows for
        lines of that slope. At the true rate every round's least delay stays
        inside it; a wrong rate tilts old rounds against new ones and narrows
        it. Over a short window the widths of nearby rates differ by less than
        the rounds' noise, so the rate taken is the middle of the stretch of
        rates whose chord is within :data:`PLATEAU_US` of the widest, and the
        line the middle of the chord there.
        """
        if self._mid is None:
            object.__setattr__(self, "_mid", self._find_mid())  # frozen: a cache, not a change
        assert self._mid is not None
        return self._mid

    def _find_mid(self) -> Vertex:
        rates = [v[1] for v in self.vertices]
        lo_b, hi_b = min(rates), max(rates)
        grid = [lo_b + (hi_b - lo_b) * k / RATE_STEPS for k in range(RATE_STEPS + 1)]
        widths = [self._width(b) for b in grid]
        top = max(widths)
        near = [b for b, w in zip(grid, widths, strict=True) if w >= top - PLATEAU_US]
        b = (near[0] + near[-1]) / 2
        lo, hi = self.chord_at(b)
        if lo > hi:  # a polygon thinner than the rounding: take the vertex nearest that rate
            return min(self.vertices, key=lambda v: abs(v[1] - b))
        return (lo + hi) / 2, b

    def _line(self, phone_us: int) -> float:
        a, b = self.chord_mid
        return a + self.shift_us + b * float(phone_us - self.ref_us)

    def _width(self, b: float) -> float:
        lo, hi = self.chord_at(b)
        return hi - lo

    def chord_at(self, b_c: float) -> tuple[float, float]:
        """The offsets ``a`` the polygon allows at rate ``b_c``: (least, greatest); (1, 0) when none."""
        found: list[float] = []
        vs = self.vertices
        for (a1, b1), (a2, b2) in zip(vs, vs[1:] + vs[:1], strict=True):
            if (b1 - b_c) * (b2 - b_c) <= 0:
                found.append(a1 if b1 == b2 else a1 + (a2 - a1) * (b_c - b1) / (b2 - b1))
        return (min(found), max(found)) if found else (1.0, 0.0)

    @property
    def ppm_range(self) -> tuple[float, float]:
        """The least and greatest rate still possible, in ppm (phone against pad clock)."""
        rates = [b for _, b in self.vertices]
        return min(rates) * 1e6, max(rates) * 1e6


#: Rates tried across the polygon's range when looking for its widest chord.
RATE_STEPS = 64
#: Chords this close (µs) to the widest count as equally wide: the rounds' stamps are not finer than that.
PLATEAU_US = 500.0


#: Rounds next to the fastest, per direction, that estimate how far the fastest still lies above its floor.
FLOOR_ROUNDS = 4
#: The floor shift is worked out again every this many rounds (and while the window is short), kept between:
#: it follows the few fastest rounds, which change seldom, and costs the table a chord and a pass over the window.
SHIFT_EVERY = 10


def floor_shift(fit: PhoneFit, rounds: "deque[SyncRound] | list[SyncRound]", floor_rounds: int = FLOOR_ROUNDS) -> float:
    """How far to move the chord's middle so the two directions' fastest rounds count equally (µs).

    The chord's ends are the fastest round each way, each still some excess above its direction's
    floor (the least delay that way). The middle is right only when both excesses are equal; they
    are not when the two directions' delays are shaped differently (Wi-Fi's up and down are not
    alike): the direction whose delays seldom come near the floor leaves its end farther out, and
    the middle leans that way by half the difference. The spacing of the few fastest rounds above
    the fastest estimates that excess (for delays spread evenly near their floor, the fastest lies
    above the floor by one spacing on average), so the estimate moves by half the difference of the
    two directions' spacings, kept inside the chord. The bound is the polygon's and stays hard.
    """
    if floor_rounds < 1 or len(rounds) <= floor_rounds:
        return 0.0
    a, b = fit.chord_mid
    ref = fit.ref_us
    # Each round's room above the line: the request's (its upper limit less the line at t1), the answer's.
    ups = heapq.nsmallest(floor_rounds + 1, ((r.t2 - r.t1) - (a + b * (r.t1 - ref)) for r in rounds))
    downs = heapq.nsmallest(floor_rounds + 1, ((a + b * (r.t4 - ref)) - (r.t3 - r.t4) for r in rounds))
    excess_up = (ups[-1] - ups[0]) / floor_rounds
    excess_down = (downs[-1] - downs[0]) / floor_rounds
    shift = (excess_down - excess_up) / 2
    # Inside the chord: the line at the fastest request's limit above, the fastest answer's below.
    return max(-downs[0], min(ups[0], shift))


#: A full solve of the window every this many rounds; between them each round only clips the last polygon
#: (a full solve of 400 rounds costs milliseconds, a clip microseconds).
FULL_SOLVE_EVERY = 25


def _clip(polygon: list[Vertex], u: float, c: float, upper: bool) -> list[Vertex]:
    """The part of convex ``polygon`` where ``a + b*u <= c`` (``upper``) or ``>= c`` (Sutherland-Hodgman, one edge)."""
    sign = 1.0 if upper else -1.0

    def inside(v: Vertex) -> float:
        return sign * (c - (v[0] + v[1] * u))  # >= 0 inside

    out: list[Vertex] = []
    n = len(polygon)
    for i in range(n):
        p, q = polygon[i], polygon[(i + 1) % n]
        fp, fq = inside(p), inside(q)
        if fp >= 0:
            out.append(p)
        if (fp >= 0) != (fq >= 0):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


class PhoneClock:
    """Maps one phone's stamps onto the pad clock from its round trips; no I/O, no threads.

    Args:
        max_ppm: the largest rate difference believed between the phone's
            clock and the pad clock (phone crystals: tens of ppm; a clock
            being slewed by NTP: up to 500).
        window_us: how much phone time of rounds the polygon keeps (default 120 s).
        max_rounds: a hard cap on the rounds kept.
        floor_rounds: rounds next to the fastest each way that set the floor shift
            (:func:`floor_shift`); 0 keeps the estimate at the chord's middle.

    Not thread-safe: the caller serialises :meth:`add`; the immutable
    :class:`PhoneFit` from :attr:`fit` may be read from any thread.
    """

    def __init__(self, max_ppm: float = 500.0, window_us: int = 120_000_000, max_rounds: int = 400,
                 floor_rounds: int | None = None) -> None:
        if not 0.0 < max_ppm < 1e5:
            raise ValueError(f"max_ppm must be above 0 and under 100000, got {max_ppm!r}")
        if window_us <= 0 or max_rounds < 1:
            raise ValueError("window_us and max_rounds must be positive")
        self.max_rate = max_ppm * 1e-6
        self.window_us = window_us
        self.max_rounds = max_rounds
        self.floor_rounds = FLOOR_ROUNDS if floor_rounds is None else floor_rounds
        self._rounds: deque[SyncRound] = deque()
        self._fit: PhoneFit | None = None
        self._since_full = 0  # rounds added by clipping the last polygon since the last full solve
        #: rounds given to add(); restarts (a round no line could meet with the older ones).
        self.counters: dict[str, int] = {"rounds": 0, "restarts": 0}

    @property
    def fit(self) -> PhoneFit | None:
        """The current fit, or None before the first round."""
        return self._fit

    @property
    def rounds(self) -> tuple[SyncRound, ...]:
        """The rounds in the window, in phone time order."""
        return tuple(self._rounds)

    def reset(self) -> None:
        """Forget every round (the phone reloaded the page: its clock starts again)."""
        self._rounds.clear()
        self._fit = None

    def add(self, round_: SyncRound) -> PhoneFit:
        """Take one round trip into the window; returns the new fit."""
        self.counters["rounds"] += 1
        rounds = self._rounds
        # Answers may be reported out of order (requests overlap): keep the window in phone time order.
        at = len(rounds)
        while at > 0 and rounds[at - 1].t4 > round_.t4:
            at -= 1
        rounds.insert(at, round_)
        newest = rounds[-1].t4
        while len(rounds) > self.max_rounds or rounds[0].t4 < newest - self.window_us:
            rounds.popleft()
        fit: PhoneFit | None = None
        self._since_full += 1
        if self._fit is not None and rounds[-1] is round_ and self._since_full < FULL_SOLVE_EVERY:
            fit = self._extend(self._fit, round_, rounds)
        if fit is None:
            fit = self._solve(list(rounds))
            self._since_full = 0
        if fit is None:
            # The newest round contradicts the older ones: keep the newest that agree with each other.
            self.counters["restarts"] += 1
            kept: list[SyncRound] = [rounds[-1]]
            fit = self._solve(kept)
            for older in reversed(list(rounds)[:-1]):
                trial = self._solve([older, *kept])
                if trial is None:
                    break
                kept.insert(0, older)
                fit = trial
            rounds.clear()
            rounds.extend(kept)
        assert fit is not None
        if self.floor_rounds:
            if self._fit is None or len(rounds) < 4 * self.floor_rounds or self.counters["rounds"] % SHIFT_EVERY == 0:
                shift = floor_shift(fit, rounds, self.floor_rounds)
            else:
                shift = self._fit.shift_us
            fit = replace(fit, shift_us=shift)
        self._fit = fit
        return fit

    def _extend(self, fit: PhoneFit, round_: SyncRound, rounds: deque[SyncRound]) -> PhoneFit | None:
        """The last polygon moved to the new round's reference time and clipped by its two limits
        (None when that leaves nothing: a full solve decides then). Rounds that left the window since
        the last full solve still limit it; they are true limits, only older than the window wants."""
        shift = float(round_.t4 - fit.ref_us)
        polygon = [(a + b * shift, b) for a, b in fit.vertices]
        polygon = _clip(polygon, float(round_.t1 - round_.t4), round_.t2 - round_.t1 + 0.5, upper=True)
        if polygon:
            polygon = _clip(polygon, 0.0, round_.t3 - round_.t4 - 0.5, upper=False)
        if not polygon:
            return None
        return PhoneFit(ref_us=round_.t4, vertices=tuple(polygon), rounds=len(rounds),
                        span_us=round_.t4 - rounds[0].t1, best_delay_us=min(fit.best_delay_us, round_.delay_us))

    def _solve(self, rounds: list[SyncRound]) -> PhoneFit | None:
        """The polygon of lines meeting every round's limits, or None when no line does."""
        newest = rounds[-1]
        ref = newest.t4
        # A box around the newest round's interval: nothing outside it can meet that round.
        lo, hi = float(newest.t3 - newest.t4), float(newest.t2 - newest.t1)
        span = float(newest.t4 - rounds[0].t1) + 1.0
        pad = self.max_rate * span + 1.0
        r = self.max_rate
        polygon: list[Vertex] = [(lo - pad, -r), (hi + pad, -r), (hi + pad, r), (lo - pad, r)]
        for rd in reversed(rounds):
            # Half a microsecond of slack: the stamps are rounded to whole µs.
            polygon = _clip(polygon, float(rd.t1 - ref), rd.t2 - rd.t1 + 0.5, upper=True)
            if not polygon:
                return None
            polygon = _clip(polygon, float(rd.t4 - ref), rd.t3 - rd.t4 - 0.5, upper=False)
            if not polygon:
                return None
        return PhoneFit(
            ref_us=ref,
            vertices=tuple(polygon),
            rounds=len(rounds),
            span_us=newest.t4 - rounds[0].t1,
            best_delay_us=min(rd.delay_us for rd in rounds),
        )

    def status(self) -> dict[str, Any]:
        """What status pages show: rounds kept, their span, the best delay, the rate range, the counters."""
        fit = self._fit
        lo, hi = fit.ppm_range if fit else (None, None)
        return {
            "rounds": fit.rounds if fit else 0,
            "span_s": round(fit.span_us / 1e6, 1) if fit else 0.0,
            "best_delay_ms": round(fit.best_delay_us / 1000, 1) if fit else None,
            "ppm_min": round(lo, 1) if lo is not None else None,
            "ppm_max": round(hi, 1) if hi is not None else None,
            **self.counters,
        }

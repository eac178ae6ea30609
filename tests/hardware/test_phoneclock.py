"""hardware.phoneclock: a phone's clock onto the pad clock from round trips, with a bound that holds.

Round trips are generated from a known truth (the phone's clock runs
``ppm`` off the pad clock from an offset of its own; each direction's delay
is random), so every test can check the estimate and the bound against it.
"""

from __future__ import annotations

import random

import pytest

from hardware.phoneclock import PhoneClock, SyncRound


class Truth:
    """A phone clock ``ppm`` off the pad clock: ``phone = offset + pad * (1 + ppm)``."""

    def __init__(self, offset_us: int, ppm: float) -> None:
        self.offset_us = offset_us
        self.rate = 1.0 + ppm * 1e-6

    def phone(self, pad_us: float) -> int:
        return self.offset_us + round(pad_us * self.rate)

    def round_trip(self, pad_us: float, up_us: float, down_us: float, serve_us: int = 200) -> SyncRound:
        t2 = round(pad_us + up_us)
        return SyncRound(self.phone(pad_us), t2, t2 + serve_us, self.phone(t2 + serve_us + down_us))


def synced(truth: Truth, rng: random.Random, seconds: float, hz: float, low_ms: float = 5, high_ms: float = 80,
           loss: float = 0.0) -> tuple[PhoneClock, float]:
    clock = PhoneClock()
    t = 1_000_000.0
    end = t + seconds * 1e6
    while t < end:
        if rng.random() >= loss:
            up = rng.uniform(low_ms, high_ms) * 1000
            down = (low_ms + (high_ms - low_ms) * rng.random() ** 2) * 1000
            clock.add(truth.round_trip(t, up, down))
        t += 1e6 / hz
    return clock, t


@pytest.mark.parametrize("ppm", [-200.0, 0.0, 200.0, 480.0])
@pytest.mark.parametrize("seed", range(5))
def test_the_bound_holds_and_the_estimate_is_inside_it(ppm: float, seed: int) -> None:
    rng = random.Random(seed)
    truth = Truth(rng.randrange(-10**9, 10**9), ppm)
    clock, t = synced(truth, rng, seconds=6, hz=20, loss=0.1)
    fit = clock.fit
    assert fit is not None
    for later_us in (0, 200_000, 2_000_000):  # a touch now, soon, and after a while without a round
        true_pad = t + later_us
        est, err = fit.to_pad(truth.phone(true_pad))
        assert abs(est - true_pad) <= err, (est - true_pad, err)
    # The bound grows with time away from the rounds (drift within max_ppm), never shrinks.
    assert fit.error_us(truth.phone(t + 5_000_000)) >= fit.error_us(truth.phone(t))


def test_more_rounds_give_a_tighter_bound() -> None:
    truth = Truth(5_000_000_000, 150.0)

    def bound(seconds: float, seed: int) -> int:
        clock, t = synced(truth, random.Random(seed), seconds=seconds, hz=20)
        assert clock.fit is not None
        return clock.fit.error_us(truth.phone(t))

    short = sorted(bound(0.5, seed) for seed in range(9))
    long_ = sorted(bound(6.0, seed) for seed in range(9))
    assert long_[4] < short[4]  # the medians


def test_one_round_is_the_ntp_interval() -> None:
    truth = Truth(1_000, 0.0)
    clock = PhoneClock()
    fit = clock.add(truth.round_trip(10_000_000, up_us=10_000, down_us=30_000))
    lo, hi = fit.offset_range(truth.phone(10_000_000))
    # offset <= t2 - t1 = -1000 + 10000 ; offset >= t3 - t4 = -1000 - 30000 (plus half a µs of rounding slack)
    # (the two limits are 40 ms apart in time: the rate, unknown within 500 ppm, widens each by 20 µs)
    assert lo == pytest.approx(-31_000, abs=25)
    assert hi == pytest.approx(9_000, abs=25)
    assert fit.best_delay_us == 40_000


def test_answers_reported_out_of_order_are_taken_in_phone_time_order() -> None:
    truth = Truth(777, 100.0)
    rng = random.Random(4)
    rounds = [truth.round_trip(1e6 + i * 50_000, rng.uniform(5e3, 8e4), rng.uniform(5e3, 8e4)) for i in range(40)]
    ordered, shuffled = PhoneClock(), PhoneClock()
    for r in rounds:
        ordered.add(r)
    mixed = rounds[:]
    for i in range(0, len(mixed) - 1, 2):
        mixed[i], mixed[i + 1] = mixed[i + 1], mixed[i]
    for r in mixed:
        shuffled.add(r)
    assert ordered.fit and shuffled.fit
    x = truth.phone(3e6)
    assert ordered.fit.to_pad(x) == shuffled.fit.to_pad(x)


def test_a_clock_step_starts_the_window_again() -> None:
    truth = Truth(0, 0.0)
    rng = random.Random(2)
    clock, t = synced(truth, rng, seconds=3, hz=20)
    stepped = Truth(80_000_000, 0.0)  # the phone's clock jumped 80 s (a page frozen and thawed)
    for i in range(10):
        clock.add(stepped.round_trip(t + i * 50_000, 6_000, 6_000))
    assert clock.counters["restarts"] >= 1
    assert clock.fit is not None
    est, err = clock.fit.to_pad(stepped.phone(t + 500_000))
    assert abs(est - (t + 500_000)) <= err


@pytest.mark.parametrize("stamps, message", [
    ((100, 50, 60, 90), "before the request left"),
    ((0, 50, 40, 90), "before it received"),
    ((0, 1.5, 2, 3), "whole microseconds"),
])
def test_an_impossible_round_is_refused(stamps: tuple[int, int, int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SyncRound(*stamps)


def test_clipping_round_by_round_gives_the_polygon_a_full_solve_gives() -> None:
    truth = Truth(123_456_789, -180.0)
    rng = random.Random(9)
    clock = PhoneClock()
    for i in range(60):  # none leaves the window: the clipped polygon must be the full solve's
        clock.add(truth.round_trip(1e6 + i * 50_000, rng.uniform(5e3, 8e4), rng.uniform(5e3, 8e4)))
        fit, full = clock.fit, clock._solve(list(clock.rounds))  # noqa: SLF001 (the reference computation)
        assert fit is not None and full is not None
        x = truth.phone(1e6 + i * 50_000 + 100_000)
        lo, hi = fit.offset_range(x)
        full_lo, full_hi = full.offset_range(x)
        assert lo == pytest.approx(full_lo, abs=1.0) and hi == pytest.approx(full_hi, abs=1.0)


def test_directions_shaped_differently_do_not_pull_the_estimate_their_way() -> None:
    """Up uniform over 5-80 ms, down mostly near 5 ms: the chord's middle leans up; the floor shift undoes most of it."""
    from hardware.phoneclock import FLOOR_ROUNDS

    assert FLOOR_ROUNDS > 0
    middle_errors, errors = [], []
    for seed in range(12):
        rng = random.Random(seed)
        truth = Truth(rng.randrange(-10**9, 10**9), rng.uniform(-200, 200))
        clock, t = synced(truth, rng, seconds=6, hz=20)
        fit = clock.fit
        assert fit is not None
        x = truth.phone(t)
        est, err = fit.to_pad(x)
        a, b = fit.chord_mid
        middle = x + a + b * (x - fit.ref_us)
        assert abs(est - t) <= err  # still inside the hard bound
        assert fit.shift_us < 0  # the request's end is the one left farther out
        errors.append(est - t)
        middle_errors.append(middle - t)
    mean = sum(errors) / len(errors)
    middle_mean = sum(middle_errors) / len(middle_errors)
    assert middle_mean > 0 and abs(mean) < middle_mean / 2

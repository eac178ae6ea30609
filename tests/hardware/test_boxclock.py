"""The box clock fit (hardware/boxclock.py): synthetic heartbeats, then the emulator through SerialPadBox.

The synthetic streams are what a pad box's heartbeats look like to the host:
one line every 500 ms (±50 ms) stamped with the box clock, which runs N ppm
off the host's, read after a one-sided delay. The error of a fit is measured
against the true mapping (the box clock at a host instant, with no delay),
over the whole window and up to 10 s past the last heartbeat.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import pytest
from helpers.padbox import private_emulator_dir  # noqa: F401

from hardware import protocol as p
from hardware.boxclock import BoxClock, ClockFit
from hardware.emulator import PadBoxEmulator
from hardware.padbox import SerialPadBox

WAIT_S = 10.0
SECOND = 1_000_000


@dataclass
class Stream:
    """Heartbeats as the host sees them, and the truth they came from."""

    pairs: list[tuple[int, int]]  # (box_us, host_us read)
    box0: int
    host0: int
    rate: float

    def true_box(self, host_us: float) -> float:
        """The box clock at host time ``host_us`` (what a zero-delay line would say)."""
        return self.box0 + self.rate * (host_us - self.host0)


def usb_latency(rng: random.Random) -> float:
    """A USB CDC bridge read by a thread: 0-1 ms of USB frame, a scheduling tail, at most 20 ms."""
    return min(20_000.0, rng.uniform(0, 1_000) + rng.expovariate(1 / 1_500))


def timer_latency(rng: random.Random) -> float:
    """The worst case: an FTDI bridge's 16 ms latency timer and more: anything in 0-20 ms, evenly."""
    return rng.uniform(0, 20_000)


def heartbeats(
    seed: int,
    ppm: float,
    seconds: float = 30,
    latency: Callable[[random.Random], float] = usb_latency,
    outliers: float = 0.03,
    period_us: int = 500_000,
) -> Stream:
    """Heartbeats for ``seconds`` from a box ``ppm`` fast; ``outliers`` of them 200 ms later still."""
    rng = random.Random(seed)
    box0 = rng.randrange(SECOND, 1000 * SECOND)
    host0 = rng.randrange(1000 * SECOND, 10**6 * SECOND)
    rate = 1 + ppm * 1e-6
    pairs = []
    for i in range(int(seconds * SECOND / period_us) + 1):
        sent = host0 + i * period_us + rng.randrange(-50_000, 50_000)
        delay = latency(rng) + (200_000 if rng.random() < outliers else 0)
        pairs.append((round(box0 + rate * (sent - host0)), round(sent + delay)))
    return Stream(pairs, box0, host0, rate)


def feed(stream: Stream, clock: BoxClock | None = None) -> tuple[BoxClock, ClockFit]:
    clock = clock or BoxClock()
    fit = None
    for box_us, host_us in stream.pairs:
        fit = clock.add(box_us, host_us)
    assert fit is not None
    return clock, fit


def fit_error(stream: Stream, fit: ClockFit, ahead_us: int = 10 * SECOND) -> float:
    """Largest |fit - truth| from the first heartbeat to ``ahead_us`` past the last one."""
    first, last = stream.pairs[0][1], stream.pairs[-1][1]
    hosts = [first + (last + ahead_us - first) * k // 400 for k in range(401)]
    return max(abs(fit.box_at(h) - stream.true_box(h)) for h in hosts)


def last_heartbeat_error(stream: Stream, ahead_us: int = 10 * SECOND) -> float:
    """Largest error of what the host did before the fit: the last heartbeat plus host time since it arrived."""
    box_us, host_us = stream.pairs[-1]
    hosts = [host_us + ahead_us * k // 100 for k in range(101)]
    return max(abs(box_us + (h - host_us) - stream.true_box(h)) for h in hosts)


SEEDS = range(12)


# ---------------------------------------------------------------- the fit on synthetic heartbeats


@pytest.mark.parametrize("ppm", [500, -500])
def test_30_s_of_heartbeats_map_the_clock_within_1_ms_where_the_last_heartbeat_is_off_by_5(ppm: int) -> None:
    """USB-like delay (0-20 ms, 3 % of lines 200 ms late): under 1 ms across the window and 10 s ahead."""
    olds = []
    for seed in SEEDS:
        stream = heartbeats(seed, ppm)
        _, fit = feed(stream)
        error = fit_error(stream, fit)
        old = last_heartbeat_error(stream)
        assert fit.rate_fitted and fit.points >= 58  # a late line and the next within 250 ms are merged
        assert abs(fit.ppm - ppm) < 60, (seed, fit.ppm)
        assert error < 1_000, (seed, error)
        assert old > 4 * error, (seed, old, error)
        olds.append(old)
    # 500 ppm of 10 s is 5 ms, plus the last heartbeat's delay (fast box) or minus it (slow box).
    assert statistics.median(olds) > 3_000, olds


@pytest.mark.parametrize("ppm", [500, -500])
def test_evenly_spread_delay_up_to_20_ms_still_beats_the_last_heartbeat_by_far(ppm: int) -> None:
    """The worst case (every delay 0-20 ms equally likely): the envelope has fewer near-zero points to find."""
    errors, olds = [], []
    for seed in SEEDS:
        stream = heartbeats(seed, ppm, latency=timer_latency)
        _, fit = feed(stream)
        errors.append(fit_error(stream, fit))
        olds.append(last_heartbeat_error(stream))
        assert abs(fit.ppm - ppm) < 250, (seed, fit.ppm)
    assert statistics.median(errors) < 1_500, errors
    assert max(errors) < 4_000, errors
    assert statistics.median(olds) > 4 * statistics.median(errors), (olds, errors)


def test_a_minute_of_heartbeats_brings_the_worst_case_under_1_ms() -> None:
    """The window keeps 60 s: twice the points, less error, even with 0-20 ms evenly spread."""
    at_30 = [fit_error(s, feed(s)[1]) for s in (heartbeats(seed, 500, 30, timer_latency) for seed in SEEDS)]
    at_60 = [fit_error(s, feed(s)[1]) for s in (heartbeats(seed, 500, 60, timer_latency) for seed in SEEDS)]
    assert statistics.median(at_60) < 0.8 * statistics.median(at_30), (at_30, at_60)
    assert statistics.median(at_60) < 1_000


def test_a_single_late_heartbeat_barely_moves_the_fit() -> None:
    stream = heartbeats(1, 500, outliers=0)
    clock, before = feed(stream)
    box_us, host_us = stream.pairs[-1]
    late = clock.add(box_us + 500_000, host_us + 500_000 + 250_000)  # sent 0.5 s later, read 250 ms late
    ahead = host_us + 10 * SECOND
    assert abs(late.box_at(ahead) - before.box_at(ahead)) < 50
    assert abs(late.ppm - before.ppm) < 2
    # Taking that heartbeat as "now" would have put the clock 250 ms behind.
    assert abs((box_us + 500_000 + (ahead - host_us - 750_000)) - stream.true_box(ahead)) > 240_000


def test_the_first_seconds_are_offset_only_at_the_last_heartbeat_with_least_delay() -> None:
    clock = BoxClock()
    assert clock.fit is None
    one = clock.add(5_000_000, 80_000_000)
    assert not one.rate_fitted and one.rate == 1.0 and one.points == 1
    assert one.box_at(80_400_000) == 5_400_000 and one.host_at(5_400_000) == 80_400_000
    # A second line read 3 ms after it was sent: the first (less delayed) one still sets the offset.
    two = clock.add(5_500_000, 80_503_000)
    assert not two.rate_fitted and two.box_at(81_000_000) == 6_000_000
    # A less delayed line raises it.
    three = clock.add(6_000_000, 80_999_000)
    assert three.box_at(81_000_000) == 6_001_000


def test_the_rate_is_fitted_once_the_window_spans_10_s() -> None:
    stream = heartbeats(2, 500, seconds=12)
    clock = BoxClock()
    fitted_at = None
    for box_us, host_us in stream.pairs:
        fit = clock.add(box_us, host_us)
        if fit.rate_fitted and fitted_at is None:
            fitted_at = host_us - stream.pairs[0][1]
    assert fitted_at is not None and 10 * SECOND <= fitted_at < 11 * SECOND
    assert clock.status()["rate_fitted"] and abs(clock.status()["ppm"] - 500) < 150


def test_reset_starts_over_rate_and_all() -> None:
    clock, fit = feed(heartbeats(3, 500))
    assert fit.rate_fitted
    clock.reset()
    assert clock.fit is None and clock.last_pair is None
    new = clock.add(1_000, 9_000_000_000)  # the box restarted: its clock near 0
    assert not new.rate_fitted and new.rate == 1.0 and new.box_at(9_000_100_000) == 101_000
    assert clock.counters["resets"] == 1 and clock.counters["steps"] == 0


def test_a_clock_step_without_a_hello_starts_the_window_over() -> None:
    stream = heartbeats(4, -500, outliers=0)
    clock, fit = feed(stream)
    box_us, host_us = stream.pairs[-1]
    stepped = clock.add(box_us + 5 * SECOND, host_us + 500_000)  # 4.5 s earlier than possible
    assert clock.counters["steps"] == 1
    assert stepped.points == 1 and not stepped.rate_fitted
    assert stepped.ppm == pytest.approx(fit.ppm)  # the crystal did not change: its rate carries on
    assert stepped.box_at(host_us + 500_000) == box_us + 5 * SECOND


def test_a_gap_longer_than_the_window_keeps_the_rate() -> None:
    stream = heartbeats(5, 500, seconds=40)
    clock, fit = feed(stream)
    # A minute and a half without a line (the host was stalled), then heartbeats again.
    gap_host = stream.pairs[-1][1] + 90 * SECOND
    after = [(round(stream.true_box(gap_host + i * 500_000)), gap_host + i * 500_000 + 700) for i in range(3)]
    for box_us, host_us in after:
        resumed = clock.add(box_us, host_us)
    assert resumed.points == 3 and not resumed.rate_fitted
    assert resumed.ppm == pytest.approx(fit.ppm)
    ahead = after[-1][1] + 5 * SECOND
    assert abs(resumed.box_at(ahead) - stream.true_box(ahead)) < 1_500  # rate 1.0 would be 2.5 ms off


def test_a_gap_inside_the_window_costs_nothing() -> None:
    stream = heartbeats(6, 500)
    holed = Stream([pair for pair in stream.pairs if not 8 * SECOND < pair[1] - stream.pairs[0][1] < 22 * SECOND],
                   stream.box0, stream.host0, stream.rate)
    _, fit = feed(holed)
    assert fit.rate_fitted and fit_error(holed, fit) < 1_000


def test_levels_lines_are_merged_to_the_least_delayed_of_each_quarter_second() -> None:
    clock = BoxClock()
    rng = random.Random(7)
    truth = 1.0005
    for i in range(400):  # 20 s of LVL lines every 50 ms, delays 0-5 ms
        sent = 10 * SECOND + i * 50_000
        clock.add(round(3 * SECOND + truth * (sent - 10 * SECOND)), sent + round(rng.uniform(0, 5_000)))
    assert clock.counters["merged"] == 400 - clock.fit.points  # type: ignore[union-attr]
    assert 70 <= clock.fit.points <= 81  # about 5 lines a group, the groups cut by read time  # type: ignore[union-attr]
    assert abs(clock.fit.ppm - 500) < 30  # type: ignore[union-attr]


def test_the_32_bit_wrap_is_unwrapped_before_the_fit() -> None:
    """The protocol unwraps ``t``; the fit sees a clock that simply goes on past 2**32."""
    proto = p.PadBoxProtocol()
    clock = BoxClock()
    start = p.TIME_MOD - 5 * SECOND
    host = 7 * SECOND
    (hello,) = proto.data_received(p.encode_box_line(0, f"HELLO 1 1.0.0 4 100 piezo {start}"))
    assert isinstance(hello, p.Hello)
    fits = [clock.add(hello.device_us, host + 300)]
    for i in range(1, 31):  # 15 s of heartbeats, 500 ppm fast, across the wrap
        lines = p.encode_box_line(i, f"HB {(start + round(i * 500_000 * 1.0005)) % p.TIME_MOD}")
        for ev in proto.data_received(lines):
            assert isinstance(ev, p.Heartbeat)
            fits.append(clock.add(ev.device_us, host + i * 500_000 + 300))
    assert fits[-1].rate_fitted and abs(fits[-1].ppm - 500) < 1
    # Every line 300 us late: a constant delay cannot be seen, so the fit trails by it.
    assert fits[-1].box_at(host + 20 * SECOND) == pytest.approx(start + (20 * SECOND - 300) * 1.0005, abs=5)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        BoxClock(trim=0.5)
    with pytest.raises(ValueError):
        BoxClock(window_us=0)
    with pytest.raises(ValueError):
        BoxClock(max_ppm=0)


# ---------------------------------------------------------------- the emulator, 500 ppm fast, through SerialPadBox


@pytest.fixture
def fast_box() -> Iterator[tuple[PadBoxEmulator, SerialPadBox]]:
    """An emulator whose clock runs 500 ppm fast, heartbeats every 20 ms, read by SerialPadBox."""
    box = PadBoxEmulator(pads=2, clock_ppm=500, heartbeat_s=0.02, clock_start_us=1_000_000).start()
    clock = BoxClock(min_rate_span_us=1_000_000, min_spacing_us=0)
    src = SerialPadBox(port=box.path, hello_timeout_s=3.0, retry_s=0.1, silence_timeout_s=30.0, box_clock=clock)
    src.start()
    try:
        assert src.wait_connected(WAIT_S), src.status()
        yield box, src
    finally:
        src.stop()
        box.stop()


fit_of_nothing = ClockFit(host_ref_us=0, box_ref_us=0.0, rate=1.0, rate_fitted=False, points=0, span_us=0)


def box_minus_source(box: PadBoxEmulator, src: SerialPadBox) -> tuple[int, int]:
    """(emulator clock before - source clock, emulator clock after - source clock), the source unshifted."""
    before = box.now_us()
    now = src.now_us() - src.offset_us
    after = box.now_us()
    return before - now, after - now


def test_emulator_500_ppm_fast_the_host_fits_its_rate_and_now_follows_it(fast_box: tuple[PadBoxEmulator, SerialPadBox]) -> None:
    box, src = fast_box
    deadline = time.monotonic() + WAIT_S  # bounds a hang only
    while src.box_clock.fit is None or src.box_clock.fit.span_us < 3 * SECOND:
        assert time.monotonic() < deadline, src.status()
        time.sleep(0.05)
    fit = src.box_clock.fit
    assert fit.rate_fitted and abs(fit.ppm - 500) < 150, src.status()["clock"]
    for _ in range(5):
        lo, hi = box_minus_source(box, src)
        assert -500 <= hi and lo <= 3_000, (lo, hi)  # now_us trails the box by the least delay, a fraction of a ms
        time.sleep(0.01)
    # Heartbeats stop (as in a gap); the fitted rate carries "now" on, where the host's own rate drifts 500 ppm.
    last_box, last_host = src.box_clock.last_pair  # type: ignore[misc]
    box.heartbeat_s = 3600.0
    time.sleep(2.0)
    assert src.box_clock.last_pair is not None and src.box_clock.last_pair[1] - last_host < 100_000
    last_box, last_host = src.box_clock.last_pair
    before = box.now_us()
    host_now = time.monotonic_ns() // 1000
    fitted = src.now_us() - src.offset_us
    old_way = last_box + (host_now - last_host)
    fit_error = abs(before - fitted)
    old_error = abs(before - old_way)
    assert fit_error < old_error and fit_error < 1_000, (fit_error, old_error, src.status()["clock"])
    # And the service's wait for a deadline on the box clock runs at the box's rate.
    assert src.host_seconds_until(src.now_us() + 10 * SECOND) == pytest.approx(10 / fit.rate, abs=0.001)


def test_a_box_reset_starts_the_fit_over_and_the_source_clock_goes_on(fast_box: tuple[PadBoxEmulator, SerialPadBox]) -> None:
    box, src = fast_box
    deadline = time.monotonic() + WAIT_S
    while src.box_clock.fit is None or not src.box_clock.fit.rate_fitted:
        assert time.monotonic() < deadline, src.status()
        time.sleep(0.05)
    before = src.now_us()
    resets = src.box_clock.counters["resets"]  # 1: the first HELLO started the fit
    box.reset()
    # The reset's HELLO, and two heartbeats after it (so the source has surely re-based).
    while src.box_clock.counters["resets"] == resets or (src.box_clock.fit or fit_of_nothing).points < 3:
        assert time.monotonic() < deadline, src.status()
        time.sleep(0.01)
    assert src.now_us() >= before
    assert src.status()["clock"]["resets"] == resets + 1
    assert not src.box_clock.fit.rate_fitted  # type: ignore[union-attr]
    lo, hi = box_minus_source(box, src)
    assert -500 <= hi and lo <= 3_000, (lo, hi)

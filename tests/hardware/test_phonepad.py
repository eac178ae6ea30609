"""hardware.phonepad: a phone's touch latency from a tap-along, and a touch turned into a PadHit or refused."""

from __future__ import annotations

import random

import pytest

from core.hits import HitKind
from hardware.phoneclock import PhoneClock, SyncRound
from hardware.phonepad import (
    MAX_SYNC_AGE_US,
    SCAN_JITTER_US,
    UNCALIBRATED,
    PhoneHitRefused,
    TouchLatency,
    calibrate,
    phone_hit,
)


def test_calibration_takes_the_median_and_drops_misses() -> None:
    rng = random.Random(3)
    taps = [45_000 + round(rng.gauss(0, 12_000)) for _ in range(16)] + [400_000, -300_000]  # two misses
    latency = calibrate(taps)
    assert latency.calibrated and latency.taps == 16
    assert abs(latency.latency_us - 45_000) < 8_000
    # error of the median (3.3 standard errors) plus a touch panel's scan
    assert SCAN_JITTER_US < latency.uncertainty_us < SCAN_JITTER_US + 20_000
    assert latency.uncertainty_us < UNCALIBRATED.uncertainty_us


def test_a_steadier_tapper_gives_a_tighter_calibration() -> None:
    rng = random.Random(5)
    steady = calibrate([30_000 + round(rng.gauss(0, 5_000)) for _ in range(16)])
    shaky = calibrate([30_000 + round(rng.gauss(0, 30_000)) for _ in range(16)])
    assert steady.uncertainty_us < shaky.uncertainty_us


@pytest.mark.parametrize("taps, message", [
    ([10_000] * 5, "at least 8 taps"),
    ([0] * 4 + [200_000] * 4 + [400_000] * 4, "only 4 taps were near the beat"),
    ([0] * 7 + [500_000] * 8, "more than any touchscreen"),
])
def test_a_bad_calibration_says_what_to_redo(taps: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        calibrate(taps)


def test_latency_round_trips_through_a_dict() -> None:
    latency = TouchLatency(41_000, 12_000, 9_000, 16, True)
    assert TouchLatency.from_dict(latency.to_dict()) == latency


def _fit(offset_us: int, delay_us: int, rounds: int = 20, start_us: int = 0) -> PhoneClock:
    clock = PhoneClock()
    for i in range(rounds):
        pad = start_us + i * 50_000
        clock.add(SyncRound(pad - offset_us, pad + delay_us, pad + delay_us, pad + 2 * delay_us - offset_us))
    return clock


def test_a_touch_becomes_a_hit_on_the_pad_clock_less_the_latency() -> None:
    clock = _fit(offset_us=-7_000_000, delay_us=2_000)
    latency = TouchLatency(40_000, 10_000, 8_000, 16, True)
    felt_pad = 1_000_000
    stamp = felt_pad + 7_000_000 + 40_000  # the phone stamps it 40 ms late, on its clock
    hit = phone_hit(3, stamp, "slap", clock.fit, latency)
    assert hit.pad == 3 and hit.kind is HitKind.SLAP
    assert abs(hit.at_us - felt_pad) <= hit.uncertainty_us - latency.uncertainty_us
    assert hit.uncertainty_us > latency.uncertainty_us  # the sync's error is in it too


def test_no_sync_a_stale_one_or_a_loose_one_is_refused_with_the_reason() -> None:
    with pytest.raises(PhoneHitRefused, match="not synced"):
        phone_hit(1, 5_000, "slap", None, UNCALIBRATED)
    clock = _fit(offset_us=0, delay_us=2_000)
    assert clock.fit is not None
    with pytest.raises(PhoneHitRefused, match="s old"):
        phone_hit(1, clock.fit.ref_us + MAX_SYNC_AGE_US + 1, "slap", clock.fit, UNCALIBRATED)
    loose = _fit(offset_us=0, delay_us=40_000, rounds=3)
    with pytest.raises(PhoneHitRefused, match="only known to"):
        phone_hit(1, loose.fit.ref_us if loose.fit else 0, "slap", loose.fit, UNCALIBRATED)


def test_pairing_with_a_pad_takes_the_nearest_hit_once_and_drops_lone_taps() -> None:
    from hardware.phonepad import pair_with_pad

    taps = [1_040_000, 2_038_000, 2_100_000, 5_000_000]  # the third is a double tap, the last has no pad hit
    hits = [1_000_000, 2_000_000, 3_000_000]
    assert pair_with_pad(taps, hits) == [38_000, 40_000]

"""A phone as a pad: its touch latency, and a touch stamped on the phone turned into a PadHit on the pad clock.

Pure values and functions, no I/O. The phone stamps each touch on its own
monotonic clock (``PointerEvent.timeStamp``); :mod:`hardware.phoneclock`
maps that onto the pad clock with an error bound. What is left is the phone's
own delay from the finger landing to the stamp (touch-panel scan, the
compositor, the event queue): tens of milliseconds, different on every
model, steady on one. :class:`TouchLatency` is that delay as calibrated on
this phone, and how sure the calibration is.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from core.hits import HitKind, PadHit
from hardware.phoneclock import PhoneFit

#: A touch panel scans at 60 Hz or faster: a stamp can be up to one scan (16.7 ms) late, half of it either
#: way around the calibrated mean. Added to every phone hit's uncertainty, calibrated or not.
SCAN_JITTER_US = 8_400
#: Taps of a calibration that count: enough that the mean's error is a few ms for a steady tapper.
MIN_CALIBRATION_TAPS = 8
#: A tap this far from the calibration's median is a miss (a double tap, a look away), not latency.
CALIBRATION_OUTLIER_US = 150_000
#: A calibrated latency outside this range is tapping off the beat, not a touchscreen (µs; a tapper may run early).
LATENCY_RANGE_US = (-100_000, 250_000)
#: The calibration's estimate error is this many standard errors (about 1 in 1000 beyond it).
CALIBRATION_SIGMAS = 3.3
#: A sync older than this (phone clock) is stale: the phone must resync before it slaps.
MAX_SYNC_AGE_US = 10_000_000
#: A sync whose error bound is wider than this is too uncertain to judge a slap.
MAX_SYNC_ERROR_US = 30_000


class PhoneHitRefused(ValueError):
    """A phone's touch could not be put on the pad clock; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class TouchLatency:
    """A phone's delay from touch to stamp: the mean to subtract, and how far off that mean may be.

    ``uncertainty_us`` is the error of the mean (from the calibration's
    spread and tap count) plus :data:`SCAN_JITTER_US`; ``spread_us`` is the
    taps' robust standard deviation (the tapper's and the phone's jitter).
    """

    latency_us: int
    uncertainty_us: int
    spread_us: int
    taps: int
    calibrated: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the phone-pad file and the API)."""
        return {"latency_us": self.latency_us, "uncertainty_us": self.uncertainty_us,
                "spread_us": self.spread_us, "taps": self.taps, "calibrated": self.calibrated}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TouchLatency":
        """Inverse of :meth:`to_dict`."""
        return cls(int(data["latency_us"]), int(data["uncertainty_us"]), int(data["spread_us"]),
                   int(data["taps"]), bool(data["calibrated"]))


#: An uncalibrated phone: touch latencies of phones run from about 20 to 100 ms, so 60 ms, give or take 40.
UNCALIBRATED = TouchLatency(latency_us=60_000, uncertainty_us=40_000 + SCAN_JITTER_US, spread_us=0, taps=0,
                            calibrated=False)


def calibrate(asynchronies_us: Sequence[int]) -> TouchLatency:
    """The touch latency from taps along with a beat: each value is one tap's stamp minus its beat's time.

    The median is the latency (a steady tapper's own habit of tapping early
    or late is in it too: docs/pads.md says so). Taps more than
    :data:`CALIBRATION_OUTLIER_US` from the median are dropped; at least
    :data:`MIN_CALIBRATION_TAPS` must remain. Raises :class:`ValueError` saying what to redo.
    """
    values = [int(v) for v in asynchronies_us]
    if len(values) < MIN_CALIBRATION_TAPS:
        raise ValueError(f"a calibration needs at least {MIN_CALIBRATION_TAPS} taps, got {len(values)}; "
                         "tap along again")
    middle = statistics.median(values)
    kept = [v for v in values if abs(v - middle) <= CALIBRATION_OUTLIER_US]
    if len(kept) < MIN_CALIBRATION_TAPS:
        raise ValueError(f"only {len(kept)} taps were near the beat; tap along with each flash and click again")
    median = statistics.median(kept)
    if not LATENCY_RANGE_US[0] <= median <= LATENCY_RANGE_US[1]:
        raise ValueError(f"the taps came {median / 1000:.0f} ms from the beat, more than any touchscreen's delay; "
                         "tap with each flash and click, not between them, and calibrate again")
    spread = 1.4826 * statistics.median(abs(v - median) for v in kept)
    # The median's standard error is about 1.25 sigma / sqrt(n).
    error = CALIBRATION_SIGMAS * 1.25 * spread / math.sqrt(len(kept))
    return TouchLatency(latency_us=round(median), uncertainty_us=math.ceil(error) + SCAN_JITTER_US,
                        spread_us=round(spread), taps=len(kept), calibrated=True)


#: Against a hardware pad: a phone tap and a pad hit this close are the same slap of two hands.
PAIR_WINDOW_US = 150_000


def pair_with_pad(taps_on_pad_clock: Sequence[int], pad_hits_us: Sequence[int]) -> list[int]:
    """Each phone tap (already on the pad clock, latency not taken off) less the nearest hardware hit.

    For the calibration "slap a hardware pad and the phone together": the
    pad's stamp is the truth (a box stamps within its scan), so what is left
    is the phone's latency. Taps with no pad hit within :data:`PAIR_WINDOW_US`
    are dropped; each pad hit pairs with one tap at most (the nearest).
    """
    pairs: list[tuple[int, int, int]] = []  # (distance, tap index, hit index)
    for i, tap in enumerate(taps_on_pad_clock):
        for j, hit in enumerate(pad_hits_us):
            if abs(tap - hit) <= PAIR_WINDOW_US:
                pairs.append((abs(tap - hit), i, j))
    used_taps: set[int] = set()
    used_hits: set[int] = set()
    out: list[int] = []
    for _, i, j in sorted(pairs):
        if i not in used_taps and j not in used_hits:
            used_taps.add(i)
            used_hits.add(j)
            out.append(taps_on_pad_clock[i] - pad_hits_us[j])
    return out


def phone_hit(pad: int, phone_us: int, kind: HitKind | str, fit: PhoneFit | None, latency: TouchLatency,
              now_phone_us: int | None = None) -> PadHit:
    """The PadHit of a touch the phone stamped at ``phone_us``, or :class:`PhoneHitRefused`.

    The onset is ``phone_us`` less the phone's latency, mapped onto the pad
    clock; its ``uncertainty_us`` is the sync's error bound there plus the
    latency's. ``now_phone_us`` (the phone's clock when it sent the touch)
    is checked against the sync's age when given, else ``phone_us`` is.
    """
    if fit is None:
        raise PhoneHitRefused("this phone has not synced its clock with the table yet; keep the pad page open a moment")
    age = (phone_us if now_phone_us is None else now_phone_us) - fit.ref_us
    if age > MAX_SYNC_AGE_US:
        raise PhoneHitRefused(f"this phone's clock sync is {age / 1e6:.0f} s old; the page resyncs by itself, "
                              "slap again in a moment")
    onset = phone_us - latency.latency_us
    at_us, sync_error = fit.to_pad(onset)
    if sync_error > MAX_SYNC_ERROR_US:
        raise PhoneHitRefused(f"this phone's clock is only known to {sync_error / 1000:.0f} ms (the table needs "
                              f"{MAX_SYNC_ERROR_US // 1000} ms): the Wi-Fi is slow or lossy; wait for a better sync")
    return PadHit(pad=pad, at_us=at_us, kind=HitKind(kind), uncertainty_us=sync_error + latency.uncertainty_us)

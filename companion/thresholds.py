"""The pure maths of pad calibration: contacts in a stream of LVL frames, suggested thresholds, crosstalk.

No I/O and no threads: :mod:`companion.calibration` records the frames from
the pad box and hands them here. The guided check's frames (the player slaps
pad N hard, then touches it lightly) become suggested ``slap`` and ``touch``
thresholds and a crosstalk report (:func:`suggest_thresholds`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from core.errors import InputError
from hardware import protocol as p

#: Peaks at or below this (ADC counts, of 1023) are noise, not a contact.
NOISE_FLOOR = 20
#: A rise to more than this many times the previous frame, after the level fell
#: to half the event's peak, is a new contact (not the same one ringing).
REARM_RISE = 2.0
REARM_FALL = 0.5
#: Slap-phase contacts below this fraction of the median slap are stray touches, ignored.
STRAY_SLAP = 0.5
#: Frames of a slap in which other pads' peaks count as its crosstalk: the onset
#: frame and the next (a slap can straddle two 50 ms LVL frames).
XTALK_FRAMES = 2


@dataclass
class Contact:
    """One contact on a pad as seen in LVL frames: where it starts and its peak."""

    start: int  # index of the first frame
    end: int  # index one past the last frame
    peak: int


def find_contacts(peaks: Sequence[int], floor: int = NOISE_FLOOR) -> list[Contact]:
    """Split one pad's per-frame peaks into contacts.

    A contact starts when the peak rises above ``floor``; it goes on while the
    level stays above it (a piezo rings down over a few frames), unless the level
    first falls to half the contact's peak and then more than doubles: that is
    a new slap landing on the ringing of the last one.
    """
    contacts: list[Contact] = []
    current: Contact | None = None
    prev = 0
    for i, x in enumerate(peaks):
        if x <= floor:
            if current is not None:
                current.end = i
                current = None
        elif current is None or (x > prev * REARM_RISE and prev <= current.peak * REARM_FALL):
            if current is not None:
                current.end = i
            current = Contact(start=i, end=i + 1, peak=x)
            contacts.append(current)
        else:
            current.peak = max(current.peak, x)
            current.end = i + 1
        prev = x
    return contacts


@dataclass(frozen=True)
class CheckSamples:
    """What a guided check recorded: LVL peak frames (every pad, pad 1 first) per phase."""

    pad: int
    slap: Sequence[Sequence[int]] = ()
    touch: Sequence[Sequence[int]] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CheckSamples":
        """From ``{"pad": 3, "slap": [[...], ...], "touch": [[...], ...]}``."""
        return cls(int(data["pad"]), [list(f) for f in data.get("slap", [])], [list(f) for f in data.get("touch", [])])


@dataclass
class Suggestion:
    """The outcome of a guided check on one pad."""

    pad: int
    slaps: list[int] = field(default_factory=list)
    touches: list[int] = field(default_factory=list)
    ignored: list[int] = field(default_factory=list)
    slap: int | None = None
    touch: int | None = None
    separable: bool | None = None
    crosstalk: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "pad": self.pad,
            "slaps": self.slaps,
            "touches": self.touches,
            "ignored": self.ignored,
            "suggested": {"slap": self.slap, "touch": self.touch} if self.slap is not None else None,
            "separable": self.separable,
            "crosstalk": self.crosstalk,
            "problems": self.problems,
        }


def _geo(a: float, b: float) -> int:
    # Piezo peaks grow roughly in proportion to force, so the fair split between
    # a light and a hard contact is on a ratio scale: the geometric mean.
    return round(math.sqrt(max(a, 1) * max(b, 1)))


def suggest_thresholds(
    samples: CheckSamples,
    *,
    floor: int = NOISE_FLOOR,
    xtalk_percent: int | Mapping[int, int] = p.PARAMS["xtalk"][2],
) -> Suggestion:
    """Suggested slap/touch thresholds for ``samples.pad`` and the crosstalk its slaps cause.

    * slaps = contacts on the pad in the slap phase (strays under half the
      median slap are ignored and listed); touches = contacts in the touch phase.
    * slap threshold = geometric mean of the hardest touch and the weakest slap;
      touch threshold = geometric mean of the noise floor and the lightest touch.
    * crosstalk, per other pad: its highest peak during the first frames of each
      slap, as a fraction of that slap's peak; ``risk`` when at or above the
      pad's ``xtalk`` percentage (the box would not cancel it), ``cancelled``
      below it, ``none`` when nothing rose above the noise floor.
    """
    pad = samples.pad
    out = Suggestion(pad=pad)
    frames_s = [list(f) for f in samples.slap]
    frames_t = [list(f) for f in samples.touch]
    width = max((len(f) for f in frames_s + frames_t), default=0)
    if pad < 1 or (width and pad > width):
        raise InputError(f"pad {pad} is not in the recorded frames ({width} pads)")

    def column(frames: list[list[int]], k: int) -> list[int]:
        return [f[k - 1] if len(f) >= k else 0 for f in frames]

    slap_contacts = find_contacts(column(frames_s, pad), floor)
    touch_contacts = find_contacts(column(frames_t, pad), floor)
    if slap_contacts:
        median_slap = statistics.median(c.peak for c in slap_contacts)
        kept = [c for c in slap_contacts if c.peak >= median_slap * STRAY_SLAP]
        out.ignored = [c.peak for c in slap_contacts if c.peak < median_slap * STRAY_SLAP]
    else:
        kept = []
    out.slaps = [c.peak for c in kept]
    out.touches = [c.peak for c in touch_contacts]

    if not out.slaps:
        out.problems.append(f"no slap seen on pad {pad}: slap it hard, and check its wiring if the meter stays still")
    if not out.touches:
        out.problems.append(f"no light touch seen on pad {pad}: touch it lightly (a feint) after the slaps")
    elif out.slaps and max(out.touches) >= min(out.slaps):
        out.problems.append(
            f"on pad {pad} the hardest touch ({max(out.touches)}) reached the weakest slap ({min(out.slaps)}): "
            "touch more lightly and slap harder, or slaps and feints will be confused"
        )

    if out.slaps:
        weakest = min(out.slaps)
        if out.touches:
            hardest = max(out.touches)
            out.separable = hardest < weakest
            if out.separable:
                slap = _geo(hardest, weakest)
            else:  # overlap: split the typical touch from the typical slap
                slap = _geo(statistics.median(out.touches), statistics.median(out.slaps))
            touch = _geo(floor, min(out.touches))
        else:
            slap = max(floor + 2, weakest // 2)
            touch = None
        lo, hi, _ = p.PARAMS["slap"]
        slap = max(lo, min(hi, slap))
        if touch is not None:
            # A touch threshold at or above the slap one switches touches off on the box.
            touch = max(min(touch, slap - 1), floor + 1) if slap > floor + 1 else 0
        out.slap, out.touch = slap, touch

    # crosstalk: what the other pads read while this pad was slapped
    for other in range(1, width + 1):
        if other == pad:
            continue
        worst_ratio = 0.0
        worst_peak = 0
        for c in kept:
            window = frames_s[c.start:min(c.end, c.start + XTALK_FRAMES)]
            seen = max((f[other - 1] if len(f) >= other else 0 for f in window), default=0)
            if seen > floor and seen / c.peak > worst_ratio:
                worst_ratio, worst_peak = seen / c.peak, seen
        limit = xtalk_percent.get(other, p.PARAMS["xtalk"][2]) if isinstance(xtalk_percent, Mapping) else xtalk_percent
        percent = round(worst_ratio * 100)
        if worst_peak == 0:
            verdict = "none"
        elif limit and percent < limit:
            verdict = "cancelled"
        else:
            verdict = "risk"
        entry = {"pad": other, "peak": worst_peak, "ratio": round(worst_ratio, 3), "percent": percent,
                 "xtalk": limit, "verdict": verdict}
        out.crosstalk.append(entry)
        if verdict == "risk":
            out.problems.append(
                f"a slap on pad {pad} makes pad {other} read {percent}% of it (peak {worst_peak}), "
                f"not below its crosstalk limit of {limit}%: pad {other} may count a false hit; "
                f"move the pads apart or onto foam, or raise pad {other}'s xtalk"
            )
    out.crosstalk.sort(key=lambda e: (-e["ratio"], e["pad"]))
    return out


class LastPeaks:
    """Per pad: the peak of the latest contact and when its frame arrived (source clock)."""

    def __init__(self, pads: int, floor: int = NOISE_FLOOR) -> None:
        self.floor = floor
        self.peaks: list[int | None] = [None] * pads
        self.at_us: list[int | None] = [None] * pads
        self._prev = [0] * pads
        self._current = [0] * pads  # peak of the contact in progress (0: none)

    def feed(self, peaks: Sequence[int], at_us: int) -> None:
        """One LVL frame (same contact rule as :func:`find_contacts`)."""
        for i, x in enumerate(peaks[: len(self.peaks)]):
            cur, prev = self._current[i], self._prev[i]
            if x <= self.floor:
                self._current[i] = 0
            elif cur == 0 or (x > prev * REARM_RISE and prev <= cur * REARM_FALL):
                self._current[i] = x
                self.peaks[i], self.at_us[i] = x, at_us
            elif x > cur:
                self._current[i] = x
                self.peaks[i] = x
            self._prev[i] = x

    def to_list(self) -> list[dict[str, Any] | None]:
        """``[{"pad", "peak", "at_us"} | None, ...]``, pad 1 first."""
        return [
            None if peak is None else {"pad": i + 1, "peak": peak, "at_us": self.at_us[i]}
            for i, peak in enumerate(self.peaks)
        ]

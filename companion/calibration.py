"""Pad calibration from a phone: live levels, thresholds on the box, and a guided check.

The web never touches hardware; it reaches the pad source through
``TableService.calibration``, a :class:`Calibrator` wrapping the service's
source. Only sources that measure levels (``supports_levels``: the serial pad
box, real or ``tabletop emulate``) can be calibrated; for the others
:class:`Calibrator` says why not in words a person can act on.

While someone watches (a phone polls :meth:`Calibrator.levels`) a sampler
thread keeps the box streaming LVL lines (firmware/PROTOCOL.md), takes each
one as it arrives (SerialPadBox's levels listener), tracks the last peak of every pad and, during a guided check, records
the frames. It switches streaming off again once nobody has asked for
``idle_s`` seconds, so a forgotten phone does not keep the serial line busy.

The guided check itself is pure: :func:`suggest_thresholds` turns the frames
recorded while the player slapped pad N hard and then touched it lightly into
suggested ``slap`` and ``touch`` thresholds and a crosstalk report.
"""

from __future__ import annotations

import logging
import math
import statistics
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from core.errors import InputError, PadSourceError, RuleError
from hardware import protocol as p
from hardware.source import LiveLevels, PadSource

log = logging.getLogger(__name__)

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
#: Slaps and touches the guided check asks for.
CHECK_WANTS = 3
#: A sampler asks the box to stream again when no LVL line came for this long.
STALE_S = 1.0
PHASES = ("slap", "touch")
#: Frames kept per phase of a guided check (a minute of LVL lines).
MAX_CHECK_FRAMES = 1200


class NoLevelsError(RuleError):
    """The pad source cannot measure levels (GPIO buttons, simulated pads)."""


def no_levels_message(source_name: str) -> str:
    """Why this source cannot be calibrated, and what to do instead."""
    what = {
        "sim": "The pads are simulated, so there are no levels to show",
        "gpio": "The pads are buttons on the Pi's GPIO: a button is on or off, so there are no levels to show",
        "script": "The pads replay a hit script, so there are no levels to show",
    }.get(source_name, f"The pad source '{source_name}' does not measure levels")
    return (
        f"{what} and no thresholds to set. Calibration needs the piezo pad box: "
        "start with `tabletop serve --pads serial` (a pad box on USB, or `tabletop emulate` to try it)."
    )


# ======================================================================
# pure logic
# ======================================================================


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


# ======================================================================
# the service-side object
# ======================================================================


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


@dataclass
class _Check:
    pad: int
    phase: str = "slap"
    slap: list[list[int]] = field(default_factory=list)
    touch: list[list[int]] = field(default_factory=list)

    def samples(self) -> CheckSamples:
        return CheckSamples(self.pad, list(self.slap), list(self.touch))


class Calibrator:
    """Calibration of one pad source: levels, thresholds and the guided check.

    Args:
        source: the table's pad source (only ``supports_levels`` ones can be calibrated).
        poll_s: how often the sampler checks streaming (and, for a source without a
            levels listener, looks for a new LVL line; they come every 50 ms).
        idle_s: streaming stops after this long without a :meth:`levels` call.
    """

    def __init__(self, source: PadSource, *, poll_s: float = 0.01, idle_s: float = 15.0) -> None:
        self.source = source
        self.poll_s = poll_s
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._wanted_at = 0.0
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._frame: dict[str, Any] = {}
        self._frame_seen = 0.0  # host monotonic time the latest frame was read
        self._last = LastPeaks(source.pad_count)
        self._check: _Check | None = None
        self._settings: dict[int, dict[str, int]] | None = None
        self._error: str | None = None

    # ------------------------------------------------------------ what it is

    @property
    def supports_levels(self) -> bool:
        """Whether the source measures levels (so there is anything to calibrate)."""
        return isinstance(self.source, LiveLevels) and self.source.supports_levels

    def _require(self) -> LiveLevels:
        if not isinstance(self.source, LiveLevels) or not self.source.supports_levels:
            raise NoLevelsError(no_levels_message(self.source.name))
        return self.source

    def _connected(self) -> bool:
        return not isinstance(self.source, LiveLevels) or self.source.connected

    def describe(self) -> dict[str, Any]:
        """What the page needs first: support, pads, parameter ranges, current settings."""
        info: dict[str, Any] = {
            "supported": self.supports_levels,
            "source": self.source.name,
            "pads": self.source.pad_count,
            "params": {name: {"min": lo, "max": hi, "default": d} for name, (lo, hi, d) in p.PARAMS.items()},
            "floor": NOISE_FLOOR,
        }
        if not self.supports_levels:
            info["message"] = no_levels_message(self.source.name)
            return info
        info["connected"] = self._connected()
        # Read afresh: the box may have been reset or swapped since the last look.
        info["settings"] = self._settings_or_none(refresh=True)
        if not info["connected"]:
            info["message"] = f"No pad box connected ({self.source.status().get('error') or 'still searching'})."
        info["check"] = self.check_status()
        return info

    def _settings_or_none(self, refresh: bool = False) -> dict[str, dict[str, int]] | None:
        try:
            settings = self.settings(refresh=refresh)
        except PadSourceError as exc:
            self._error = str(exc)
            return None
        return {str(k): v for k, v in settings.items()}

    def settings(self, refresh: bool = False) -> dict[int, dict[str, int]]:
        """Every pad's settings as the box reports them (read once, then kept up to date)."""
        source = self._require()
        with self._lock:
            cached = self._settings
        if cached is None or refresh:
            cached = source.read_config()
            with self._lock:
                self._settings = cached
        return {k: dict(v) for k, v in cached.items()}

    # ------------------------------------------------------------ live levels

    def levels(self) -> dict[str, Any]:
        """The latest levels and peaks, the last contact's peak per pad, and the check's progress.

        Calling this keeps the box streaming (see ``idle_s``).
        """
        if not self.supports_levels:
            return {"supported": False, "source": self.source.name, "message": no_levels_message(self.source.name)}
        self._want()
        with self._lock:
            frame = dict(self._frame)
            fresh = bool(frame) and time.monotonic() - self._frame_seen < STALE_S
            last = self._last.to_list()
        pads = self.source.pad_count
        return {
            "supported": True,
            "source": self.source.name,
            "connected": self._connected(),
            "live": fresh,
            "at_us": frame.get("at_us"),
            "levels": frame.get("levels", [0] * pads) if fresh else [0] * pads,
            "peaks": frame.get("peaks", [0] * pads) if fresh else [0] * pads,
            "last_peaks": (last + [None] * pads)[:pads],
            "error": self._error,
            "check": self.check_status(),
        }

    def _want(self) -> None:
        with self._lock:
            self._wanted_at = time.monotonic()
            if self._thread is not None and self._thread.is_alive():
                return
            self._closed.clear()
            self._thread = threading.Thread(target=self._sample, name="calibration-sampler", daemon=True)
            self._thread.start()

    def _sample(self) -> None:
        """Keep the box streaming while wanted; take every new LVL line once.

        The source hands each LVL line to :meth:`_take` on its reader thread as
        it arrives (a :class:`~hardware.source.LiveLevels` listener), so none is
        missed however starved this thread is; this loop only keeps the box
        streaming, looking every ``poll_s``.
        """
        source = self._require()
        asked = 0.0
        source.add_levels_listener(self._take)
        try:
            while not self._closed.is_set():
                now = time.monotonic()
                with self._lock:
                    idle = now - self._wanted_at > self.idle_s
                    if idle:
                        self._check = None  # nobody is watching the check any more
                    frame_seen = self._frame_seen
                if idle:
                    break
                try:
                    if now - max(frame_seen, asked) > STALE_S and self._connected():
                        # Not streaming yet, or the box was reset (streaming is off after a reset).
                        asked = now
                        try:
                            source.stream_levels(True)
                            self._error = None
                        except PadSourceError as exc:
                            self._error = str(exc)
                            log.info("calibration: cannot start level streaming: %s", exc)
                except Exception:  # a bug here must not silently end the meter for everyone
                    log.exception("calibration sampler failed; retrying")
                    self._closed.wait(STALE_S)
                self._closed.wait(self.poll_s)
        finally:
            source.remove_levels_listener(self._take)
        try:
            if self._connected():
                source.stream_levels(False)
        except PadSourceError as exc:
            log.info("calibration: cannot stop level streaming: %s", exc)

    def _take(self, frame: Mapping[str, Any]) -> None:
        peaks = list(frame.get("peaks") or [])
        with self._lock:
            self._frame = dict(frame)
            self._frame_seen = time.monotonic()
            if len(peaks) != len(self._last.peaks):  # a box with another pad count said HELLO
                self._last = LastPeaks(len(peaks))
            self._last.feed(peaks, int(frame.get("at_us") or 0))
            if self._check is not None:
                frames = getattr(self._check, self._check.phase)
                frames.append(peaks)
                if len(frames) > MAX_CHECK_FRAMES:
                    del frames[0]

    def close(self) -> None:
        """Stop the sampler (and streaming). The calibrator can be used again afterwards."""
        self._closed.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5)
        self._thread = None

    # ------------------------------------------------------------ thresholds

    def _check_pad(self, pad: Any) -> int:
        count = self.source.pad_count
        if isinstance(pad, bool) or not isinstance(pad, int) or not 1 <= pad <= count:
            raise InputError(f"'pad' must be a whole number from 1 to {count}, got {pad!r}")
        return pad

    def set_thresholds(self, pad: Any, slap: Any = None, touch: Any = None, save: bool = False) -> dict[str, int]:
        """Set a pad's slap and/or touch threshold on the box at once (and keep them in EEPROM if ``save``).

        Every value is checked before anything is sent, so a bad one changes nothing.
        Returns the pad's settings afterwards.
        """
        source = self._require()
        pad = self._check_pad(pad)
        changes = {name: value for name, value in (("slap", slap), ("touch", touch)) if value is not None}
        if not changes:
            raise InputError("send 'slap' and/or 'touch' (whole numbers) to change a threshold")
        for name, value in changes.items():
            try:
                p.check_param(name, value)
            except InputError as exc:
                raise InputError(f"'{name}': {exc}") from None
        for name, value in changes.items():
            source.set_param(pad, name, value)
            with self._lock:
                if self._settings is not None:
                    self._settings.setdefault(pad, {})[name] = value
        if save:
            source.save()
        settings = self.settings()
        return dict(settings.get(pad, changes))

    def save(self) -> None:
        """Keep the box's current settings in its EEPROM (they survive a reset)."""
        self._require().save()

    # ------------------------------------------------------------ guided check

    def start_check(self, pad: Any) -> dict[str, Any]:
        """Begin the guided check on ``pad``: record while the player slaps it hard."""
        self._require()
        pad = self._check_pad(pad)
        if not self._connected():
            raise PadSourceError("no pad box connected; plug it in (or start `tabletop emulate`) and try again")
        with self._lock:
            self._check = _Check(pad)
        self._want()
        return self.check_status() or {}

    def next_phase(self) -> dict[str, Any]:
        """Move the guided check from the slaps to the light touches."""
        with self._lock:
            check = self._check
            if check is None:
                raise RuleError("no guided check is running; start one on a pad first")
            check.phase = "touch"
        self._want()
        return self.check_status() or {}

    def finish_check(self) -> dict[str, Any]:
        """End the guided check; returns the suggestion and crosstalk report."""
        with self._lock:
            check, self._check = self._check, None
        if check is None:
            raise RuleError("no guided check is running; start one on a pad first")
        xtalk = {pad: s.get("xtalk", p.PARAMS["xtalk"][2]) for pad, s in (self._settings or {}).items()}
        return suggest_thresholds(check.samples(), xtalk_percent=xtalk).to_dict()

    def cancel_check(self) -> None:
        """Drop a running guided check."""
        with self._lock:
            self._check = None

    def check_status(self) -> dict[str, Any] | None:
        """The running check: pad, phase and how many slaps/touches were seen so far (None if none)."""
        with self._lock:
            check = self._check
            samples = check.samples() if check else None
            phase = check.phase if check else None
        if check is None or samples is None:
            return None
        seen = suggest_thresholds(samples)
        return {"pad": check.pad, "phase": phase, "slaps": len(seen.slaps), "touches": len(seen.touches),
                "wants": CHECK_WANTS}


_calibrators: "weakref.WeakKeyDictionary[PadSource, Calibrator]" = weakref.WeakKeyDictionary()
_calibrators_lock = threading.Lock()


def calibrator_for(source: PadSource) -> Calibrator:
    """The one Calibrator of ``source`` (made on first use)."""
    with _calibrators_lock:
        calibrator = _calibrators.get(source)
        if calibrator is None:
            calibrator = _calibrators[source] = Calibrator(source)
        return calibrator

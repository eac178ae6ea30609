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

The guided check itself is pure (:mod:`companion.thresholds`): :func:`suggest_thresholds` turns the frames
recorded while the player slapped pad N hard and then touched it lightly into
suggested ``slap`` and ``touch`` thresholds and a crosstalk report.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Mapping

from companion.thresholds import NOISE_FLOOR, CheckSamples, LastPeaks, suggest_thresholds
from core.checks import whole_number
from core.errors import InputError, PadSourceError, RuleError
from hardware import protocol as p
from hardware.source import LiveLevels, PadSource

log = logging.getLogger(__name__)

#: Slaps and touches the guided check asks for.
CHECK_WANTS = 3
#: A sampler asks the box to stream again when no LVL line came for this long.
STALE_S = 1.0
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
# the service-side object
# ======================================================================


@dataclass
class _Check:
    pad: int
    phase: str = "slap"
    slap: list[list[int]] = field(default_factory=list)
    touch: list[list[int]] = field(default_factory=list)

    def samples(self) -> CheckSamples:
        return CheckSamples(self.pad, list(self.slap), list(self.touch))

    def recording(self) -> list[list[int]]:
        """The frames of the phase being recorded now."""
        return self.slap if self.phase == "slap" else self.touch


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
                frames = self._check.recording()
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
        return whole_number(pad, 1, count, "'pad'")

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

"""A pad source that replays a file of timed hits: for demos, tests and rehearsing a wiring.

File format (UTF-8 text, one hit per line)::

    # a comment; blank lines are ignored too
    # <time_ms> <pad> [slap|touch] [strength]
    0      1
    250.5  2 slap
    400    3 touch 0.2

``time_ms`` is milliseconds after the source starts (a number >= 0, up to
three decimals are kept: microseconds), ``pad`` is 1-based, the kind defaults
to ``slap`` and ``strength`` (0.0 to 1.0) is optional. Lines may be in any
order; hits are replayed in time order (pad number breaks ties), each
stamped ``start + time``, so the replay is the same every run.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable

from core.errors import InputError
from core.hits import HitKind, PadHit
from hardware.source import PadSource

log = logging.getLogger(__name__)

_KINDS = {k.value: k for k in HitKind}
#: A script longer than a day is a typo (seconds written as milliseconds, ...).
_MAX_MS = 86_400_000.0


@dataclass(frozen=True, slots=True)
class ScriptLine:
    """One parsed line of a hit script: when (µs after start), which pad, what kind, how hard."""

    at_us: int
    pad: int
    kind: HitKind
    strength: float | None
    line: int


def parse_script(text: str | Iterable[str], name: str = "script", pad_count: int | None = None) -> list[ScriptLine]:
    """Parse a hit script; InputError names the file, the line number and what is wrong.

    ``pad_count`` (if given) bounds the pad numbers. The result is sorted by
    time, then pad.
    """
    lines = text.splitlines() if isinstance(text, str) else list(text)
    out: list[ScriptLine] = []
    for number, raw in enumerate(lines, start=1):
        content = raw.split("#", 1)[0].strip()
        if not content:
            continue
        where = f"{name} line {number}"
        fields = content.split()
        if len(fields) < 2 or len(fields) > 4:
            raise InputError(f"{where}: {raw.strip()!r} should be '<time_ms> <pad> [slap|touch] [strength]'")
        try:
            ms = float(fields[0])
        except ValueError:
            raise InputError(f"{where}: time {fields[0]!r} is not a number of milliseconds") from None
        if not math.isfinite(ms) or not 0 <= ms <= _MAX_MS:
            raise InputError(f"{where}: time {fields[0]!r} must be from 0 to {_MAX_MS:.0f} milliseconds after the start")
        if not (fields[1].isascii() and fields[1].isdigit()) or int(fields[1]) < 1:
            raise InputError(f"{where}: pad {fields[1]!r} must be a whole number from 1")
        pad = int(fields[1])
        if pad_count is not None and pad > pad_count:
            raise InputError(f"{where}: pad {pad} does not exist; this table has pads 1 to {pad_count}")
        kind = HitKind.SLAP
        strength: float | None = None
        rest = fields[2:]
        if rest and rest[0].lower() in _KINDS:
            kind = _KINDS[rest.pop(0).lower()]
        if rest:
            try:
                strength = float(rest[0])
            except ValueError:
                raise InputError(f"{where}: {rest[0]!r} is neither slap, touch nor a strength from 0.0 to 1.0") from None
            if not 0.0 <= strength <= 1.0:
                raise InputError(f"{where}: strength {rest[0]!r} must be from 0.0 to 1.0")
            if len(rest) > 1:
                raise InputError(f"{where}: unexpected {rest[1]!r} after the strength")
        out.append(ScriptLine(round(ms * 1000), pad, kind, strength, number))
    out.sort(key=lambda s: (s.at_us, s.pad))
    return out


def load_script(path: str | os.PathLike[str], pad_count: int | None = None) -> list[ScriptLine]:
    """Read and parse a hit script file (InputError if unreadable or malformed)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"hit script {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"hit script {p} cannot be read: {exc}") from None
    return parse_script(text, name=str(p), pad_count=pad_count)


class ScriptedPads(PadSource):
    """Replays a hit script, in real time or faster.

    Its clock is the host's monotonic clock in µs (like simulated pads), sped
    up by ``speed``; ``start_us`` pins the clock's value at ``start()`` for
    fully deterministic timestamps. ``speed=math.inf`` (or None) replays as
    fast as possible: hits come at once, still stamped ``start + file time``,
    and the clock jumps forward so ``now_us()`` is never behind a hit.

    When the last hit is out, an ``info`` notice says so and :attr:`finished`
    is set.
    """

    name: ClassVar[str] = "script"

    def __init__(
        self,
        script: str | os.PathLike[str] | list[ScriptLine],
        pad_count: int | None = None,
        speed: float | None = 1.0,
        start_us: int | None = None,
        resolution_us: int = 1,
        sink: "queue.Queue[Any] | None" = None,
    ) -> None:
        if isinstance(script, list):
            lines = script
            self.script_name = "script"
        else:
            lines = load_script(script, pad_count)
            self.script_name = str(script)
        if pad_count is None:
            pad_count = max((line.pad for line in lines), default=1)
        elif any(line.pad > pad_count for line in lines):
            bad = next(line for line in lines if line.pad > pad_count)
            raise InputError(f"{self.script_name} line {bad.line}: pad {bad.pad} does not exist; this table has pads 1 to {pad_count}")
        speed = math.inf if speed is None else float(speed)
        if not speed > 0:
            raise InputError(f"replay speed must be more than 0, got {speed!r}")
        super().__init__(pad_count, resolution_us, sink)
        self.lines = lines
        self.speed = speed
        self._start_us_wanted = start_us
        self._start_us: int | None = None
        self._start_mono_ns = 0
        self._offset_us = 0  # clock jumps in as-fast-as-possible mode
        self._stop = threading.Event()
        self.finished = threading.Event()
        self._thread: threading.Thread | None = None

    def now_us(self) -> int:
        mono_ns = time.monotonic_ns()
        if self._start_us is None:
            return mono_ns // 1000
        elapsed_us = (mono_ns - self._start_mono_ns) // 1000
        if math.isinf(self.speed):
            return self._start_us + elapsed_us + self._offset_us
        return self._start_us + int(elapsed_us * self.speed)

    def start(self) -> None:
        """Begin the replay on a background thread (once)."""
        if self._thread is not None:
            return
        self._start_mono_ns = time.monotonic_ns()
        self._start_us = self._start_us_wanted if self._start_us_wanted is not None else self._start_mono_ns // 1000
        self.notify("connected", f"replaying {len(self.lines)} hits from {self.script_name}")
        self._thread = threading.Thread(target=self._run, name="tabletop-script", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self._start_us is not None
        sent = 0
        for line in self.lines:
            at_us = self._start_us + line.at_us
            if not math.isinf(self.speed):
                # Sleep in short steps so stop() is prompt; the stamp never depends on the wake-up.
                while not self._stop.is_set():
                    wait_us = at_us - self.now_us()
                    if wait_us <= 0:
                        break
                    self._stop.wait(min(wait_us / self.speed / 1e6, 0.05))
            if self._stop.is_set():
                return
            if math.isinf(self.speed):
                behind = at_us - self.now_us()
                if behind > 0:
                    self._offset_us += behind
            self.emit(PadHit(line.pad, at_us, line.kind, line.strength, self.resolution_us))
            sent += 1
        self.notify("info", f"script finished: {sent} hits replayed", finished=True)
        self.finished.set()

    def stop(self) -> None:
        """Stop the replay (hits not yet due are not sent). Idempotent."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def status(self) -> dict[str, Any]:
        """Source status plus the script's name, length, speed and whether it is done."""
        status = super().status()
        status.update(script=self.script_name, lines=len(self.lines), speed=self.speed, finished=self.finished.is_set())
        return status

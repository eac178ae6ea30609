"""The pad box's command channel: SET, SAVE, STREAM and CFG with their replies, and the live levels.

A mixin of :class:`hardware.padbox.SerialPadBox` (which owns the port, the
reader thread and these attributes). A command is written from the caller's
thread; the reader thread hands every reply line to ``_replies``, and the
caller waits for the ``OK`` (or ``ERR``) that answers it. Together these make
the pad box a :class:`hardware.source.LiveLevels`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable

import serial

from core.checks import whole_number
from core.errors import PadSourceError
from hardware import protocol as p

log = logging.getLogger(__name__)

#: How long to wait for the reply to a command (SAVE writes EEPROM: longer).
COMMAND_TIMEOUT_S = 1.0
SAVE_TIMEOUT_S = 2.5


class PadBoxCommands:
    """Commands to the box and the levels it streams back."""

    pad_count: int
    serial: serial.Serial | None
    error: str | None
    connected_port: str | None
    streaming: bool
    offset_us: int
    _state: threading.Lock
    _command_lock: threading.Lock
    _replies: "queue.Queue[p.Event]"
    _levels: dict[str, Any]
    _level_listeners: list[Callable[[dict[str, Any]], None]]

    @property
    def connected(self) -> bool:  # pragma: no cover - SerialPadBox's
        raise NotImplementedError

    def set_threshold(self, pad: int, slap: int, touch: int | None = None) -> None:
        """Set a pad's slap (and touch) threshold on the box, effective at once."""
        self.set_param(pad, "slap", slap)
        if touch is not None:
            self.set_param(pad, "touch", touch)

    def set_param(self, pad: int, name: str, value: int) -> None:
        """Set one per-pad parameter (firmware/PROTOCOL.md, SET). Raises InputError / PadSourceError."""
        whole_number(pad, 1, self.pad_count, "pad")
        p.check_param(name, value)
        self._command(p.encode_set(pad, name, value), f"SET {pad} {name} {value}")

    def save(self) -> None:
        """Keep the current settings in the box's EEPROM."""
        self._command(p.encode_save(), "SAVE", timeout=SAVE_TIMEOUT_S)

    def stream_levels(self, on: bool) -> None:
        """Start or stop live level streaming (LVL lines every 50 ms)."""
        self._command(p.encode_stream(on), f"STREAM {1 if on else 0}")
        self.streaming = bool(on)

    def read_config(self) -> dict[int, dict[str, int]]:
        """Every pad's settings as the box reports them (CFG)."""
        lines = self._command(p.encode_cfg(), "CFG")
        return {ev.pad: dict(ev.settings) for ev in lines if isinstance(ev, p.PadConfig)}

    def latest_levels(self) -> dict[str, Any]:
        """The latest LVL line: ``{"at_us", "levels", "peaks"}`` (lists, pad 1 first), or {}."""
        with self._state:
            return dict(self._levels)

    def add_levels_listener(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call ``listener(frame)`` for every LVL line, with the frame ``latest_levels()`` would return.

        It runs on the reader thread as the line arrives, so no line is missed
        however busy other threads are. It must be quick and must not send
        commands (``set_param``, ``stream_levels``...: they wait for this very
        thread, so they would time out). An exception is logged, never stops reading.
        """
        with self._state:
            if listener not in self._level_listeners:
                self._level_listeners = [*self._level_listeners, listener]

    def remove_levels_listener(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Stop calling ``listener``; unknown listeners are ignored."""
        with self._state:
            self._level_listeners = [f for f in self._level_listeners if f != listener]

    def _command(self, wire: bytes, echo: str, timeout: float = COMMAND_TIMEOUT_S) -> list[p.Event]:
        """Send one command and wait for its OK; returns the reply events before it."""
        word = echo.split(" ")[0]
        with self._command_lock:
            port = self.serial
            if port is None or not self.connected:
                raise PadSourceError(f"no pad box connected ({self.error or 'still searching'}); cannot send {word}")
            while not self._replies.empty():
                self._replies.get_nowait()
            try:
                port.write(wire)
            except (serial.SerialException, OSError) as exc:
                raise PadSourceError(f"writing {word} to the pad box on {self.connected_port} failed: {exc}") from exc
            collected: list[p.Event] = []
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PadSourceError(f"the pad box did not answer {word} within {timeout:g} s")
                try:
                    ev = self._replies.get(timeout=left)
                except queue.Empty:
                    continue
                if isinstance(ev, p.Ok) and ev.command == echo:
                    return collected
                if isinstance(ev, p.Err) and ev.command in (word, "-"):
                    raise PadSourceError(f"the pad box refused {echo!r}: {ev.code} (see firmware/PROTOCOL.md)")
                collected.append(ev)

    def _on_levels(self, ev: p.Levels) -> None:
        frame: dict[str, Any] = {"at_us": self.offset_us + ev.device_us, "levels": list(ev.levels), "peaks": list(ev.peaks)}
        with self._state:
            self._levels = frame
            listeners = self._level_listeners
        for listener in listeners:  # outside the lock: a listener may call latest_levels()
            try:
                listener({"at_us": frame["at_us"], "levels": list(frame["levels"]), "peaks": list(frame["peaks"])})
            except Exception:
                log.exception("levels listener %r failed; reading goes on", listener)

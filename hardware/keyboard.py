"""Simulated pads from the keyboard in a terminal.

Keys (pad N is the Nth key of each row)::

    1 2 3 4 5 6 7 8        slap pad 1..8
    ! @ # $ % ^ & *        touch pad 1..8 (shift + digit, US layout)
    q w e r t y u i        touch pad 1..8 (for layouts where shift+digit differs)

Ctrl-C stops (SIGINT, as usual), Ctrl-D ends keyboard input. When stdin is
a terminal it is switched to character-at-a-time input without echo
(termios: ICANON and ECHO off, ISIG kept so Ctrl-C still works) and restored
on stop. A hit is stamped with the pads' clock when its key is read: the
keyboard is for trying things out, not for photo finishes.
"""

from __future__ import annotations

import logging
import os
import select
import termios
import threading
from typing import Any, Callable

from core.hits import HitKind
from hardware.sim import SimulatedPads

log = logging.getLogger(__name__)

SLAP_KEYS = "12345678"
TOUCH_KEYS = "!@#$%^&*"
TOUCH_KEYS_ALT = "qwertyui"
#: Ctrl-D: end of keyboard input.
EOF_KEY = "\x04"

#: One line for people, printed by ``tabletop pads``.
KEY_HELP = "keys: 1-8 slap pad 1-8; shift+1-8 (!@#$%^&*) or q-i touch pad 1-8; Ctrl-C quits"


def key_to_hit(key: str, pad_count: int = 8) -> tuple[int, HitKind] | None:
    """The (pad, kind) a key stands for, or None for any other key or a pad beyond ``pad_count``."""
    if len(key) != 1:
        return None
    if key in SLAP_KEYS:
        pad, kind = SLAP_KEYS.index(key) + 1, HitKind.SLAP
    elif key in TOUCH_KEYS:
        pad, kind = TOUCH_KEYS.index(key) + 1, HitKind.TOUCH
    elif key.lower() in TOUCH_KEYS_ALT:
        pad, kind = TOUCH_KEYS_ALT.index(key.lower()) + 1, HitKind.TOUCH
    else:
        return None
    return (pad, kind) if pad <= pad_count else None


def keys_to_hits(data: bytes, pad_count: int = 8) -> list[tuple[int, HitKind]]:
    """Every (pad, kind) in a chunk of key bytes, in order; other bytes (escape sequences too) are ignored."""
    out: list[tuple[int, HitKind]] = []
    text = data.decode("latin-1")
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            # Skip an escape sequence (arrow keys: ESC [ A) so its letters are not pads.
            i += 1
            if i < len(text) and text[i] in "[O":
                i += 1
                while i < len(text) and not ("@" <= text[i] <= "~"):
                    i += 1
            i += 1
            continue
        hit = key_to_hit(ch, pad_count)
        if hit is not None:
            out.append(hit)
        i += 1
    return out


class KeyboardReader:
    """Reads key presses from a terminal file descriptor and injects them into simulated pads.

    Args:
        pads: the SimulatedPads that receives the hits.
        fd: file descriptor to read (default: stdin).
        on_eof: called (from the reader thread) when input ends (Ctrl-D or
            the terminal closes).
    """

    def __init__(self, pads: SimulatedPads, fd: int | None = None, on_eof: Callable[[], None] | None = None) -> None:
        self.pads = pads
        self.fd = 0 if fd is None else fd
        self.on_eof = on_eof
        self._saved_attrs: list[Any] | None = None  # termios attributes (mixed ints and a list)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.keys_read = 0

    @property
    def is_terminal(self) -> bool:
        """Whether the descriptor is a terminal (only then is its mode changed)."""
        return os.isatty(self.fd)

    def start(self) -> None:
        """Switch the terminal to key-at-a-time input and start the reader thread."""
        if self._thread is not None:
            return
        if self.is_terminal:
            self._saved_attrs = termios.tcgetattr(self.fd)
            attrs = termios.tcgetattr(self.fd)
            attrs[3] &= ~(termios.ICANON | termios.ECHO)  # lflag; ISIG stays so Ctrl-C works
            attrs[6][termios.VMIN] = 1
            attrs[6][termios.VTIME] = 0
            termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
        self._thread = threading.Thread(target=self._run, name="tabletop-keyboard", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
                if not ready:
                    continue
                data = os.read(self.fd, 64)
            except OSError as exc:  # the terminal went away
                log.info("keyboard: input closed (%s)", exc)
                data = b""
            if not data or EOF_KEY.encode() in data:
                head = data.split(EOF_KEY.encode(), 1)[0]
                self._inject(head)
                if self.on_eof is not None:
                    self.on_eof()
                return
            self._inject(data)

    def _inject(self, data: bytes) -> None:
        for pad, kind in keys_to_hits(data, self.pads.pad_count):
            self.keys_read += 1
            self.pads.inject(pad, kind)

    def stop(self) -> None:
        """Stop reading and give the terminal its old mode back. Idempotent."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._saved_attrs is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved_attrs)
            except termios.error:
                pass  # the terminal is gone; nothing to restore
            self._saved_attrs = None

    def __enter__(self) -> "KeyboardReader":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""The pad box emulator's pseudo-terminal: open, close, announce where it is, write without blocking.

A mixin of :class:`hardware.emulator.PadBoxEmulator` (which owns these
attributes): the transport a USB cable would be, apart from what the box says.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import tty
from pathlib import Path

from hardware import ports

log = logging.getLogger("hardware.emulator")


class PtyPort:
    """The emulator's end of a pseudo-terminal, found by ``hardware.ports`` when announced."""

    announce: bool
    path: str | None
    _master: int | None
    _slave: int | None

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing, as a real UART
        flags = fcntl.fcntl(master, fcntl.F_GETFL)
        fcntl.fcntl(master, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        self._announce()
        log.info("pad-box emulator on %s", self.path)

    def _announce(self) -> None:
        if not self.announce or self.path is None:
            return
        try:
            d = ports.emulator_dir()
            d.mkdir(parents=True, exist_ok=True)
            self._announce_file().write_text(f"{self.path} {os.getpid()}\n", encoding="utf-8")
        except OSError as exc:
            log.warning("emulator: cannot announce %s: %s", self.path, exc)

    def _announce_file(self) -> Path:
        return ports.emulator_dir() / f"{os.getpid()}-{id(self):x}.port"

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None
        if self.announce:
            try:
                self._announce_file().unlink()
            except OSError:
                pass

    def _write(self, data: bytes) -> bool:
        """Write without ever blocking; False if the bytes could not go out."""
        if self._master is None:
            return False
        try:
            os.write(self._master, data)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EIO, errno.EBADF):
                log.warning("emulator write failed: %s", exc)
            return False

"""One table service per data directory: an exclusive lock on ``<data>/lock``.

Two services on one event log would each number events from their own idea
of the log's end: the second's state goes stale and every write it tries is
refused. So ``tabletop serve`` takes an exclusive ``flock`` on a lock file in
the data directory before it opens anything (the log, the pads), and keeps it
until the process ends; a second one exits at once, naming the first's PID.

``flock`` locks belong to the open file, so the kernel drops the lock when the
process dies, even by SIGKILL or a power cut: a stale lock file never blocks
a restart, and the PID written in it is only a message for people.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
from pathlib import Path

from core.errors import ConfigError

log = logging.getLogger(__name__)

LOCK_FILE = "lock"


class DataDirInUse(ConfigError):
    """Another process holds the data directory's lock. ``pid`` is its PID when it wrote one."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class DataDirLock:
    """The exclusive lock on a data directory, held from :meth:`acquire` until :meth:`release`.

    Use as a context manager, or call ``acquire()`` and keep the object alive
    for the life of the service.
    """

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> "DataDirLock":
        """Take the lock or raise :class:`DataDirInUse` at once (never waits)."""
        if self._fd is not None:
            return self
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise ConfigError(f"cannot write in the data directory {self.data_dir} ({exc.strerror}): "
                              "the table could record nothing there; make it writable by this user "
                              "or point --data at a directory you can write") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _read_pid(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ConfigError(f"cannot lock {self.path} ({exc.strerror})") from None
            who = f"PID {pid}" if pid is not None else "a process that has not written its PID yet"
            raise DataDirInUse(
                f"the data directory {self.data_dir} is in use by another tabletop service ({who}); "
                "stop that one first, or give this one its own --data directory",
                pid,
            ) from None
        # Ours now: say who holds it (for the message a second service prints).
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd
        log.debug("locked %s", self.path)
        return self

    def release(self) -> None:
        """Give the lock up (closing the file drops it). Safe to call twice."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:  # pragma: no cover - only the message in the file is lost
            pass
        os.close(fd)

    def __enter__(self) -> "DataDirLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

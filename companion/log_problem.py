"""Why the event log cannot be written now (a full disk, a read-only file), in words for the table."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

@dataclass(frozen=True, slots=True)
class LogProblem:
    """Why the event log cannot be written now: ``kind`` (``full``, ``read_only``, ``io``,
    ``locked`` or ``error``), a sentence for people, and since when (UTC, as ``at``)."""

    kind: str
    message: str
    since: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message, "since": self.since}


def describe_write_error(path: Path, exc: sqlite3.Error) -> tuple[str, str]:
    """(kind, message) for an SQLite error met while writing the log at ``path``.

    The message starts with what is wrong in a few words ("disk full: ..."),
    because the table screen and ``/api/health`` show it as it is.
    """
    name = getattr(exc, "sqlite_errorname", "") or ""
    if not name and "disk is full" in str(exc):
        name = "SQLITE_FULL"
    where = path.parent
    if name.startswith("SQLITE_FULL"):
        return "full", (f"disk full: the event log cannot be written ({where} has no room left); "
                        "free some space there and the table carries on by itself")
    if name.startswith("SQLITE_READONLY"):
        return "read_only", (f"read-only: the event log {path} cannot be written ({exc}); "
                             "make it and its directory writable by this user, or point --data elsewhere")
    if name.startswith("SQLITE_IOERR"):
        return "io", f"I/O error: the event log {path} cannot be written ({exc}); check the SD card or disk"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return "locked", f"locked: another program holds the event log {path} ({exc})"
    if name.startswith("SQLITE_CANTOPEN"):
        return "read_only", (f"cannot open: the event log {path} cannot be opened for writing ({exc}); "
                             f"is {where} read-only, full or not this user's?")
    return "error", f"the event log {path} cannot be written ({exc})"

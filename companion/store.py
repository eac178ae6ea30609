"""The event log: an append-only SQLite table, the single source of truth of the table.

Durability: WAL journal with ``synchronous=FULL``, so a batch is on disk when
:meth:`EventStore.append` returns (the table loop only acknowledges a command
after that). A batch is one transaction (group commit): many hits arriving
together cost one fsync, not one each.

Privacy: the log and SQLite's files beside it are the user's alone (0600, see
:mod:`companion.private`).

Safety: the file is checked read-only before anything may write to it. A file
that is not an SQLite database, is damaged, or was written by a newer version
of the schema raises :class:`~core.errors.StoreError` and is left exactly
as it was.

Threads: one writer (the table loop) uses the store's own connection; readers
(web threads) each borrow a separate read-only connection from a small pool.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from core.errors import StoreError
from companion.private import create_private_file, restrict
from companion.log_problem import LogProblem, describe_write_error
from companion.store_reads import _COLUMNS, StoreReads, _row_to_dict
from companion.store_schema import MIGRATIONS, SQLITE_HEADER, Migration

log = logging.getLogger(__name__)

#: Commits between two WAL checkpoints. SQLite's own automatic checkpoint (every 1000 WAL
#: pages) runs inside the COMMIT that crosses the threshold, i.e. before the table loop may
#: publish that batch; the loop calls :meth:`EventStore.checkpoint_if_due` after publishing
#: instead. A short interval also keeps the WAL small, so after each checkpoint commits
#: overwrite the WAL's existing blocks rather than growing the file, and a durable commit of
#: an unchanged file size is cheaper (no file-system metadata to flush). See docs/performance.md.
CHECKPOINT_EVERY = 64
#: A writer that never calls checkpoint_if_due (a script, not the table loop) still gets one
#: inside append after this many commits, so the WAL cannot grow without bound.
CHECKPOINT_BACKSTOP = 16 * CHECKPOINT_EVERY
#: SQLite page cache per connection, in KiB. Small on purpose: the Pi's memory budget is tight,
#: the log is read mostly at its end, and the OS page cache already holds the file.
WRITER_CACHE_KIB = 256
#: Free room (bytes on the file system, and pages under SQLite's page limit) the log needs to be
#: called writable: below it a start is refused, and after a failed write the table waits for it
#: before it reports the log healthy again (so it does not flap green on the last few blocks).
ROOM_BYTES = 256 * 1024
#: SQLite's own ceiling of ``max_page_count``, restored by ``simulate_fault(None)``.
MAX_PAGES = 4294967294


def utc_now() -> str:
    """Wall-clock time as stored in ``at``: ISO 8601, UTC, milliseconds, ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event about to be appended.

    ``seq`` is normally left None (the store numbers events); the table loop
    passes the number it predicted so a mismatch is caught rather than silently
    shifting every reference. ``at`` defaults to now.
    """

    type: str
    data: dict[str, Any] = field(default_factory=dict)
    game_id: int | None = None
    actor: str | None = None
    at: str | None = None
    seq: int | None = None


class _Foreign(Exception):
    """Raised inside append when the log grew behind this store's back."""


class EventStore(StoreReads):
    """The SQLite event log at ``path`` (created if missing).

    Raises StoreError when the file is damaged, not a database, or from a
    newer schema; the file is never modified in that case.
    """

    def __init__(self, path: str | Path, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.path = Path(path)
        self.migrations = tuple(migrations)
        self.schema_version = len(self.migrations)
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        #: Why the log cannot be written now (None while it can): set by a failed write,
        #: cleared by a successful one or by :meth:`probe`. Read by /api/health and the screen.
        self.problem: LogProblem | None = None
        self._restrict_existing()
        self._check_existing()
        self._conn = self._open_writer()
        self._last_seq = self._query_last_seq()
        #: Commits since the last checkpoint (see CHECKPOINT_EVERY).
        self.commits_since_checkpoint = 0
        # A log that opens but cannot be written would let the table run while it records nothing.
        problem = self.probe()
        if problem is not None:
            self._conn.close()
            self._closed = True
            raise StoreError(f"{problem.message}. The table was not started")

    # ----- opening -----------------------------------------------------------
    def _damaged(self, why: str) -> StoreError:
        return StoreError(
            f"the event log {self.path} {why}. It was not changed. "
            "Move it aside (keep it: it holds the table's history) or start with --data pointing at another directory."
        )

    def _check_existing(self) -> None:
        """Look at an existing file read-only: header, integrity, schema version."""
        if not self.path.exists():
            if not self.path.parent.is_dir():
                raise StoreError(f"cannot create the event log {self.path}: directory {self.path.parent} does not exist")
            return
        if not self.path.is_file():
            raise StoreError(f"the event log {self.path} is not a regular file")
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(100)
        except OSError as exc:
            raise StoreError(f"cannot read the event log {self.path}: {exc.strerror}") from None
        if not head:
            return  # an empty file is what SQLite itself creates: treat it as new
        if len(head) < 100 or not head.startswith(SQLITE_HEADER):
            raise self._damaged("is not an SQLite database (bad header)")
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._damaged(f"cannot be opened ({exc})") from None
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > self.schema_version:
                raise StoreError(
                    f"the event log {self.path} has schema version {version}, written by a newer "
                    f"tabletop-companion; this version understands up to {self.schema_version}. "
                    "Upgrade tabletop-companion, or use --data to point at another directory. The file was not changed."
                )
            problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise self._damaged(f"is damaged ({'; '.join(problems[:3])})")
            if version >= 1:
                cols = [r[1] for r in conn.execute("PRAGMA table_info(events)").fetchall()]
                if cols[:6] != ["seq", "at", "game_id", "type", "data", "actor"]:
                    raise self._damaged(f"does not hold a tabletop event table (columns: {cols or 'none'})")
            elif conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise self._damaged("is an SQLite database of some other program (schema version 0 with tables)")
        except sqlite3.DatabaseError as exc:
            raise self._damaged(f"is damaged ({exc})") from None
        finally:
            conn.close()

    def _restrict_existing(self) -> None:
        """An existing log, and SQLite's ``-wal`` and ``-shm`` beside it, made the user's alone (0600).

        Before anything opens it: even a read-only look makes SQLite create
        ``-wal`` and ``-shm``, with the log's own mode.
        """
        for path in (self.path, self.path.with_name(self.path.name + "-wal"),
                     self.path.with_name(self.path.name + "-shm")):
            if path.is_file():
                restrict(path)

    def _open_writer(self) -> sqlite3.Connection:
        try:
            create_private_file(self.path)  # a new log is 0600 from its first byte, and so its -wal and -shm
        except OSError:
            pass  # a directory we cannot write: connecting says so in SQLite's words
        try:
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a batch is exactly one transaction.
            conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise StoreError(f"the event log {self.path} cannot use WAL journaling (got {mode}); is the directory writable?")
            conn.execute("PRAGMA synchronous=FULL")
            # Checkpoints are run by checkpoint_if_due (after publishing), never inside a commit.
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB:d}")
            self._migrate(conn)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the event log {self.path}: {exc}") from None
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for target in range(version + 1, self.schema_version + 1):
            log.info("event log %s: migrating schema %d -> %d", self.path, target - 1, target)
            conn.execute("BEGIN IMMEDIATE")
            try:
                self.migrations[target - 1](conn)
                conn.execute(f"PRAGMA user_version={target:d}")
                conn.execute("COMMIT")
            except Exception as exc:
                conn.execute("ROLLBACK")
                conn.close()
                # DDL is transactional in SQLite: the file is still at the previous version.
                raise StoreError(
                    f"migrating the event log {self.path} from schema {target - 1} to {target} failed ({exc!r}); "
                    f"it was left at schema {target - 1}"
                ) from None

    def _query_last_seq(self) -> int:
        row = self._conn.execute("SELECT max(seq) FROM events").fetchone()
        return int(row[0] or 0)

    # ----- writing (the table loop only) --------------------------------------
    @property
    def last_seq(self) -> int:
        """The sequence number of the newest committed event (0 for an empty log)."""
        return self._last_seq

    def append(self, batch: Sequence[NewEvent]) -> list[dict[str, Any]]:
        """Append ``batch`` in one durable transaction; return the stored event dicts.

        All or nothing: on any failure the log is as before and StoreError is raised.
        """
        if not batch:
            return []
        if self._closed:
            raise StoreError(f"the event log {self.path} is closed")
        with self._write_lock:
            rows: list[tuple[Any, ...]] = []
            seq = self._last_seq
            for event in batch:
                seq += 1
                if event.seq is not None and event.seq != seq:
                    raise StoreError(f"event numbered {event.seq} but the log's next number is {seq}")
                rows.append((seq, event.at or utc_now(), event.game_id, event.type,
                             json.dumps(event.data, separators=(",", ":")), event.actor))
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    # The loop numbers events itself; someone else writing to the file would break that.
                    actual = self._conn.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
                    if actual != self._last_seq:
                        raise _Foreign(actual)
                    self._conn.executemany(f"INSERT INTO events({_COLUMNS}) VALUES (?,?,?,?,?,?)", rows)
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
            except _Foreign as exc:
                raise StoreError(
                    f"another program wrote to the event log {self.path} (it ends at {exc.args[0]}, "
                    f"this service wrote up to {self._last_seq}); is a second tabletop service using it? "
                    "Stop the other one and restart this one."
                ) from None
            except sqlite3.Error as exc:
                problem = self._note_problem(exc)
                raise StoreError(problem.message) from None
            self._last_seq = seq
            if self.problem is not None:
                log.warning("event log %s: writable again (after: %s)", self.path, self.problem.message)
                self.problem = None
            self.commits_since_checkpoint += 1
            if self.commits_since_checkpoint >= CHECKPOINT_BACKSTOP:
                try:
                    self._checkpoint_locked()
                except StoreError as exc:  # the batch is committed; a failed checkpoint only delays the copy
                    log.warning("%s", exc)
        return [_row_to_dict(r) for r in rows]

    def _rollback(self) -> None:
        """End a failed write transaction without hiding why it failed.

        SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR),
        so a ROLLBACK then fails with "no transaction is active": that must never replace the
        real error the caller is about to report.
        """
        if not self._conn.in_transaction:
            return
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error as exc:  # the original error is what matters
            log.warning("event log %s: ROLLBACK after a failed write failed too: %s", self.path, exc)

    def _note_problem(self, exc: sqlite3.Error) -> LogProblem:
        kind, message = describe_write_error(self.path, exc)
        since = self.problem.since if self.problem is not None and self.problem.kind == kind else utc_now()
        if self.problem is None or self.problem.message != message:
            log.error("event log %s: %s", self.path, message)
        self.problem = LogProblem(kind, message, since)
        return self.problem

    def room(self) -> int:
        """Bytes the log may still grow by: the smaller of the file system's free space (for this
        user) and what SQLite's page limit (``max_page_count``) leaves."""
        try:
            st = os.statvfs(self.path.parent)
            free = st.f_bavail * st.f_frsize
        except OSError:
            free = ROOM_BYTES  # unknown: let the write probe decide
        with self._write_lock:
            pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
            limit = self._conn.execute("PRAGMA max_page_count").fetchone()[0]
            page_size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        return min(free, max(0, limit - pages) * page_size)

    def probe(self) -> LogProblem | None:
        """Check the log can be written now, set :attr:`problem` accordingly and return it.

        Commits one write that changes nothing (the schema version rewritten as it is), which
        catches a read-only file or file system, an I/O error or a lock; then asks for
        :data:`ROOM_BYTES` of room (see :meth:`room`), which catches a full disk.
        """
        if self._closed:
            return self.problem
        with self._write_lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    version = self._conn.execute("PRAGMA user_version").fetchone()[0]
                    self._conn.execute(f"PRAGMA user_version={int(version):d}")
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
            except sqlite3.Error as exc:
                return self._note_problem(exc)
        room = self.room()
        if room < ROOM_BYTES:
            return self._note_problem(sqlite3.OperationalError(f"database or disk is full ({room} bytes of room left)"))
        if self.problem is not None:
            log.warning("event log %s: writable again (after: %s)", self.path, self.problem.message)
        self.problem = None
        return None

    def simulate_fault(self, fault: str | None) -> None:
        """Make this store's writes fail as on a ``"full"`` disk or a ``"read_only"`` log; None ends it.

        A seam for tests and fire drills, shipped like the simulated pads: it uses SQLite's own
        limits on this connection only (``max_page_count`` at the current size, ``query_only``),
        so the failures are SQLite's real SQLITE_FULL and SQLITE_READONLY. Nothing is written.
        """
        if fault not in (None, "full", "read_only"):
            raise ValueError(f"fault must be 'full', 'read_only' or None, got {fault!r}")
        with self._write_lock:
            pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
            self._conn.execute(f"PRAGMA max_page_count={int(pages) if fault == 'full' else MAX_PAGES:d}")
            self._conn.execute(f"PRAGMA query_only={1 if fault == 'read_only' else 0:d}")

    def checkpoint_if_due(self, every: int = CHECKPOINT_EVERY) -> bool:
        """Copy the WAL into the database file once ``every`` commits have gathered; True if it ran.

        Durability does not depend on it (a commit is on disk in the WAL already); it only
        keeps the WAL short. PASSIVE: it never waits for readers, and what a reader still
        needs is left for the next checkpoint. Raises StoreError if SQLite fails.
        """
        if self._closed or self.commits_since_checkpoint < every:
            return False
        with self._write_lock:
            self._checkpoint_locked()
        return True

    def _checkpoint_locked(self) -> None:
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"could not checkpoint the event log {self.path}: {exc}") from None
        self.commits_since_checkpoint = 0

    def pragma(self, name: str) -> Any:
        """The value of ``PRAGMA name`` on the writer connection (for tests and ``doctor``)."""
        if not name.replace("_", "").isalpha():
            raise ValueError(f"not a pragma name: {name!r}")
        return self._conn.execute(f"PRAGMA {name}").fetchone()[0]

    def close(self) -> None:
        """Close every connection. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            conn.close()
        with self._write_lock:
            self._conn.close()

    def __enter__(self) -> "EventStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

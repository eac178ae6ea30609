"""Reading the event log from any thread: a small pool of read-only connections and the queries."""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from companion.stored import stored_event
from core.errors import StoreError

#: Readers kept open for reuse; more may be opened under load and are closed when returned.
READER_POOL_SIZE = 8
#: SQLite page cache per reader connection, in KiB (see the store's WRITER_CACHE_KIB).
READER_CACHE_KIB = 256
_COLUMNS = "seq, at, game_id, type, data, actor"


def _row_to_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    seq, at, game_id, type_, data, actor = row
    return stored_event(seq, at, game_id, type_, json.loads(data), actor)


class StoreReads:
    """The reading half of :class:`~companion.store.EventStore` (which owns these attributes)."""

    path: Path
    _closed: bool
    _readers: list[sqlite3.Connection]
    _readers_lock: threading.Lock

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection of this thread's own for the duration of the block."""
        if self._closed:
            raise StoreError(f"the event log {self.path} is closed")
        with self._readers_lock:
            conn = self._readers.pop() if self._readers else None
        if conn is None:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB:d}")
        try:
            yield conn
        finally:
            with self._readers_lock:
                keep = not self._closed and len(self._readers) < READER_POOL_SIZE
                if keep:
                    self._readers.append(conn)
            if not keep:
                conn.close()

    def _select(self, where: str, params: tuple[Any, ...], limit: int | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {_COLUMNS} FROM events {where} ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {int(limit):d}"
        try:
            with self._reader() as conn:
                return [_row_to_dict(r) for r in conn.execute(sql, params)]
        except sqlite3.Error as exc:
            raise StoreError(f"could not read the event log {self.path}: {exc}") from None

    def iter_events(self, after: int = 0, chunk: int = 2000) -> Iterator[dict[str, Any]]:
        """Every event with seq > ``after``, oldest first, read in chunks (flat memory for big logs)."""
        while True:
            rows = self._select("WHERE seq > ?", (after,), chunk)
            yield from rows
            if len(rows) < chunk:
                return
            after = rows[-1]["seq"]

    def all_events(self) -> list[dict[str, Any]]:
        """Every event, oldest first."""
        return list(self.iter_events())

    def events_after(self, seq: int, limit: int = 1000) -> list[dict[str, Any]]:
        """Up to ``limit`` events with seq > ``seq``, oldest first (SSE resume)."""
        return self._select("WHERE seq > ?", (int(seq),), max(0, int(limit)))

    def events_of_game(self, game_id: int, before: int | None = None) -> list[dict[str, Any]]:
        """Every event of game ``game_id`` (its ``game_started`` included), optionally only seq < ``before``."""
        if before is None:
            return self._select("WHERE game_id = ?", (int(game_id),))
        return self._select("WHERE game_id = ? AND seq < ?", (int(game_id), int(before)))

    def game_markers(self) -> list[dict[str, Any]]:
        """Every ``game_started`` and ``game_ended`` event, oldest first."""
        return self._select("WHERE type IN ('game_started', 'game_ended')", ())

    def games(self) -> list[dict[str, Any]]:
        """One summary per game, oldest first: game_id, kind, title, started, ended, players, settings, outcome."""
        games: dict[int, dict[str, Any]] = {}
        for event in self.game_markers():
            if event["type"] == "game_started":
                data = event["data"]
                games[event["seq"]] = {
                    "game_id": event["seq"],
                    "kind": data.get("kind"),
                    "title": data.get("title"),
                    "started": event["at"],
                    "ended": None,
                    "players": data.get("players", []),
                    "settings": data.get("settings", {}),
                    "outcome": None,
                }
            elif event["game_id"] in games:
                games[event["game_id"]]["ended"] = event["at"]
                games[event["game_id"]]["outcome"] = event["data"].get("outcome")
        return list(games.values())

    def get(self, seq: int) -> dict[str, Any] | None:
        """The event numbered ``seq``, or None."""
        rows = self._select("WHERE seq = ?", (int(seq),))
        return rows[0] if rows else None

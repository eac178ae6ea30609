"""The event log's schema: the SQLite file's header and the ordered migrations."""

from __future__ import annotations

import sqlite3
from typing import Callable

SQLITE_HEADER = b"SQLite format 3\x00"

#: Ordered migrations: ``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1``.
#: Each runs inside the transaction that also bumps ``PRAGMA user_version``.
Migration = Callable[[sqlite3.Connection], None]


def _v1(conn: sqlite3.Connection) -> None:
    """Version 1: the events table and the indexes its readers need."""
    conn.execute(
        """CREATE TABLE events(
               seq     INTEGER PRIMARY KEY AUTOINCREMENT,
               at      TEXT    NOT NULL,
               game_id INTEGER NULL,
               type    TEXT    NOT NULL,
               data    TEXT    NOT NULL,
               actor   TEXT    NULL)"""
    )
    # history(game_id) and the replay of one game for undo
    conn.execute("CREATE INDEX events_by_game ON events(game_id, seq)")
    # past_games(): only the start/end markers, without scanning every hit
    conn.execute("CREATE INDEX events_by_type ON events(type, seq)")


MIGRATIONS: tuple[Migration, ...] = (_v1,)

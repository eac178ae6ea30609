"""The event log: durable WAL commits, atomic batches, schema versions, and damaged files left alone."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from core.errors import StoreError
from companion.store import MIGRATIONS, EventStore, NewEvent


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "log.sqlite3"


def _filled(path: Path, n: int = 20) -> None:
    """A closed v1 log with n events (closing checkpoints the WAL into the main file)."""
    with EventStore(path) as store:
        store.append([NewEvent("note", {"i": i, "pad": "x" * 200}) for i in range(n)])


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir()) if p.name.startswith(path.name)}


def test_a_new_log_uses_wal_with_full_sync_and_schema_v1(db: Path) -> None:
    with EventStore(db) as store:
        assert store.pragma("journal_mode") == "wal"
        assert store.pragma("synchronous") == 2  # FULL: fsync on every commit
        assert store.pragma("user_version") == len(MIGRATIONS) == 1
        assert store.last_seq == 0
        assert store.all_events() == []


def test_append_numbers_a_batch_and_every_reader_sees_it(db: Path) -> None:
    with EventStore(db) as store:
        first = store.append([NewEvent("player_added", {"id": 1}, actor="phone")])
        batch = store.append(
            [NewEvent("game_started", {"kind": "counter"}, game_id=2), NewEvent("added", {"n": 3}, game_id=2)]
        )
        assert [e["seq"] for e in first + batch] == [1, 2, 3]
        assert first[0]["actor"] == "phone" and first[0]["at"].endswith("Z")
        assert store.last_seq == 3
        assert [e["type"] for e in store.all_events()] == ["player_added", "game_started", "added"]
        assert [e["seq"] for e in store.events_after(1)] == [2, 3]
        assert [e["seq"] for e in store.events_after(0, limit=2)] == [1, 2]
        assert [e["seq"] for e in store.events_of_game(2)] == [2, 3]
        assert [e["seq"] for e in store.events_of_game(2, before=3)] == [2]
        assert store.get(3)["data"] == {"n": 3}
        assert store.get(99) is None
        assert store.games()[0]["game_id"] == 2 and store.games()[0]["ended"] is None
    # a completely separate connection (another process would see the same) reads the commit
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 3
    conn.close()


def test_a_batch_is_one_transaction_all_or_nothing(db: Path) -> None:
    with EventStore(db) as store:
        store.append([NewEvent("before")])
        # make the third insert of the next batch fail inside the transaction
        raw = sqlite3.connect(db)
        raw.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.type = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END"
        )
        raw.commit()
        raw.close()
        with pytest.raises(StoreError, match="boom"):
            store.append([NewEvent("ok1"), NewEvent("ok2"), NewEvent("boom")])
        assert [e["type"] for e in store.all_events()] == ["before"]
        assert store.last_seq == 1
        assert [e["seq"] for e in store.append([NewEvent("after")])] == [2]


def test_a_predicted_seq_that_does_not_match_is_refused_before_writing(db: Path) -> None:
    with EventStore(db) as store:
        with pytest.raises(StoreError, match="next number is 1"):
            store.append([NewEvent("x", seq=5)])
        assert store.all_events() == []
        assert store.append([NewEvent("x", seq=1)])[0]["seq"] == 1


def test_the_log_survives_reopening(db: Path) -> None:
    _filled(db, 5)
    with EventStore(db) as store:
        assert store.last_seq == 5
        assert store.append([NewEvent("more")])[0]["seq"] == 6


def test_a_log_from_a_newer_version_is_refused_and_left_unchanged(db: Path) -> None:
    _filled(db)
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA user_version=7")
    raw.commit()
    raw.close()
    before = db.read_bytes()
    with pytest.raises(StoreError, match=r"schema version 7.*newer.*up to 1.*not changed"):
        EventStore(db)
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "content, message",
    [
        (b"hello, this is a shopping list\n" * 10, "not an SQLite database"),
        (b"SQLite format 3\x00" + b"\xff" * 50, "not an SQLite database"),  # header cut short
        (b"SQLite format 3\x00" + b"\x00\x01" * 2048, "damaged"),
    ],
    ids=["text-file", "truncated-header", "garbage-after-header"],
)
def test_a_file_that_is_not_a_log_is_refused_and_left_unchanged(db: Path, content: bytes, message: str) -> None:
    db.write_bytes(content)
    with pytest.raises(StoreError, match=message):
        EventStore(db)
    assert db.read_bytes() == content
    assert _files(db) == {db.name: content}  # no -wal or -shm left behind either


def test_a_corrupted_log_is_refused_and_left_unchanged(db: Path) -> None:
    _filled(db, 400)
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page : 3 * page] = b"\xa5" * page  # scribble over a whole b-tree page
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"):
        EventStore(db)
    assert db.read_bytes() == bytes(data)


def test_another_programs_database_is_refused_and_left_unchanged(db: Path) -> None:
    raw = sqlite3.connect(db)
    raw.execute("CREATE TABLE recipes(name TEXT)")
    raw.commit()
    raw.close()
    before = db.read_bytes()
    with pytest.raises(StoreError, match="some other program"):
        EventStore(db)
    assert db.read_bytes() == before


def test_an_empty_file_is_a_new_log(db: Path) -> None:
    db.write_bytes(b"")
    with EventStore(db) as store:
        assert store.pragma("user_version") == 1


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        EventStore(tmp_path / "nowhere" / "log.sqlite3")


def _v2_add_source(conn: sqlite3.Connection) -> None:
    """A test migration: a new column with a default."""
    conn.execute("ALTER TABLE events ADD COLUMN source TEXT NOT NULL DEFAULT 'table'")


def test_migrations_run_in_order_and_keep_every_event(db: Path) -> None:
    _filled(db, 3)
    with EventStore(db, migrations=(*MIGRATIONS, _v2_add_source)) as store:
        assert store.pragma("user_version") == 2
        assert [e["data"]["i"] for e in store.all_events()] == [0, 1, 2]
        assert store.append([NewEvent("after")])[0]["seq"] == 4
    raw = sqlite3.connect(db)
    assert [r[0] for r in raw.execute("SELECT source FROM events")] == ["table"] * 4
    raw.close()
    # the older code now meets a newer log and refuses it
    with pytest.raises(StoreError, match="newer"):
        EventStore(db)


def test_a_failing_migration_leaves_the_log_at_the_old_version(db: Path) -> None:
    _filled(db, 3)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE events ADD COLUMN half_done TEXT")
        raise RuntimeError("migration bug")

    with pytest.raises(StoreError, match=r"schema 1 to 2 failed.*left at schema 1"):
        EventStore(db, migrations=(*MIGRATIONS, broken))
    with EventStore(db) as store:
        assert store.pragma("user_version") == 1
        assert len(store.all_events()) == 3
        cols = [r[1] for r in store._conn.execute("PRAGMA table_info(events)")]
        assert "half_done" not in cols


def test_readers_on_other_threads_use_their_own_connections(db: Path) -> None:
    with EventStore(db) as store:
        errors: list[BaseException] = []
        seen: list[int] = []
        stop = threading.Event()

        def read() -> None:
            try:
                while not stop.is_set():
                    events = store.events_after(0, limit=100000)
                    seqs = [e["seq"] for e in events]
                    assert seqs == list(range(1, len(seqs) + 1))  # never a torn batch
                    assert len(seqs) % 10 == 0
                    seen.append(len(seqs))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for t in readers:
            t.start()
        for _ in range(30):
            store.append([NewEvent("tick") for _ in range(10)])
        stop.set()
        for t in readers:
            t.join(timeout=30)
        assert not errors
        assert seen and store.last_seq == 300


def test_a_closed_store_refuses_writes_and_reads(db: Path) -> None:
    store = EventStore(db)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.append([NewEvent("x")])
    with pytest.raises(StoreError, match="closed"):
        store.all_events()


def test_a_second_writer_is_detected_instead_of_interleaving(db: Path) -> None:
    with EventStore(db) as ours, EventStore(db) as theirs:
        ours.append([NewEvent("ours")])
        with pytest.raises(StoreError, match="another program wrote to the event log.*second tabletop service"):
            theirs.append([NewEvent("theirs")])
        assert [e["type"] for e in ours.all_events()] == ["ours"]


def test_iter_events_reads_a_long_log_in_chunks_without_gaps(db: Path) -> None:
    with EventStore(db) as store:
        store.append([NewEvent("tick", {"i": i}) for i in range(25)])
        assert [e["data"]["i"] for e in store.iter_events(chunk=4)] == list(range(25))
        assert [e["seq"] for e in store.iter_events(after=20, chunk=2)] == [21, 22, 23, 24, 25]



def test_commits_never_checkpoint_the_wal_but_checkpoint_if_due_does(db: Path) -> None:
    # SQLite's automatic checkpoint would run inside a COMMIT, delaying that batch's publish;
    # the table loop checkpoints after publishing instead (docs/performance.md).
    with EventStore(db) as store:
        assert store.pragma("wal_autocheckpoint") == 0
        for i in range(5):
            store.append([NewEvent("tick", {"i": i, "pad": "x" * 3000})])
        assert store.commits_since_checkpoint == 5
        # Nothing has been copied from the WAL into the database file yet: it holds no event pages.
        assert store.checkpoint_if_due(every=6) is False
        before = db.stat().st_size
        assert before < 5 * 3000
        assert store.checkpoint_if_due(every=5) is True
        assert store.commits_since_checkpoint == 0
        assert db.stat().st_size >= before + 5 * 3000
        assert [e["data"]["i"] for e in store.all_events()] == list(range(5))
    # The checkpointed database alone (WAL gone) still holds every event.
    with EventStore(db) as store:
        assert store.last_seq == 5


def test_a_writer_that_never_checkpoints_gets_one_from_append(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import companion.store as store_module

    monkeypatch.setattr(store_module, "CHECKPOINT_BACKSTOP", 3)
    with EventStore(db) as store:
        store.append([NewEvent("tick")])
        store.append([NewEvent("tick")])
        assert store.commits_since_checkpoint == 2
        store.append([NewEvent("tick")])
        assert store.commits_since_checkpoint == 0  # the backstop ran inside the third append
        assert store.last_seq == 3

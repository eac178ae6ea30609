"""tabletop export / import: histories survive a new SD card; nothing is overwritten by accident."""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

import pytest

from companion.cli import main


def make_data(path: Path, events: int) -> Path:
    path.mkdir(parents=True)
    with sqlite3.connect(path / "tabletop.sqlite3") as conn:
        conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, type TEXT)")
        conn.executemany("INSERT INTO events (type) VALUES (?)", [("e",)] * events)
    (path / "secret_key").write_bytes(b"k" * 32)
    return path


def count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


def test_export_then_import_on_a_new_card(tmp_path: Path, capsys) -> None:
    old = make_data(tmp_path / "old", 7)
    archive = tmp_path / "backup.tar.gz"
    assert main(["export", str(archive), "--data", str(old)]) == 0
    assert "exported 7 events" in capsys.readouterr().out
    new = tmp_path / "new"
    assert main(["import", str(archive), "--data", str(new)]) == 0
    assert count(new / "tabletop.sqlite3") == 7
    assert (new / "secret_key").read_bytes() == b"k" * 32
    assert (new / "secret_key").stat().st_mode & 0o777 == 0o600


def test_import_never_overwrites_without_force_and_keeps_the_old_data(tmp_path: Path, capsys) -> None:
    archive = tmp_path / "b.tar.gz"
    main(["export", str(archive), "--data", str(make_data(tmp_path / "a", 3))])
    target = make_data(tmp_path / "target", 5)
    assert main(["import", str(archive), "--data", str(target)]) == 2
    assert "already has a table with 5 events" in capsys.readouterr().err
    assert count(target / "tabletop.sqlite3") == 5
    assert main(["import", str(archive), "--data", str(target), "--force"]) == 0
    assert count(target / "tabletop.sqlite3") == 3
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("target.before-import-")]
    assert len(kept) == 1 and count(kept[0] / "tabletop.sqlite3") == 5


@pytest.mark.parametrize("kind", ["not-a-tar", "foreign-entry", "damaged-db"])
def test_bad_archives_are_refused_and_change_nothing(tmp_path: Path, capsys, kind: str) -> None:
    archive = tmp_path / "bad.tar.gz"
    if kind == "not-a-tar":
        archive.write_bytes(b"hello")
    else:
        src = tmp_path / "src"
        src.mkdir()
        (src / "tabletop.sqlite3").write_bytes(b"garbage, not sqlite" * 10)
        (src / "manifest.json").write_text('{"format": 1}')
        (src / "evil").write_text("x")
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(src / "tabletop.sqlite3", arcname="tabletop/tabletop.sqlite3")
            tar.add(src / "manifest.json", arcname="tabletop/manifest.json")
            if kind == "foreign-entry":
                tar.add(src / "evil", arcname="../evil")
    target = tmp_path / "target"
    assert main(["import", str(archive), "--data", str(target)]) == 2
    assert capsys.readouterr().err.startswith("tabletop: ")
    assert not target.exists()
    assert not (tmp_path / "evil").exists()


def test_export_of_an_empty_data_dir_says_so(tmp_path: Path, capsys) -> None:
    assert main(["export", str(tmp_path / "x.tar.gz"), "--data", str(tmp_path)]) == 2
    assert "nothing to export" in capsys.readouterr().err


def test_import_refuses_to_replace_the_log_of_a_running_service(tmp_path: Path, capsys) -> None:
    # In WAL mode an idle service holds no lock on the database file, so BEGIN EXCLUSIVE alone
    # did not notice it: --force renamed the directory under the running service.
    import subprocess
    import sys

    archive = tmp_path / "b.tar.gz"
    main(["export", str(archive), "--data", str(make_data(tmp_path / "a", 3))])
    target = tmp_path / "target"
    target.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from companion.store import EventStore, NewEvent;"
         f"s = EventStore({str(target / 'tabletop.sqlite3')!r}); s.append([NewEvent('x')]);"
         "print('open', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        assert main(["import", str(archive), "--data", str(target), "--force"]) == 2
        assert "in use by a running tabletop service" in capsys.readouterr().err
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith("target.before-import-")] == []
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    # Once the service has stopped, the same import goes ahead.
    assert main(["import", str(archive), "--data", str(target), "--force"]) == 0
    assert count(target / "tabletop.sqlite3") == 3


def test_the_running_services_lock_file_is_not_backed_up(tmp_path: Path, capsys) -> None:
    from companion.datalock import DataDirLock

    old = make_data(tmp_path / "old", 3)
    archive = tmp_path / "backup.tar.gz"
    with DataDirLock(old):  # a service runs on it (export reads a live table)
        assert main(["export", str(archive), "--data", str(old)]) == 0
    with tarfile.open(archive) as tar:
        assert sorted(n.rsplit("/", 1)[-1] for n in tar.getnames()) == ["manifest.json", "secret_key", "tabletop.sqlite3"]

"""The data directory is the user's alone (issue 13, item 9): 0700, and every file in it 0600.

It used to be 0755 with a 0644 event log: any account on the Pi could read
every game and copy the secret key that signs the phones' trust. These tests
run with the usual umask (022), so a mode only comes out private where the
code asks for it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Iterator

import pytest
from helpers.serve import Served, sim_args, write_config

from companion.cli import main
from core.errors import StoreError
from companion.private import private_dir, restrict
from companion.store import EventStore, NewEvent
from web import load_secret_key

from helpers.browser import TEST_PIN, HttpSession


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(data: Path) -> dict[str, str]:
    """Every entry of ``data`` (and ``data`` itself as '.') with its mode in octal."""
    return {".": f"{mode(data):04o}", **{p.name: f"{mode(p):04o}" for p in sorted(data.iterdir())}}


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def serve(data: Path, tmp_path: Path) -> Served:
    return Served(*sim_args(data, write_config(tmp_path, pin=TEST_PIN)))


def use_the_table(port: int) -> None:
    """Enter the PIN (the trust record) and write (the log's -wal and -shm)."""
    phone = HttpSession(port)
    phone.login()
    status, body = phone.request("POST", "/api/command", {"name": "add_player", "args": {"name": "Ann"}})
    assert status == 200, body


@pytest.mark.slow
def test_tabletop_serve_makes_a_new_data_directory_and_every_file_in_it_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    served = serve(data, tmp_path)
    try:
        use_the_table(served.wait_ready())
        found = modes(data)
        assert {"tabletop.sqlite3", "tabletop.sqlite3-wal", "tabletop.sqlite3-shm", "secret_key",
                "trusted_phones.json", "lock"} <= set(found), found
        assert found == {name: "0700" if name == "." else "0600" for name in found}
    finally:
        assert served.stop() == 0


@pytest.mark.slow
def test_tabletop_serve_tightens_a_data_directory_an_older_version_left_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    with EventStore(data / "tabletop.sqlite3") as store:
        store.append([NewEvent("player_added", {"id": 1, "name": "Bo", "colour": "#e4572e", "pad": None})])
    (data / "secret_key").write_text("k" * 64 + "\n")
    for path in (data, *data.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)  # what 0755 / 0644 under umask 022 gave
    served = serve(data, tmp_path)
    try:
        use_the_table(served.wait_ready())
        found = modes(data)
        assert found == {name: "0700" if name == "." else "0600" for name in found}
    finally:
        assert served.stop() == 0
    assert "was open to other users (mode 0644); made it 0600" in served.proc.stderr.read()


def test_a_new_event_log_and_sqlites_files_beside_it_are_0600(tmp_path: Path) -> None:
    with EventStore(tmp_path / "log.sqlite3") as store:
        store.append([NewEvent("x", {})])
        assert modes(tmp_path) == {".": f"{mode(tmp_path):04o}", "log.sqlite3": "0600",
                                   "log.sqlite3-shm": "0600", "log.sqlite3-wal": "0600"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file anyway")
def test_a_read_only_log_loses_other_users_access_but_is_never_made_writable(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    with EventStore(path) as store:
        store.append([NewEvent("x", {})])
    path.chmod(0o444)
    with pytest.raises(StoreError, match="read-only"):
        EventStore(path)
    assert mode(path) == 0o400


def test_tightening_keeps_the_owners_bits_and_never_adds_one(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    path.chmod(0o444)
    assert restrict(path) is True and mode(path) == 0o400
    assert restrict(path) is False  # nothing left to take
    assert restrict(tmp_path / "missing") is False
    nested = private_dir(tmp_path / "a" / "b")
    assert mode(nested) == 0o700


def test_the_secret_key_is_made_private_when_found_open(tmp_path: Path) -> None:
    key = load_secret_key(tmp_path / "new")
    assert mode(tmp_path / "new") == 0o700 and mode(tmp_path / "new" / "secret_key") == 0o600
    (tmp_path / "new" / "secret_key").chmod(0o644)
    assert load_secret_key(tmp_path / "new") == key
    assert mode(tmp_path / "new" / "secret_key") == 0o600


def test_export_and_import_keep_the_data_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / "tabletop.sqlite3") as conn:
        conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, type TEXT)")
    (old / "secret_key").write_text("k" * 64)
    archive = tmp_path / "backup.tar.gz"
    assert main(["export", str(archive), "--data", str(old)]) == 0
    assert mode(archive) == 0o600
    new = tmp_path / "new"
    assert main(["import", str(archive), "--data", str(new)]) == 0
    assert modes(new) == {".": "0700", "secret_key": "0600", "tabletop.sqlite3": "0600"}

"""Export and import of the data directory, so score histories survive a new SD card.

An export is a ``.tar.gz`` holding a consistent copy of the SQLite event log
(taken with SQLite's online backup, so the service may keep running), the
other files of the data directory (the secret key) and a manifest. An import
checks the archive before it touches anything and never overwrites a table
that already has a history unless told to, and even then keeps the old one.
"""

from __future__ import annotations

import errno
import fcntl
import io
import json
import os
import sqlite3
import tarfile
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from companion import __version__
from companion.config import DATABASE_NAME
from companion.datalock import LOCK_FILE
from core.errors import InputError, StoreError
from companion.private import FILE_MODE, create_private_file, private_dir, restrict

MANIFEST = "manifest.json"
#: Files of the data directory that are never copied: SQLite's own transient files.
SKIP_SUFFIXES = ("-wal", "-shm", "-journal")
ARCHIVE_ROOT = "tabletop"


def _event_count(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db} is not a tabletop event log: {exc}") from None


def export_data(data_dir: Path, archive: Path) -> dict[str, Any]:
    """Write ``archive`` from ``data_dir``; returns the manifest."""
    db = data_dir / DATABASE_NAME
    if not db.is_file():
        raise InputError(f"{data_dir} holds no event log ({DATABASE_NAME}); nothing to export")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / DATABASE_NAME
        src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)  # consistent even while the service writes
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db} cannot be read: {exc}") from None
        finally:
            dst.close()
            src.close()
        manifest: dict[str, Any] = {
            "format": 1,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "tabletop_version": __version__,
            "events": _event_count(copy),
            "files": [DATABASE_NAME],
        }
        archive.parent.mkdir(parents=True, exist_ok=True)
        # The archive holds what the data directory does: as private as it (0600).
        if not create_private_file(archive):
            restrict(archive)
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(copy, arcname=f"{ARCHIVE_ROOT}/{DATABASE_NAME}")
            for path in sorted(data_dir.iterdir()):
                # The service's lock file says who runs here now: it belongs to no backup.
                if path.name in (DATABASE_NAME, LOCK_FILE) or path.name.endswith(SKIP_SUFFIXES) or not path.is_file():
                    continue
                tar.add(path, arcname=f"{ARCHIVE_ROOT}/{path.name}")
                manifest["files"].append(path.name)
            body = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo(f"{ARCHIVE_ROOT}/{MANIFEST}")
            info.size = len(body)
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(body))
    return manifest


def _read_archive(archive: Path, into: Path) -> dict[str, Any]:
    """Unpack a checked archive into ``into``; refuse anything that is not ours."""
    try:
        tar = tarfile.open(archive, "r:gz")
    except (OSError, tarfile.TarError) as exc:
        raise InputError(f"{archive} is not a tabletop export (.tar.gz): {exc}") from None
    with tar:
        members = tar.getmembers()
        for m in members:
            name = Path(m.name)
            if not m.isfile() or name.is_absolute() or ".." in name.parts or name.parts[0] != ARCHIVE_ROOT or len(name.parts) != 2:
                raise InputError(f"{archive} holds an unexpected entry {m.name!r}; it was not made by `tabletop export`")
        names = {Path(m.name).name for m in members}
        if DATABASE_NAME not in names or MANIFEST not in names:
            raise InputError(f"{archive} has no {DATABASE_NAME} or {MANIFEST}; it was not made by `tabletop export`")
        tar.extractall(into, filter="data")
    root = into / ARCHIVE_ROOT
    manifest = json.loads((root / MANIFEST).read_text())
    if manifest.get("format") != 1:
        raise InputError(f"{archive} is export format {manifest.get('format')!r}; this version reads format 1")
    _event_count(root / DATABASE_NAME)  # a damaged database stops the import here
    return manifest


def import_data(archive: Path, data_dir: Path, *, force: bool = False) -> dict[str, Any]:
    """Restore ``archive`` into ``data_dir``.

    A data directory that already has an event log is only replaced with
    ``force``; the old directory is then kept beside it as ``<dir>.before-import-<time>``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        manifest = _read_archive(archive, Path(tmp))
        existing = data_dir / DATABASE_NAME
        if existing.exists():
            if not force:
                raise InputError(
                    f"{data_dir} already has a table with {_event_count(existing)} events; "
                    "pass --force to replace it (the old data is kept beside it)"
                )
            _check_not_in_use(existing)
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            kept = data_dir.with_name(f"{data_dir.name}.before-import-{stamp}")
            data_dir.rename(kept)
            manifest["kept_old_data"] = str(kept)
        private_dir(data_dir)
        for path in (Path(tmp) / ARCHIVE_ROOT).iterdir():
            if path.name != MANIFEST:
                target = data_dir / path.name
                create_private_file(target)  # 0600 before the first byte: the log too
                target.write_bytes(path.read_bytes())
                target.chmod(FILE_MODE)
    return manifest


#: The byte of the ``-shm`` file on which every open SQLite connection to a WAL database holds a
#: shared lock (the unix VFS's "dead man switch", UNIX_SHM_DMS in os_unix.c).
SHM_DMS_BYTE = 128


def _wal_in_use(db: Path) -> bool:
    """True if another process has the WAL database ``db`` open (e.g. the running service).

    An idle connection in WAL mode holds no lock on the database file itself, so
    ``BEGIN EXCLUSIVE`` succeeds beside a running service; the shared lock on the
    ``-shm`` file shows it. (POSIX locks do not conflict within one process: this
    only sees other processes, which is what matters here.)
    """
    try:
        fd = os.open(db.with_name(db.name + "-shm"), os.O_RDWR)
    except OSError:
        return False  # no -shm file: nobody has the database open in WAL mode
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, SHM_DMS_BYTE)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return True
            raise
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, SHM_DMS_BYTE)
        return False
    finally:
        os.close(fd)


def _check_not_in_use(db: Path) -> None:
    if _wal_in_use(db):
        raise InputError(f"{db} is in use by a running tabletop service: stop it first (sudo systemctl stop tabletop)")
    conn = sqlite3.connect(db, timeout=0.2)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        conn.rollback()
    except sqlite3.OperationalError:
        raise InputError(f"{db} is in use: stop the service first (sudo systemctl stop tabletop)") from None
    finally:
        conn.close()

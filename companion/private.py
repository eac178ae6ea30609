"""The data directory and its files belong to the user who runs the table, and nobody else.

The event log holds every game (a digital Taco deal, every score), the secret
key signs the phones' trust and the trust record lists them: other accounts on
the Pi have no business reading any of it. So the data directory is ``0700``
and every file the table writes in it ``0600``, whatever the umask.

Existing ones (made by an older version, or by hand) are tightened at start:
group and others lose every permission bit, the owner keeps exactly what it
had (a read-only log stays read-only, and is reported as such). A file we may
not change (another owner, a read-only file system) is left as it is, with a
warning: the table can still run, and the reason is in the log.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
#: Permission bits of group and others.
_SHARED = 0o077


def restrict(path: Path) -> bool:
    """Take every group and other permission bit off ``path`` (a file or directory), if it has any.

    Returns True when the mode was changed. A missing path is nothing to do;
    a mode that cannot be changed is logged, never raised.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return False
    if not mode & _SHARED:
        return False
    try:
        path.chmod(mode & ~_SHARED)
    except OSError as exc:
        log.warning("%s is readable by other users (mode %04o) and could not be made private: %s",
                    path, mode, exc.strerror or exc)
        return False
    log.warning("%s was open to other users (mode %04o); made it %04o", path, mode, mode & ~_SHARED)
    return True


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner may enter: created ``0700`` (parents as usual), or tightened.

    Raises OSError when it cannot be created.
    """
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)  # the mode is masked by the umask: never wider
    restrict(path)
    return path


def create_private_file(path: Path) -> bool:
    """Create ``path`` empty with mode ``0600`` unless it exists; True when it was created.

    SQLite makes a log's ``-wal`` and ``-shm`` files with the log's own mode,
    so a log created this way keeps all three private.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        return False
    os.close(fd)
    return True

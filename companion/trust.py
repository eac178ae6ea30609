"""Which phones the table trusts, kept on the server so that trust can be taken back.

A phone that enters the PIN gets a random trust id in its (signed) session
cookie, and the id is recorded here, hashed, with the time its trust ends. A
request is trusted only while its id is still recorded, so:

* logout removes that phone's id,
* "forget all phones" (``POST /api/phones/forget``, ``tabletop forget-phones``)
  removes every id,
* a new PIN removes every id (the record remembers which PIN its ids were
  granted under),

and a copy of a cookie made before any of these is worthless afterwards.

The record is a small JSON file in the data directory (mode 0600), so trust
survives a restart with the same PIN, and ``tabletop forget-phones`` can clear
it while the service runs: the service checks the file's identity on each
lookup (one ``stat``) and reloads it when it changed. Every change is
read-modify-write under an ``flock`` on a lock file beside it and lands with an
atomic rename, so the service and the CLI never lose each other's change.
A damaged file trusts nobody (fail closed) and is rewritten on the next change.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import secrets
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from companion.private import private_dir

log = logging.getLogger(__name__)

TRUST_FILE = "trusted_phones.json"
TRUST_LOCK = "trusted_phones.lock"


def _digest(trust_id: str) -> str:
    # Only a hash is stored: the file alone never lets anyone build a trusted cookie.
    return hashlib.sha256(trust_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class PhoneTrust:
    """The server-side record of trusted phones in ``data_dir``; thread-safe, shared between processes."""

    def __init__(self, data_dir: Path, clock: Callable[[], float] = time.time) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / TRUST_FILE
        self._lock_path = self.data_dir / TRUST_LOCK
        self._clock = clock
        self._mutex = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._doc: dict[str, Any] = {"pin": None, "phones": {}}

    # -------------------------------------------------------------- reading --
    def _read_file(self) -> dict[str, Any]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {"pin": None, "phones": {}}
        try:
            doc = json.loads(raw)
            phones = doc["phones"]
            if not isinstance(phones, dict) or not all(isinstance(v, (int, float)) for v in phones.values()):
                raise ValueError("phones is not a map of expiry times")
            return {"pin": doc.get("pin") if isinstance(doc.get("pin"), str) else None, "phones": dict(phones)}
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("%s is damaged (%s): no phone is trusted until the next PIN entry", self.path, exc)
            return {"pin": None, "phones": {}}

    def _current(self) -> dict[str, Any]:
        """The record as on disk now (reloaded only when the file changed)."""
        try:
            st = os.stat(self.path)
            key: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            key = None
        if key != self._seen or key is None:
            self._doc = self._read_file()
            self._seen = key
        return self._doc

    # -------------------------------------------------------------- writing --
    @contextmanager
    def _change(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write under the lock file; yields the fresh record to change in place."""
        private_dir(self.data_dir)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            doc = self._read_file()
            yield doc
            now = self._clock()
            doc["phones"] = {k: v for k, v in doc["phones"].items() if v > now}
            tmp = self.path.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(out, "w", encoding="utf-8") as fh:
                json.dump({"version": 1, "pin": doc["pin"], "phones": doc["phones"]}, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            self._seen = None  # reload on the next lookup
        finally:
            os.close(fd)

    # ------------------------------------------------------------ the API --
    def bind_pin(self, pin_fingerprint: str) -> int:
        """Start serving under the PIN with this fingerprint: a different PIN than before forgets every phone.

        Returns how many phones were forgotten.
        """
        with self._mutex:
            if self._current().get("pin") == pin_fingerprint:
                return 0
            with self._change() as doc:
                forgotten = sum(1 for v in doc["phones"].values() if v > self._clock()) if doc["pin"] is not None else 0
                if doc["pin"] != pin_fingerprint:
                    doc["phones"] = {}
                    doc["pin"] = pin_fingerprint
            if forgotten:
                log.info("a new PIN: %d trusted phones forgotten", forgotten)
            return forgotten

    def grant(self, until: float) -> str:
        """Record a newly trusted phone until Unix time ``until``; its trust id for the session cookie."""
        trust_id = secrets.token_urlsafe(18)
        with self._mutex, self._change() as doc:
            doc["phones"][_digest(trust_id)] = float(until)
        return trust_id

    def is_trusted(self, trust_id: Any) -> bool:
        """True while ``trust_id`` is recorded and its time has not run out."""
        if not isinstance(trust_id, str) or not trust_id:
            return False
        with self._mutex:
            until = self._current()["phones"].get(_digest(trust_id))
        return until is not None and self._clock() < until

    def revoke(self, trust_id: Any) -> bool:
        """Forget one phone (logout); True if it was trusted."""
        if not isinstance(trust_id, str) or not trust_id:
            return False
        with self._mutex, self._change() as doc:
            return doc["phones"].pop(_digest(trust_id), None) is not None

    def revoke_all(self) -> int:
        """Forget every phone; how many were trusted."""
        with self._mutex, self._change() as doc:
            now = self._clock()
            count = sum(1 for v in doc["phones"].values() if v > now)
            doc["phones"] = {}
        if count:
            log.info("forgot %d trusted phones", count)
        return count

    def count(self) -> int:
        """How many phones are trusted now."""
        with self._mutex:
            now = self._clock()
            return sum(1 for v in self._current()["phones"].values() if v > now)

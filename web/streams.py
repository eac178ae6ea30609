"""How many live streams (``GET /api/events``) may be open at once.

Under waitress each open stream holds one of the ``server.threads`` pool
threads for as long as it is open, so unlimited streams would leave no thread
for commands, pages or ``/api/health`` (48 open streams locked the table). The
app therefore admits streams against three limits and answers every stream
beyond them at once with ``503`` and ``Retry-After``, which costs a thread for
a millisecond, not for the evening:

* ``total``: streams open at once; by default a third of the threads (at least
  2) are kept for everything else.
* ``per_client``: streams from one address (a phone with a few tabs open).
  The Pi itself (``127.0.0.1``, ``::1``: its own screen, scripts on it) is not
  held to it, only to the other two limits.
* ``trusted_reserve``: the last slots are kept for phones with the PIN, so
  watchers without it can never stop the table's own phones from watching.

A slot is held from admission until the WSGI server closes the response
(client gone, server stopping); see :class:`AdmittedStream`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator


#: Addresses of the Pi itself (as in web.pages: the table's own screen may run there).
THIS_MACHINE = frozenset({"127.0.0.1", "::1"})


@dataclass(frozen=True)
class StreamRefusal:
    """Why a stream was not admitted, and when to try again."""

    message: str
    retry_after: int


class StreamSlots:
    """Counts open streams overall, per client address and by trust; thread-safe."""

    def __init__(self, total: int, per_client: int, trusted_reserve: int = 0, retry_after: int = 10) -> None:
        if total < 1 or per_client < 1 or not 0 <= trusted_reserve < total:
            raise ValueError(f"stream limits: total {total}, per client {per_client}, reserve {trusted_reserve}")
        self.total = total
        self.per_client = per_client
        self.trusted_reserve = trusted_reserve
        self.retry_after = retry_after
        self._lock = threading.Lock()
        self._open = 0
        self._untrusted = 0
        self._by_client: dict[str, int] = {}

    def admit(self, client: str, trusted: bool) -> Callable[[], None] | StreamRefusal:
        """A release function for the new stream's slot, or why it is refused."""
        with self._lock:
            if client not in THIS_MACHINE and self._by_client.get(client, 0) >= self.per_client:
                return StreamRefusal(
                    f"this address already has {self.per_client} live streams open (the most one address may have); "
                    f"close a tab, or try again in {self.retry_after} s",
                    self.retry_after,
                )
            if self._open >= self.total:
                return StreamRefusal(
                    f"the table already serves {self.total} live streams (the most it keeps threads for); "
                    f"try again in {self.retry_after} s",
                    self.retry_after,
                )
            if not trusted and self._untrusted >= self.total - self.trusted_reserve:
                return StreamRefusal(
                    f"the table already serves {self._untrusted} live streams to phones without the PIN; "
                    f"the rest are kept for phones with it: enter the PIN, or try again in {self.retry_after} s",
                    self.retry_after,
                )
            self._open += 1
            self._untrusted += 0 if trusted else 1
            self._by_client[client] = self._by_client.get(client, 0) + 1
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if released.is_set():
                    return
                released.set()
                self._open -= 1
                self._untrusted -= 0 if trusted else 1
                left = self._by_client.get(client, 1) - 1
                if left > 0:
                    self._by_client[client] = left
                else:
                    self._by_client.pop(client, None)

        return release

    def status(self) -> dict[str, int]:
        """Open streams now and the limits."""
        with self._lock:
            return {
                "open": self._open,
                "without_pin": self._untrusted,
                "clients": len(self._by_client),
                "max": self.total,
                "max_per_client": self.per_client,
                "kept_for_pin": self.trusted_reserve,
            }


class AdmittedStream:
    """A stream's iterable that gives its slot back when the server closes it (once, however it ends)."""

    def __init__(self, stream: Any, release: Callable[[], None]) -> None:
        self._stream = stream
        self._release = release

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._stream)

    def close(self) -> None:
        """Close the inner stream, then free the slot (even if closing failed)."""
        try:
            close = getattr(self._stream, "close", None)
            if close is not None:
                close()
        finally:
            self._release()


def default_stream_limits(threads: int) -> tuple[int, int]:
    """``(total, trusted_reserve)`` for a pool of ``threads``: a third of the threads (at least 2) stay free."""
    total = max(1, threads - max(2, threads // 3))
    return total, total // 4

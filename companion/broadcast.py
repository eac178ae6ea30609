"""Fan-out of table updates to every subscriber (each SSE stream is one).

The table loop calls :meth:`Broadcaster.publish` once per committed batch; it
never blocks and never grows memory: each subscriber has a bounded queue, and
one that falls behind (a phone on bad Wi-Fi) has its backlog replaced by a
single *resync* update carrying the latest state, so the stream can re-read
what it missed from the log (``TableService.events_after``).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

#: Updates a subscriber may have waiting before it is switched to a resync.
QUEUE_LIMIT = 256


@dataclass(frozen=True, slots=True)
class Update:
    """One committed batch: the last seq, the stored events, the full public state after them.

    ``resync`` is True for the marker a subscriber gets after it overflowed:
    ``events`` is then empty and the events between the subscriber's last seq
    and ``seq`` must be read from the log. Treat ``state`` as read-only: every
    subscriber shares it.
    """

    seq: int
    events: list[dict[str, Any]]
    state: dict[str, Any]
    resync: bool = False


@dataclass(eq=False)
class Subscription:
    """One subscriber's queue of updates. Use ``get`` from one thread; ``close`` when done."""

    _broadcaster: "Broadcaster"
    limit: int = QUEUE_LIMIT
    _items: deque[Update] = field(default_factory=deque)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False
    #: How many times this subscriber overflowed and got a resync instead of its backlog.
    overflows: int = 0

    def _put(self, update: Update) -> None:
        with self._cond:
            if self.closed:
                return
            if len(self._items) >= self.limit:
                self._items.clear()
                self.overflows += 1
                log.info("a subscriber fell %d updates behind; it gets a resync at seq %d", self.limit, update.seq)
                update = Update(update.seq, [], update.state, resync=True)
            self._items.append(update)
            self._cond.notify()

    def get(self, timeout: float | None = None) -> Update | None:
        """The next update, or None after ``timeout`` seconds or once closed."""
        with self._cond:
            if not self._items and not self.closed:
                self._cond.wait(timeout)
            if self._items and not self.closed:
                return self._items.popleft()
            return None

    def pending(self) -> int:
        """How many updates are waiting."""
        with self._cond:
            return len(self._items)

    def close(self) -> None:
        """Stop receiving updates and wake a waiting ``get``. Safe to call twice."""
        with self._cond:
            self.closed = True
            self._items.clear()
            self._cond.notify_all()
        self._broadcaster._remove(self)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Broadcaster:
    """Hands each published :class:`Update` to every open :class:`Subscription`."""

    def __init__(self, limit: int = QUEUE_LIMIT) -> None:
        self.limit = limit
        self._subs: set[Subscription] = set()
        self._lock = threading.Lock()
        self._closed = False

    def subscribe(self) -> Subscription:
        """A new subscription receiving every update published from now on."""
        sub = Subscription(self, self.limit)
        with self._lock:
            if self._closed:
                sub.closed = True
            else:
                self._subs.add(sub)
        return sub

    def publish(self, update: Update) -> None:
        """Give ``update`` to every subscriber without blocking."""
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub._put(update)

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions are open (for /api/health)."""
        with self._lock:
            return len(self._subs)

    def close(self) -> None:
        """Close every subscription (service shutdown); later subscriptions start closed."""
        with self._lock:
            self._closed = True
            subs, self._subs = list(self._subs), set()
        for sub in subs:
            sub.close()

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.discard(sub)

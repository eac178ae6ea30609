"""The live stream every phone listens to: Server-Sent Events from the table's log.

Messages (see docs/api.md):

* ``retry: <ms>`` first, so browsers reconnect quickly after a phone sleeps.
* ``event: log`` with ``id: <seq>`` and the stored event as JSON, once per
  logged event, in sequence order. The id is the log sequence number, so a
  reconnecting browser sends ``Last-Event-ID`` and resumes exactly there.
* ``event: state`` (no id) with the full public state after each batch.
* ``: keep-alive`` comments when nothing happened for a while, so proxies and
  phones do not drop an idle connection.

Order of work on connect, chosen so nothing falls in a crack: subscribe to
live updates first, then send the backlog from the store, then the snapshot;
live updates at or below what was already sent are skipped, and a gap in
the live sequence (or a resync marker from the broadcaster) is filled from
the store.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterator

from companion.text import dumps_json, encode_utf8

if TYPE_CHECKING:  # pragma: no cover
    from companion.service import TableService

log = logging.getLogger(__name__)


def _json(data: Any) -> str:
    # JSON never contains a raw newline, so each message is one data: line. dumps_json escapes a lone
    # surrogate (a name stored before the text rules): one such event must not end every stream.
    return dumps_json(data, separators=(",", ":"))


def log_message(event: dict[str, Any]) -> str:
    """One ``event: log`` message for a stored event."""
    return f"id: {int(event['seq'])}\nevent: log\ndata: {_json(event)}\n\n"


def state_message(state: dict[str, Any]) -> str:
    """One ``event: state`` message (no id: it does not move the resume point)."""
    return f"event: state\ndata: {_json(state)}\n\n"


def comment(text: str) -> str:
    """An SSE comment line (ignored by browsers, keeps the connection alive)."""
    return f": {text}\n\n"


class _EncodedUpdates:
    """The SSE text of recent updates, encoded once and shared by every stream.

    Every subscriber gets the same Update object, so twenty phones need one
    JSON encoding of the state, not twenty (it is the biggest cost per client).
    """

    def __init__(self, size: int = 16) -> None:
        self._lock = threading.Lock()
        self._entries: "OrderedDict[int, tuple[Any, bytes]]" = OrderedDict()
        self._size = size

    def text(self, update: Any) -> bytes:
        """Every event of ``update`` as ``log`` messages, then its ``state`` message, as UTF-8."""
        key = id(update)
        with self._lock:
            entry = self._entries.get(key)
            # The entry holds the update itself, so its id cannot be reused while cached.
            if entry is not None and entry[0] is update:
                return entry[1]
        text = encode_utf8("".join(log_message(e) for e in update.events) + state_message(update.state))
        with self._lock:
            self._entries[key] = (update, text)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return text


ENCODED = _EncodedUpdates()


def is_resync(update: Any) -> bool:
    """True for the broadcaster's marker that this subscriber missed updates."""
    if isinstance(update, str):
        return update == "resync"
    return bool(getattr(update, "resync", False))


class EventStream:
    """An iterable of SSE messages (bytes) for one client; close() ends it."""

    def __init__(
        self,
        service: "TableService",
        after: int | None,
        *,
        keepalive_s: float,
        retry_ms: int,
        poll_s: float,
        page: int,
        stopping: threading.Event,
        disconnected: Callable[[], bool] | None = None,
    ) -> None:
        self.service = service
        self.after = after
        self.keepalive_s = keepalive_s
        self.retry_ms = retry_ms
        self.poll_s = poll_s
        self.page = page
        self.stopping = stopping
        self.disconnected = disconnected or (lambda: False)
        self._iter = self._generate()

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> bytes:
        chunk = next(self._iter)
        return chunk if isinstance(chunk, bytes) else encode_utf8(chunk)

    def close(self) -> None:
        """Called by the WSGI server when the response ends (client gone or shutdown)."""
        self._iter.close()

    # ------------------------------------------------------------------
    def _backlog(self, last: int, upto: int | None) -> Iterator[str]:
        """Stored events after ``last`` (and at most ``upto``), one chunk per page; updates ``self._last``."""
        while True:
            events = self.service.events_after(last, limit=self.page)
            parts: list[str] = []
            done = len(events) < self.page
            for event in events:
                seq = int(event["seq"])
                if upto is not None and seq > upto:
                    done = True
                    break
                if seq <= last:  # defensive: never send an event twice
                    continue
                parts.append(log_message(event))
                last = seq
            self._last = last
            if parts:
                yield "".join(parts)  # one socket write per page, not per event
            if done:
                return

    def _generate(self) -> Generator[str | bytes, None, None]:
        subscription = self.service.subscribe()
        try:
            yield f"retry: {int(self.retry_ms)}\n" + comment("tabletop live stream")
            seq, state = self.service.snapshot()
            last = self.after
            if last is not None and last > seq:
                # An id from the future (another database, or a reset): start afresh.
                log.info("SSE client resumed after %d but the log ends at %d; sending the state", last, seq)
                last = seq
            if last is not None and last < seq:
                yield from self._backlog(last, upto=seq)
            self._last = seq
            yield state_message(state)
            last_write = time.monotonic()

            while not self.stopping.is_set():
                update = subscription.get(timeout=self.poll_s)
                if update is None:
                    if getattr(subscription, "closed", False):
                        return  # the service is shutting down
                    if self.disconnected():
                        return
                    if time.monotonic() - last_write >= self.keepalive_s:
                        yield comment("keep-alive")
                        last_write = time.monotonic()
                    continue
                if is_resync(update):
                    seq, state = self.service.snapshot()
                    if seq > self._last:
                        yield from self._backlog(self._last, upto=seq)
                    self._last = max(self._last, seq)
                    yield state_message(state)
                    last_write = time.monotonic()
                    continue
                if update.events and update.seq <= self._last:
                    continue  # already sent from the backlog
                if update.seq < self._last:
                    continue  # an older state than the client has
                fresh = [e for e in update.events if int(e["seq"]) > self._last]
                if fresh and int(fresh[0]["seq"]) == self._last + 1 and len(fresh) == len(update.events):
                    # The usual case: exactly the next events; one write for events and state.
                    self._last = max(self._last, int(update.seq))
                    yield ENCODED.text(update)
                    last_write = time.monotonic()
                    continue
                if fresh and int(fresh[0]["seq"]) != self._last + 1:
                    # The live stream skipped something: the store has it.
                    yield from self._backlog(self._last, upto=update.seq)
                else:
                    for event in fresh:
                        yield log_message(event)
                self._last = max(self._last, int(update.seq))
                yield state_message(update.state)
                last_write = time.monotonic()
        finally:
            subscription.close()

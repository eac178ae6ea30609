"""A raw Server-Sent Events reader over http.client, for scripts, tests and benchmarks.

It parses the stream exactly as the SSE spec says (``event:``, ``id:``,
``data:``, ``retry:`` fields; ``:`` comments; a blank line ends a message)
and hands every message to a queue from a background thread.
"""

from __future__ import annotations

import http.client
import json
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class SseMessage:
    """One parsed SSE block. ``comment`` holds comment lines (keep-alives)."""

    event: str = "message"
    id: str | None = None
    data: str = ""
    retry: int | None = None
    comments: list[str] = field(default_factory=list)
    received: float = 0.0  # time.perf_counter() when its blank line arrived

    def json(self) -> Any:
        return json.loads(self.data)


class SseClient:
    """One long-lived GET /api/events connection read on a thread."""

    def __init__(self, port: int, *, last_event_id: int | None = None, after: int | None = None, timeout: float = 30.0,
                 source: str | None = None, cookie: str | None = None) -> None:
        """Connect and read the response headers; ``source``: a local address to connect from
        (e.g. ``127.0.0.7``, to act as another device); ``cookie``: a session cookie to send."""
        path = "/api/events" + (f"?after={after}" if after is not None else "")
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        if cookie:
            headers["Cookie"] = cookie
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                               source_address=(source, 0) if source else None)
        self.conn.connect()
        # Kept: http.client forgets its socket once a response says "close".
        self._sock: socket.socket = self.conn.sock
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.content_type = self.response.getheader("Content-Type", "")
        self.retry_after = self.response.getheader("Retry-After")
        self.messages: "queue.Queue[SseMessage | None]" = queue.Queue()
        self._closed = False
        #: True when the stream broke while the client was still reading (not closed by us).
        self.error = False
        self._thread = threading.Thread(target=self._read, name="sse-client", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        current = SseMessage()
        has_fields = False
        try:
            while True:
                raw = self.response.readline()
                if not raw:
                    break
                line = raw.decode("utf-8").rstrip("\r\n")
                if line == "":
                    if has_fields:
                        current.received = time.perf_counter()
                        self.messages.put(current)
                    current, has_fields = SseMessage(), False
                    continue
                has_fields = True
                if line.startswith(":"):
                    current.comments.append(line[1:].strip())
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    current.event = value
                elif name == "id":
                    current.id = value
                elif name == "data":
                    current.data = value if not current.data else current.data + "\n" + value
                elif name == "retry" and value.isdigit():
                    current.retry = int(value)
        except Exception:  # noqa: BLE001 - any failure here means the stream is over
            if not self._closed:
                self.error = True
        finally:
            self.messages.put(None)

    def next(self, timeout: float = 10.0) -> SseMessage:
        """The next message; AssertionError if the stream ended or nothing came (hang guard)."""
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no SSE message within {timeout} s") from None
        if message is None:
            raise AssertionError("the SSE stream ended")
        return message

    def until(self, predicate: Callable[[SseMessage], bool], timeout: float = 10.0) -> list[SseMessage]:
        """Every message up to and including the first that satisfies ``predicate``."""
        seen: list[SseMessage] = []
        end = time.monotonic() + timeout
        while True:
            message = self.next(max(0.01, end - time.monotonic()))
            seen.append(message)
            if predicate(message):
                return seen

    def close(self) -> None:
        """Drop the connection (as a phone going to sleep would)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()
        self.response.close()
        self._sock.close()
        self._thread.join(timeout=10)

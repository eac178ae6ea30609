"""A simulated phone pad: what the /pad page does, over HTTP, with a clock of its own.

For tests and the phone-pad benchmark. The phone's clock is the host's
monotonic clock run ``ppm`` fast or slow from an ``offset_us`` of its own, as
a phone's ``performance.now()`` is unrelated to the table's clock. A touch
the phone *feels* at host time ``t`` is stamped ``latency_us`` (plus jitter)
later on the phone's clock, as a touchscreen stamps it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from web.json_client import JsonClient


class SimulatedPhone:
    """One phone with the pad page open, talking to the table at ``port`` (or through a proxy there)."""

    def __init__(self, port: int, offset_us: int = 0, ppm: float = 0.0, host: str = "127.0.0.1",
                 timeout: float = 5.0) -> None:
        self.client = JsonClient(port, host=host, timeout=timeout)
        self.offset_us = offset_us
        self.rate = 1.0 + ppm * 1e-6
        self._answered: list[dict[str, int]] = []
        self._lock = threading.Lock()
        self._restart = True
        self.next_sync_ms = 50
        self.lost = 0
        self.rounds = 0

    def phone_us(self, host_us: int | None = None) -> int:
        """The phone's clock at host monotonic time ``host_us`` (default now)."""
        if host_us is None:
            host_us = time.monotonic_ns() // 1000
        return self.offset_us + round(host_us * self.rate)

    def open(self) -> "SimulatedPhone":
        """Open the pad page's session (its cookie and CSRF token)."""
        self.client.start()
        self.call("GET", "/api/pad")
        return self

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request: ``(status, body)``."""
        status, _, data = self.client.call(method, path, body)
        return status, data

    def sync_once(self, client: JsonClient | None = None) -> bool:
        """One round trip as the page makes it; False when it was lost (a timeout or a broken connection).

        Thread-safe: rounds overlap (:meth:`sync_for` sends one every
        ``next_sync_ms`` without waiting), each reporting the answers come since.
        ``client``: the connection to use (default: this phone's own).
        """
        client = client or self.client
        with self._lock:
            body: dict[str, Any] = {"t1_us": self.phone_us()}
            if self._answered:
                body["answered"], self._answered = self._answered, []
            if self._restart:
                body["restart"] = True
                self._restart = False
        try:
            status, _, data = client.call("POST", "/api/pad/sync", body)
        except OSError:
            with self._lock:
                self.lost += 1
            return False
        t4 = self.phone_us()
        if status != 200:
            raise RuntimeError(f"sync answered {status}: {data!r}")
        with self._lock:
            self._answered.append({"id": data["id"], "t4_us": t4})
            self.next_sync_ms = data["next_sync_ms"]
            self.rounds += 1
        return True

    def sync_for(self, seconds: float, connections: int = 4) -> None:
        """Send a round every ``next_sync_ms`` (as the table asks) for ``seconds``, without waiting for answers.

        As a browser does, the rounds share a few kept-alive connections
        (``connections``), each sending its next round when its turn comes.
        """
        end = time.monotonic() + seconds
        turn = threading.Lock()
        schedule = {"next": time.monotonic()}

        def worker() -> None:
            client = JsonClient(self.client.port, host=self.client.host, timeout=self.client.timeout, keep_alive=True)
            client.cookie, client.csrf = self.client.cookie, self.client.csrf
            while True:
                with turn:
                    at = schedule["next"]
                    schedule["next"] = at + self.next_sync_ms / 1000.0
                if at >= end:
                    return
                time.sleep(max(0.0, at - time.monotonic()))
                self.sync_once(client)

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=seconds + self.client.timeout + 1)

    def me(self) -> dict[str, Any]:
        """GET /api/pad."""
        status, data = self.call("GET", "/api/pad")
        if status != 200:
            raise RuntimeError(f"GET /api/pad answered {status}: {data!r}")
        me: dict[str, Any] = data
        return me

    def claim(self, code: str) -> tuple[int, Any]:
        """POST /api/pad/claim."""
        return self.call("POST", "/api/pad/claim", {"code": code})

    def calibrate(self, asynchronies_us: list[int]) -> tuple[int, Any]:
        """POST /api/pad/calibration."""
        return self.call("POST", "/api/pad/calibration", {"asynchronies_us": asynchronies_us})

    def touch(self, felt_host_us: int, latency_us: int = 0, kind: str = "slap") -> tuple[int, Any]:
        """A touch felt at host time ``felt_host_us``, stamped ``latency_us`` later on the phone: POST /api/pad/hit."""
        body = {"at_us": self.phone_us(felt_host_us + latency_us), "kind": kind, "sent_us": self.phone_us()}
        return self.call("POST", "/api/pad/hit", body)

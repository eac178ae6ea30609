"""A small JSON client over http.client, for scripts, tests and benchmarks.

It keeps the session cookie and the CSRF token as a phone's page does, opens
a connection a request (so each may come from another local address, as a
guest rotating addresses would) or, with ``keep_alive``, keeps one open as a
phone's browser does, and returns the status, the headers and the body
(parsed JSON, else text).
"""

from __future__ import annotations

import http.client
import json
from typing import Any


class JsonClient:
    """One session with the table at ``host:port``; requests from ``source`` unless a call names another.
    With ``keep_alive`` the calls from ``source`` share one connection, opened again after a failed call."""

    def __init__(self, port: int, host: str = "127.0.0.1", source: str | None = None, timeout: float = 30.0,
                 keep_alive: bool = False) -> None:
        self.host = host
        self.port = port
        self.source = source
        self.timeout = timeout
        self.keep_alive = keep_alive
        self.cookie: str | None = None
        self.csrf: str | None = None
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self, source: str | None) -> http.client.HTTPConnection:
        if self.keep_alive and source is None and self._conn is not None:
            return self._conn
        where = source or self.source
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout,
                                          source_address=(where, 0) if where else None)
        if self.keep_alive and source is None:
            self._conn = conn
        return conn

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
             source: str | None = None) -> tuple[int, dict[str, str], Any]:
        """One request: ``(status, headers, body)``; ``body`` is sent as JSON, with the CSRF token unless a GET."""
        conn = self._connection(source)
        kept = conn is self._conn
        try:
            sent = dict(headers or {})
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                sent["Content-Type"] = "application/json"
            if self.cookie:
                sent["Cookie"] = self.cookie
            if self.csrf and method != "GET":
                sent["X-CSRF-Token"] = self.csrf
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
        except BaseException:
            conn.close()
            if kept:
                self._conn = None
            raise
        if not kept:
            conn.close()
        set_cookie = response.getheader("Set-Cookie")
        if set_cookie:
            self.cookie = set_cookie.split(";", 1)[0]
        try:
            payload: Any = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode("utf-8", "replace")
        return response.status, dict(response.getheaders()), payload

    def start(self) -> "JsonClient":
        """Fetch this session's CSRF token (enough for everything but what needs the PIN)."""
        status, _, data = self.call("GET", "/api/session")
        if status != 200:
            raise RuntimeError(f"GET /api/session answered {status}: {data!r}")
        self.csrf = data["csrf_token"]
        return self

    def login(self, pin: str) -> "JsonClient":
        """Fetch the CSRF token and enter the PIN: a trusted session, as a phone with the PIN has."""
        self.start()
        status, _, data = self.call("POST", "/api/pin", {"pin": pin})
        if status != 200:
            raise RuntimeError(f"POST /api/pin answered {status}: {data!r}")
        return self

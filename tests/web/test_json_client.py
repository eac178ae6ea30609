"""web/json_client.JsonClient: a connection a request, or one kept alive (and opened again after a failure)."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Iterator

import pytest

from web.json_client import JsonClient


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    ports: list[int] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.ports.append(self.client_address[1])
        body = json.dumps({"csrf_token": "t"} if self.path == "/api/session" else {"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[http.server.ThreadingHTTPServer]:
    _Handler.ports = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_a_connection_a_request_by_default(server) -> None:
    client = JsonClient(server.server_address[1])
    for _ in range(3):
        assert client.call("GET", "/x")[0] == 200
    assert len(set(_Handler.ports)) == 3


def test_keep_alive_shares_one_connection_and_opens_another_after_a_failure(server) -> None:
    client = JsonClient(server.server_address[1], keep_alive=True)
    assert client.start().csrf == "t"
    for _ in range(3):
        status, _, body = client.call("GET", "/x")
        assert (status, body) == (200, {"ok": True})
    assert len(set(_Handler.ports)) == 1
    assert client._conn is not None
    client._conn.sock.close()  # the server's side went away (a restart, a dropped Wi-Fi)
    with pytest.raises(OSError):
        client.call("GET", "/x")
    assert client.call("GET", "/x")[0] == 200  # a new connection
    assert len(set(_Handler.ports)) == 2

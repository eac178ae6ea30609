"""No number of watchers can starve the table: live streams beyond the limits get a quick 503.

Issue 13, item 2: every open ``GET /api/events`` holds a waitress thread, and
48 of them (``server.threads``) locked every write, page and ``/api/health``.
These tests run a real waitress server with 8 threads and open more streams
than it has threads, from the Pi itself and from many other loopback
addresses. Timeouts only bound a hang: a starved server fails them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from companion.config import Config, parse_config
from core.errors import ConfigError
from companion.service import TableService
from web import create_app
from web.sse_client import SseClient
from web.streams import StreamSlots, default_stream_limits

from helpers.browser import LIVE_SSE, TEST_PIN, HttpSession, LiveServer, start_live_server, table_service, wait_until  # noqa: F401

pytestmark = pytest.mark.slow

THREADS = 8
#: What create_app derives from server.threads = 8: 6 streams, 1 kept for phones with the PIN.
TOTAL, RESERVE = default_stream_limits(THREADS)
PER_CLIENT = 4
HANG_GUARD_S = 20.0


@pytest.fixture
def server(tmp_path: Path, table_service: TableService) -> Iterator[LiveServer]:
    """The app as `tabletop serve` builds it for server.threads = 8, under waitress with 8 threads."""
    data = tmp_path / "data"
    config = Config(data_dir=data, server_threads=THREADS, server_pin=TEST_PIN)
    app = create_app({"TESTING": True, "DATA_DIR": data, **LIVE_SSE}, service=table_service, config=config)
    live = start_live_server(app, table_service, threads=THREADS)
    try:
        yield live
    finally:
        live.stop()


def open_stream(port: int, source: str, cookie: str | None = None) -> SseClient:
    return SseClient(port, source=source, cookie=cookie, timeout=HANG_GUARD_S)


def test_more_streams_than_threads_leave_writes_pages_and_health_working(server: LiveServer) -> None:
    assert (TOTAL, RESERVE) == (6, 1)
    streams = [open_stream(server.port, "127.0.0.1") for _ in range(12)]  # the Pi itself, many tabs
    streams += [open_stream(server.port, f"127.0.0.{i}") for i in range(2, 14)]  # twelve other devices
    try:
        admitted = [s for s in streams if s.status == 200]
        refused = [s for s in streams if s.status != 200]
        assert len(admitted) == TOTAL - RESERVE
        assert all(s.status == 503 and s.retry_after and int(s.retry_after) > 0 for s in refused)

        phone = HttpSession(server.port)
        phone.login()
        status, body = phone.request("POST", "/api/command", {"name": "add_player", "args": {"name": "Ann"}})
        assert status == 200, body
        seq = body["seq"]
        status, health = phone.request("GET", "/api/health")
        assert status == 200 and health["status"] == "ok"
        for page in ("/", "/screen", "/pin"):
            assert phone.request("GET", page)[0] == 200, page
        assert phone.request("GET", "/api/state")[0] == 200
        # Every admitted watcher gets the write.
        for stream in admitted:
            logs = stream.until(lambda m: m.event == "log" and m.id == str(seq), timeout=HANG_GUARD_S)
            assert logs[-1].json()["type"] == "player_added"
    finally:
        for stream in streams:
            stream.close()


def test_one_address_gets_at_most_its_share(server: LiveServer) -> None:
    streams = [open_stream(server.port, "127.0.0.2") for _ in range(PER_CLIENT + 1)]
    try:
        assert [s.status for s in streams] == [200] * PER_CLIENT + [503]
        other = open_stream(server.port, "127.0.0.3")
        streams.append(other)
        assert other.status == 200
    finally:
        for stream in streams:
            stream.close()


def test_the_tables_own_phones_keep_a_slot_and_a_closed_stream_frees_one(server: LiveServer) -> None:
    watchers = [open_stream(server.port, f"127.0.0.{i}") for i in range(2, 2 + TOTAL - RESERVE)]
    try:
        assert all(s.status == 200 for s in watchers)
        stranger = open_stream(server.port, "127.0.0.50")
        watchers.append(stranger)
        assert stranger.status == 503
        phone = HttpSession(server.port)
        phone.login()
        own = open_stream(server.port, "127.0.0.60", cookie=phone.cookie)
        watchers.append(own)
        assert own.status == 200  # the slot kept for phones with the PIN
        second = open_stream(server.port, "127.0.0.61", cookie=phone.cookie)
        watchers.append(second)
        assert second.status == 503  # now every slot is taken
        assert phone.request("GET", "/api/health")[0] == 200

        watchers[0].close()  # a phone goes to sleep: its slot comes back

        def admitted_again() -> bool:
            again = open_stream(server.port, "127.0.0.70")
            watchers.append(again)
            return again.status == 200

        wait_until(admitted_again, "a freed stream slot", timeout=HANG_GUARD_S)
    finally:
        for stream in watchers:
            stream.close()


def test_a_refused_stream_says_why_as_json(server: LiveServer) -> None:
    streams = [open_stream(server.port, "127.0.0.2") for _ in range(PER_CLIENT)]
    try:
        session = HttpSession(server.port)
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HANG_GUARD_S, source_address=("127.0.0.2", 0))
        try:
            conn.request("GET", "/api/events")
            response = conn.getresponse()
            assert response.status == 503  # (an admitted stream would never end: check before reading)
            body = response.read().decode()
        finally:
            conn.close()
        assert response.getheader("Content-Type", "").startswith("application/json")
        assert "this address already has 4 live streams" in body
        assert int(response.getheader("Retry-After", "0")) > 0
        assert session.request("GET", "/api/health")[0] == 200
    finally:
        for stream in streams:
            stream.close()


def test_slots_count_and_release_once() -> None:
    slots = StreamSlots(total=3, per_client=2, trusted_reserve=1)
    first = slots.admit("10.0.0.1", trusted=False)
    second = slots.admit("10.0.0.2", trusted=False)
    assert callable(first) and callable(second)
    assert not callable(slots.admit("10.0.0.3", trusted=False))  # the last slot is kept for the PIN
    kept = slots.admit("10.0.0.3", trusted=True)
    assert callable(kept)
    assert not callable(slots.admit("10.0.0.4", trusted=True))
    first()
    first()  # a second release changes nothing
    assert slots.status()["open"] == 2
    assert callable(slots.admit("10.0.0.4", trusted=False))
    assert slots.status() == {"open": 3, "without_pin": 2, "clients": 3, "max": 3, "max_per_client": 2, "kept_for_pin": 1}


def test_stream_limits_in_the_config() -> None:
    config = parse_config({"server": {"threads": 16, "max_streams": 10, "streams_per_client": 2}})
    assert (config.server_max_streams, config.server_streams_per_client) == (10, 2)
    with pytest.raises(ConfigError, match="server.max_streams"):
        parse_config({"server": {"threads": 16, "max_streams": 15}})
    with pytest.raises(ConfigError, match="server.streams_per_client"):
        parse_config({"server": {"streams_per_client": 0}})
    assert default_stream_limits(48) == (32, 8)
    assert default_stream_limits(4) == (2, 0)


def test_a_burst_of_200_watchers_on_tabletop_serve_all_get_an_answer(tmp_path: Path) -> None:
    """`tabletop serve` as run on the Pi: 200 watchers from 50 addresses at once, each answered 200 or 503.

    waitress' default connection limit (100) used to stall accepting for seconds
    under such a burst, so new connections (phones, commands) timed out.
    """
    import http.client
    import socket
    import threading

    from helpers.serve import Served, sim_args, write_config

    served = Served(*sim_args(tmp_path / "data", write_config(tmp_path, pin=TEST_PIN)))
    port = served.wait_ready()
    answers: list[int | str] = []
    sockets: list[socket.socket] = []
    lock = threading.Lock()

    def watch(i: int) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S, source_address=(f"127.0.1.{1 + i % 50}", 0))
            sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: table\r\n\r\n")
            status = int(sock.makefile("rb").readline().split()[1])
            with lock:
                answers.append(status)
                sockets.append(sock)
        except (OSError, ValueError, IndexError) as exc:
            with lock:
                answers.append(repr(exc))

    try:
        threads = [threading.Thread(target=watch, args=(i,)) for i in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(set(answers), key=str) == [200, 503], answers[:5]
        assert answers.count(200) == default_stream_limits(48)[0] - default_stream_limits(48)[1]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD_S)
        conn.request("GET", "/api/health")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        for sock in sockets:
            sock.close()
        assert served.stop() == 0

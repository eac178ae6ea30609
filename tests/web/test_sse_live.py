"""A real waitress server on loopback with several real SSE clients (raw http.client readers)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from web.sse_client import SseClient, SseMessage

from helpers.browser import HttpSession, LiveServer, live_server, table_service, wait_until  # noqa: F401

pytestmark = pytest.mark.slow


def is_state(m: SseMessage) -> bool:
    return m.event == "state"


def log_ids(messages: list[SseMessage]) -> list[int]:
    return [int(m.id) for m in messages if m.event == "log" and m.id is not None]


def connect(server: LiveServer, **kw: Any) -> tuple[SseClient, dict[str, Any]]:
    """Open a stream and read up to its first state; returns the client and that state."""
    client = SseClient(server.port, **kw)
    assert client.status == 200 and client.content_type.startswith("text/event-stream")
    first = client.next()
    assert first.retry is not None and first.retry > 0
    state = client.until(is_state)[-1].json()
    return client, state


def test_a_hit_through_the_api_reaches_every_client(live_server: LiveServer) -> None:
    clients = [connect(live_server)[0] for _ in range(5)]
    try:
        api = HttpSession(live_server.port)
        api.start()
        status, body = api.request("POST", "/api/sim/hit", {"pad": 3, "kind": "slap", "strength": 0.8})
        assert status == 202, body
        for client in clients:
            messages = client.until(is_state)
            hit_logs = [m.json() for m in messages if m.event == "log"]
            assert [e["type"] for e in hit_logs] == ["hit"]
            assert hit_logs[0]["data"]["pad"] == 3 and hit_logs[0]["data"]["kind"] == "slap"
            assert messages[0].id == str(hit_logs[0]["seq"])
            assert messages[-1].json()["recent_hits"][-1]["pad"] == 3
    finally:
        for client in clients:
            client.close()


def test_reconnect_with_last_event_id_gets_exactly_what_was_missed(live_server: LiveServer) -> None:
    service = live_server.service
    api = HttpSession(live_server.port)
    api.login()
    api.request("POST", "/api/command", {"name": "add_player", "args": {"name": "Ann", "pad": 1}})

    phone, _ = connect(live_server)
    api.request("POST", "/api/sim/hit", {"pad": 1})
    seen = phone.until(lambda m: m.event == "log")
    last_id = int(seen[-1].id)
    phone.until(is_state)
    phone.close()  # the phone sleeps

    for pad in (1, 2, 3, 4, 2):
        assert api.request("POST", "/api/sim/hit", {"pad": pad})[0] == 202
    for name in ("Bob", "Cy"):
        assert api.request("POST", "/api/command", {"name": "add_player", "args": {"name": name}})[0] == 200
    wait_until(lambda: service.snapshot()[0] >= last_id + 7)
    missed = service.events_after(last_id)
    assert len(missed) == 7

    phone = SseClient(live_server.port, last_event_id=last_id)
    try:
        messages = phone.until(is_state)
        logs = [m for m in messages if m.event == "log"]
        assert [m.json() for m in logs] == missed  # exactly what it missed, in order
        assert log_ids(messages) == [e["seq"] for e in missed]
        assert messages[-1].json()["seq"] == missed[-1]["seq"]
        # ...and then it is live again, with no duplicate.
        api.request("POST", "/api/sim/hit", {"pad": 4})
        after = phone.until(is_state)
        assert log_ids(after) == [missed[-1]["seq"] + 1]
    finally:
        phone.close()


def test_after_query_resumes_like_the_header(live_server: LiveServer) -> None:
    api = HttpSession(live_server.port)
    api.start()
    for pad in (1, 2, 3):
        api.request("POST", "/api/sim/hit", {"pad": pad})
    wait_until(lambda: live_server.service.snapshot()[0] >= 3)
    client = SseClient(live_server.port, after=1)
    try:
        assert log_ids(client.until(is_state)) == [2, 3]
    finally:
        client.close()


def test_reconnect_during_a_burst_has_no_gap_and_no_duplicate(live_server: LiveServer) -> None:
    """Hits keep arriving while a client reconnects: the ids it sees are contiguous."""
    api = HttpSession(live_server.port)
    api.start()
    service = live_server.service
    stop = threading.Event()

    def slap() -> None:
        session = HttpSession(live_server.port)
        session.start()
        pad = 0
        while not stop.is_set():
            session.request("POST", "/api/sim/hit", {"pad": pad % 4 + 1})
            pad += 1

    first, _ = connect(live_server)
    worker = threading.Thread(target=slap, daemon=True)
    worker.start()
    try:
        wait_until(lambda: service.snapshot()[0] >= 10)
        got = log_ids(first.until(lambda m: m.event == "log" and int(m.id) >= 5))
        first.close()
        resume_from = got[-1]
        second = SseClient(live_server.port, last_event_id=resume_from)
        wait_until(lambda: service.snapshot()[0] >= resume_from + 40)
        stop.set()
        worker.join(timeout=30)
        final = service.snapshot()[0]
        ids = log_ids(second.until(lambda m: m.event == "log" and int(m.id) >= final, timeout=30))
        second.close()
    finally:
        stop.set()
    assert ids == list(range(resume_from + 1, final + 1))


def test_idle_streams_get_keep_alive_comments(live_server: LiveServer) -> None:
    client, _ = connect(live_server)
    try:
        message = client.next(timeout=10)
        assert "keep-alive" in message.comments
        assert message.id is None and message.data == ""
    finally:
        client.close()


def test_closed_clients_release_their_subscription(live_server: LiveServer) -> None:
    broadcaster = live_server.service.broadcaster
    clients = [connect(live_server)[0] for _ in range(3)]
    assert broadcaster.subscriber_count == 3
    for client in clients:
        client.close()
    wait_until(lambda: broadcaster.subscriber_count == 0)


def test_health_and_state_over_real_http(live_server: LiveServer) -> None:
    api = HttpSession(live_server.port)
    status, body = api.request("GET", "/api/health")
    assert status == 200 and body["status"] == "ok"
    status, body = api.request("GET", "/api/nowhere")
    assert status == 404 and "no API endpoint" in body["error"]

"""The SSE stream (web.sse.EventStream) on a real TableService: resync, shutdown, message format."""

from __future__ import annotations

import json
import threading
import time
from typing import Iterator

import pytest

from companion.service import TableService
from web.sse import EventStream, comment, log_message, state_message

from helpers.browser import table_service  # noqa: F401


def stream(service: TableService, after: int | None = None, stopping: threading.Event | None = None) -> EventStream:
    return EventStream(service, after, keepalive_s=60.0, retry_ms=1500, poll_s=0.05, page=3,
                       stopping=stopping or threading.Event())


def blocks(s: EventStream) -> Iterator[str]:
    """The stream's messages one by one (a chunk may hold several)."""
    for chunk in s:
        for block in chunk.decode().split("\n\n"):
            if block:
                yield block


def slap_and_wait(service: TableService, pad: int) -> int:
    """One hit, committed on its own (its own update); returns the new seq."""
    before = service.snapshot()[0]
    service.source.inject(pad)
    end = time.monotonic() + 10
    while service.snapshot()[0] == before:
        assert time.monotonic() < end, "hit not committed"
        time.sleep(0.002)
    return service.snapshot()[0]


def test_message_format() -> None:
    event = {"seq": 7, "at": "t", "game_id": None, "type": "hit", "data": {"pad": 1, "note": "a\nb"}, "actor": None}
    text = log_message(event)
    assert text.startswith("id: 7\nevent: log\ndata: {") and text.endswith("}\n\n")
    assert text.count("\n") == 4  # a newline inside data is escaped: one data line
    assert json.loads(text.split("data: ", 1)[1]) == event
    assert state_message({"seq": 7}) == 'event: state\ndata: {"seq":7}\n\n'
    assert comment("keep-alive") == ": keep-alive\n\n"


def test_a_subscriber_that_fell_behind_gets_the_missed_events_from_the_log(table_service: TableService) -> None:
    table_service.broadcaster.limit = 4  # overflow quickly: the broadcaster then sends a resync marker
    s = stream(table_service)
    it = blocks(s)
    assert next(it).startswith("retry: 1500")
    assert next(it).startswith("event: state")
    # The stream is not read while 10 updates are published: its queue overflows.
    seqs = [slap_and_wait(table_service, 1 + i % 4) for i in range(10)]
    ids: list[int] = []
    last_state = None
    while not ids or ids[-1] < seqs[-1]:
        block = next(it)
        if block.startswith("id: "):
            ids.append(int(block.split("\n", 1)[0][4:]))
        elif block.startswith("event: state"):
            last_state = json.loads(block.split("data: ", 1)[1])
    assert ids == seqs  # every one, once, in order (paged from the store 3 at a time)
    block = next(it)
    assert block.startswith("event: state")
    last_state = json.loads(block.split("data: ", 1)[1])
    assert last_state["seq"] == seqs[-1]
    s.close()
    assert table_service.broadcaster.subscriber_count == 0


def test_stopping_ends_the_stream_and_releases_the_subscription(table_service: TableService) -> None:
    stopping = threading.Event()
    s = stream(table_service, stopping=stopping)
    it = blocks(s)
    next(it), next(it)
    assert table_service.broadcaster.subscriber_count == 1
    stopping.set()
    with pytest.raises(StopIteration):
        next(it)
    assert table_service.broadcaster.subscriber_count == 0


def test_a_stopped_service_ends_the_stream(table_service: TableService) -> None:
    s = stream(table_service)
    it = blocks(s)
    next(it), next(it)
    table_service.stop()
    with pytest.raises(StopIteration):
        next(it)


def test_backlog_pages_through_the_store(table_service: TableService) -> None:
    seqs = [slap_and_wait(table_service, 1) for _ in range(8)]
    s = stream(table_service, after=0)
    it = blocks(s)
    next(it)
    ids = [int(next(it).split("\n", 1)[0][4:]) for _ in seqs]
    assert ids == seqs
    assert next(it).startswith("event: state")
    s.close()

"""Noise cannot grow the log without bound (issue 13, item 9): source notices are coalesced.

Every sequence gap on the serial line used to be stored as its own
``pad_source`` event and sent to every phone (4,260 of them from 1 MB of
noise). Now a kind of notice gets at most one event per window: the first at
once, then one summary that adds the rest up. The gate is tested on its own
with a hand-moved clock, then in the real table service, then with 1 MB of
noise on a real pseudo-terminal through pyserial and the wire protocol.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.padbox import emu, private_emulator_dir  # noqa: F401

from companion.config import Config
from companion.notices import NOTICE_WINDOW_S, NoticeGate
from companion.service import TableService
from companion.store import EventStore
from hardware import protocol as p
from hardware.emulator import PadBoxEmulator
from hardware.padbox import SerialPadBox
from hardware.sim import SimulatedPads
from hardware.source import SourceNotice

from helpers.browser import make_service, stop_service, wait_until

#: Bounds a hang only.
WAIT_S = 20.0


def dropped(count: int, seq: int) -> SourceNotice:
    return SourceNotice("dropped", f"{count} line(s) from the pad box lost before seq {seq}", {"count": count})


# ------------------------------------------------------------------ the gate ----
def test_the_first_notice_of_a_kind_passes_and_the_rest_are_one_summary() -> None:
    gate = NoticeGate(window_s=10)
    assert gate.offer(dropped(3, 10), now=0.0) == dropped(3, 10)
    assert all(gate.offer(dropped(2, 20 + i), now=1.0 + i / 1000) is None for i in range(999))
    assert gate.next_due() == 10.0
    assert gate.due(9.99) == []
    [summary] = gate.due(10.0)
    assert summary.kind == "dropped"
    assert summary.details == {"count": 2 * 999, "notices": 999, "window_s": 10}
    assert summary.message == ("999 'dropped' notices in 10 s (1998 in all); "
                               "the last: 2 line(s) from the pad box lost before seq 1018")
    assert gate.coalesced == 998


def test_other_kinds_pass_on_their_own_and_summaries_come_in_the_order_last_heard() -> None:
    gate = NoticeGate(window_s=10)
    assert gate.offer(SourceNotice("disconnected", "unplugged"), 0.0) is not None
    assert gate.offer(SourceNotice("connected", "back on /dev/ttyUSB0"), 1.0) is not None  # another kind
    assert gate.offer(SourceNotice("connected", "back on /dev/ttyUSB1"), 3.0) is None
    assert gate.offer(SourceNotice("disconnected", "unplugged again"), 4.0) is None
    assert gate.offer(SourceNotice("connected", "back on /dev/ttyUSB2"), 5.0) is None
    # Both windows have ended by 11 s: the table ends up connected, so 'connected' comes last.
    summaries = gate.due(11.0)
    assert [(s.kind, s.message) for s in summaries] == [
        ("disconnected", "unplugged again"),  # held alone: stored as it was
        ("connected", "2 'connected' notices in 10 s; the last: back on /dev/ttyUSB2"),
    ]


def test_a_sustained_flood_costs_one_event_per_window_and_loses_no_count() -> None:
    gate = NoticeGate(window_s=10)
    stored: list[SourceNotice] = []
    sent = 60_000  # ten minutes, a notice every 10 ms (100 a second)
    for i in range(sent):
        now = i / 100
        stored += gate.due(now)
        passed = gate.offer(dropped(1, i), now)
        if passed is not None:
            stored.append(passed)
    stored += gate.flush()
    assert len(stored) <= math.ceil(600 / 10) + 1
    assert sum(s.details["count"] for s in stored) == sent


def test_a_quiet_kind_is_let_through_again_once_its_window_ended() -> None:
    gate = NoticeGate(window_s=10)
    assert gate.offer(dropped(1, 1), 0.0) is not None
    assert gate.due(20.0) == []  # nothing was held: no summary, no new window
    assert gate.next_due() is None
    assert gate.offer(dropped(1, 2), 20.0) is not None


def test_flush_gives_back_everything_held() -> None:
    gate = NoticeGate(window_s=10)
    gate.offer(dropped(1, 1), 0.0)
    gate.offer(dropped(4, 9), 1.0)
    assert gate.flush() == [dropped(4, 9)]
    assert gate.next_due() is None and gate.flush() == []


# --------------------------------------------------------------- the service ----
def notice_events(service: TableService) -> list[dict[str, Any]]:
    return [e for e in service.store.iter_events() if e["type"] == "pad_source"]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[TableService]:
    svc = make_service(tmp_path / "data")
    try:
        yield svc
    finally:
        stop_service(svc)


def test_thousands_of_notices_make_two_events_and_the_summary_comes_by_itself(service: TableService) -> None:
    service.notices.window_s = 1.0
    pads = service.source
    assert isinstance(pads, SimulatedPads)
    started = time.monotonic()
    for seq in range(5000):
        pads.notify("dropped", f"3 line(s) from the pad box lost before seq {seq}", count=3)
    # Nothing else arrives: the loop wakes for the summary on its own.
    wait_until(lambda: sum(e["data"]["details"]["count"] for e in notice_events(service)) == 15_000,
               "every lost line accounted for", timeout=WAIT_S)
    elapsed = time.monotonic() - started
    events = notice_events(service)
    assert 2 <= len(events) <= 2 + elapsed / service.notices.window_s
    assert events[0]["data"]["message"] == "3 line(s) from the pad box lost before seq 0"
    assert "the last: 3 line(s) from the pad box lost before seq 4999" in events[-1]["data"]["message"]
    status = service.status()
    assert status["coalesced_notices"] == 5000 - len(events)
    # What phones see: the newest notice at once, stored or not.
    assert service.snapshot()[1]["pads"]["status"]["notice"]["message"].endswith("seq 4999")


def test_notices_held_when_the_service_stops_are_stored(tmp_path: Path) -> None:
    service = make_service(tmp_path / "data")
    pads = service.source
    pads.notify("dropped", "1 line(s) from the pad box lost before seq 5", count=1)
    pads.notify("dropped", "2 line(s) from the pad box lost before seq 9", count=2)
    stop_service(service)
    with EventStore(tmp_path / "data" / "tabletop.sqlite3") as store:
        stored = [e["data"] for e in store.iter_events() if e["type"] == "pad_source"]
    assert [d["details"]["count"] for d in stored] == [1, 2]


@pytest.mark.slow
def test_a_megabyte_of_noise_on_the_serial_line_adds_a_handful_of_events(tmp_path: Path, emu: PadBoxEmulator) -> None:
    """1 MB of noise, each burst swallowing a line, so every burst is a sequence gap (4,000 of them)."""
    data = tmp_path / "data"
    data.mkdir()
    source = SerialPadBox(port=emu.path, hello_timeout_s=3.0, retry_s=0.1)
    store = EventStore(data / "tabletop.sqlite3")
    service = TableService(store, source, Config(data_dir=data, pads_count=4))
    service.start()
    try:
        assert source.wait_connected(WAIT_S), source.status()
        wait_until(lambda: service.status()["seq"] >= 1, "the connected notice stored", timeout=WAIT_S)
        before = len(notice_events(service))
        started = time.monotonic()
        rng = random.Random(13)
        noise = bytes(b for b in rng.randbytes(300_000) if b != 0x0A)
        bursts, sent = 4000, 0
        base = source.status()["counters"]["bytes"]
        for i in range(bursts):
            burst = noise[(i * 250) % 200_000:][:250]
            line = p.encode_box_line(0, f"HB {emu.now_us()}")
            emu.send_raw(burst + b"\n")  # a line of noise, refused
            emu.skip_seq(1)  # the box's line the noise swallowed
            emu.send_line(f"HB {emu.now_us()}")  # the next line arrives: a gap of one before it
            sent += len(burst) + 1 + len(line)
            if i % 10 == 9:  # the emulator never blocks: let the host read before the pty buffer fills
                wait_until(lambda sent=sent: source.status()["counters"]["bytes"] - base >= sent, "the host reading", timeout=WAIT_S)
        assert sent - 4000 * len(line) >= 1_000_000  # a megabyte of noise, not counting the box's own lines
        wait_until(lambda: source.status()["counters"]["dropped"] >= bursts, "every gap seen", timeout=WAIT_S)
        events = notice_events(service)[before:]
        dropped_events = [e for e in events if e["data"]["kind"] == "dropped"]
        # The first gap at once, then one summary per 10 s window at most (the rest still held).
        assert 1 <= len(dropped_events) <= 1 + (time.monotonic() - started) / NOTICE_WINDOW_S
        assert len(events) <= 10, [e["data"]["message"] for e in events]
    finally:
        service.stop()
        store.close()
    with EventStore(data / "tabletop.sqlite3") as store:
        counted = sum(e["data"]["details"].get("count", 0) for e in store.iter_events()
                      if e["type"] == "pad_source" and e["data"]["kind"] == "dropped")
    assert counted == source.status()["counters"]["dropped"]  # nothing lost: the summaries add up

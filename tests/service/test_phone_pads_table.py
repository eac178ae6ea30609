"""Phones as pads at a real table: the service behind a real server on loopback, phones over HTTP.

* four phones and no hardware play Taco, each phone calibrated first, and
  the verdict states its uncertainty, in physical and in digital mode (timed from the card);
* a mixed table: two pads of an emulated pad box (on a pseudo-terminal,
  read by the real serial backend) and two phones, judged on one clock;
* TacTile's end-of-turn pad from a phone.

Phones are :class:`web.phone_client.SimulatedPhone` (their own clock offset
and drift); their touches are stamped at the moment they are made.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from helpers.browser import make_app, make_service, seat, start_live_server, stop_service, wait_until

from companion.games import load_games
from companion.service import TableService
from hardware.emulator import PadBoxEmulator
from hardware.padbox import SerialPadBox
from web.phone_client import SimulatedPhone

GAP_S = 0.15
PHYSICAL = {"mode": "physical", "settle_ms": 0}


def calibrated_phone(port: int, rng: random.Random) -> SimulatedPhone:
    """A phone with its own clock, synced for 1.5 s and calibrated (it stamps touches with no delay of its own)."""
    phone = SimulatedPhone(port, offset_us=rng.randrange(10**9, 10**11), ppm=rng.uniform(-200, 200)).open()
    phone.sync_for(1.5)
    status, body = phone.calibrate([round(rng.gauss(0, 3_000)) for _ in range(16)])
    assert status == 200, body
    assert body["latency"]["calibrated"]
    return phone


def claim(phone: SimulatedPhone, pad: int) -> None:
    codes = phone.call("GET", "/api/pad/codes")[1]["codes"]
    status, body = phone.claim(codes[str(pad)])
    assert status == 200 and body["pad"] == pad, body


def latest_verdict(service: TableService) -> dict[str, Any] | None:
    game = service.snapshot()[1]["game"]
    return game["view"]["verdict"] if game else None


def now_us() -> int:
    return time.monotonic_ns() // 1000


@pytest.fixture
def phone_table(tmp_path: Path) -> Iterator[tuple[TableService, int]]:
    service = make_service(tmp_path / "data", pads=4, games=load_games())
    server = start_live_server(make_app(service, tmp_path / "data"), service)
    try:
        yield service, server.port
    finally:
        server.stop()
        stop_service(service)


def play_round(service: TableService, slaps: list[Callable[[], None]]) -> dict[str, Any]:
    """Each slap in turn, GAP_S apart in real time; the verdict they give."""
    before = latest_verdict(service)
    for slap in slaps:
        slap()
        time.sleep(GAP_S)
    wait_until(lambda: latest_verdict(service) not in (None, before), "the round's verdict")
    verdict = latest_verdict(service)
    assert verdict is not None
    return verdict


def phone_slap(phone: SimulatedPhone) -> Callable[[], None]:
    def slap() -> None:
        status, body = phone.touch(now_us())
        assert status == 202, body
    return slap


def four_phone_players(service: TableService, port: int, rng: random.Random) -> list[SimulatedPhone]:
    """Ann, Bo, Cy and Di on pads 1 to 4, each pad on a calibrated phone that claimed it."""
    seat(service, ["Ann", "Bo", "Cy", "Di"])
    for pid in range(1, 5):
        service.submit("update_player", {"player": pid, "pad": pid})
    phones = [calibrated_phone(port, rng) for _ in range(4)]
    for pad, phone in enumerate(phones, start=1):
        claim(phone, pad)
        assert phone.me()["player"]["pad"] == pad
    return phones


def test_four_phones_and_no_hardware_play_taco_with_verdicts_that_state_their_uncertainty(
        phone_table: tuple[TableService, int]) -> None:
    service, port = phone_table
    phones = four_phone_players(service, port, random.Random(17))
    service.submit("start_game", {"kind": "taco", "settings": PHYSICAL})
    for order in ([1, 2, 3, 4], [4, 2, 1, 3]):
        for p in phones:
            p.sync_once()  # the page keeps syncing between rounds
        verdict = play_round(service, [phone_slap(phones[pad - 1]) for pad in order])
        assert [e["player"] for e in verdict["order"]] == order
        assert verdict["taker"] == order[-1]
        assert verdict["photo_finish"] == []
        assert "uncertain by at most" in verdict["reason"], verdict["reason"]
        assert all(0 < e["uncertainty_ms"] < 40 for e in verdict["order"])


def test_a_mixed_table_of_two_box_pads_and_two_phones_is_judged_on_one_clock(tmp_path: Path) -> None:
    box = PadBoxEmulator(pads=4, clock_ppm=300, heartbeat_s=0.05).start()
    source = SerialPadBox(port=box.path, hello_timeout_s=3.0, retry_s=0.1)
    service = make_service(tmp_path / "data", source=source, games=load_games())
    server = start_live_server(make_app(service, tmp_path / "data"), service)
    try:
        assert source.wait_connected(10), source.status()
        rng = random.Random(5)
        seat(service, ["Ann", "Bo", "Cy", "Di"])
        for pid in range(1, 5):
            service.submit("update_player", {"player": pid, "pad": pid})
        cy, di = calibrated_phone(server.port, rng), calibrated_phone(server.port, rng)
        claim(cy, 3)
        claim(di, 4)
        service.submit("start_game", {"kind": "taco", "settings": PHYSICAL})

        def box_slap(pad: int) -> Callable[[], None]:
            return lambda: box.hit(pad)

        slaps = {1: box_slap(1), 2: box_slap(2), 3: phone_slap(cy), 4: phone_slap(di)}
        for order in ([1, 3, 2, 4], [4, 1, 3, 2]):
            cy.sync_once()
            di.sync_once()
            verdict = play_round(service, [slaps[p] for p in order])
            assert [e["player"] for e in verdict["order"]] == order, verdict["reason"]
            assert verdict["taker"] == order[-1] and verdict["photo_finish"] == []
            by_player = {e["player"]: e for e in verdict["order"]}
            assert by_player[1]["uncertainty_ms"] == 0.1  # the box's 100 us resolution
            assert by_player[3]["uncertainty_ms"] > 8  # a phone's sync and latency
    finally:
        server.stop()
        stop_service(service)
        box.stop()


def test_a_phone_calibrates_against_a_box_pad_slapped_with_it(tmp_path: Path) -> None:
    box = PadBoxEmulator(pads=4, heartbeat_s=0.05).start()
    source = SerialPadBox(port=box.path, hello_timeout_s=3.0, retry_s=0.1)
    service = make_service(tmp_path / "data", source=source, games=load_games())
    server = start_live_server(make_app(service, tmp_path / "data"), service)
    try:
        assert source.wait_connected(10), source.status()
        phone = SimulatedPhone(server.port, offset_us=77_000_000, ppm=-150).open()
        phone.sync_for(1.5)
        assert phone.me()["source"] == "serial"
        taps = []
        for _ in range(10):  # one hand on pad 2, the other on the phone, which stamps its touch 45 ms late
            felt = now_us()
            box.hit(2)
            taps.append(phone.phone_us(felt + 45_000))
            time.sleep(0.2)
        wait_until(lambda: len([h for h in service.snapshot()[1]["recent_hits"] if h["pad"] == 2]) == 10,
                   "the box's ten hits")
        status, body = phone.call("POST", "/api/pad/calibration/pad", {"pad": 2, "taps_us": taps})
        assert status == 200, body
        latency = body["latency"]
        assert latency["calibrated"] and latency["taps"] == 10
        assert abs(latency["latency_us"] - 45_000) < 5_000  # the USB delay does not count: the box's stamps do
        status, body = phone.call("POST", "/api/pad/calibration/pad", {"pad": 3, "taps_us": taps})
        assert status == 409 and "paired with a hit on pad 3: 0 of 10" in body["error"]
    finally:
        server.stop()
        stop_service(service)
        box.stop()


def test_a_phone_ends_a_tactile_turn_with_its_pad(phone_table: tuple[TableService, int]) -> None:
    from helpers.tactile import start_entered_game

    service, port = phone_table
    seat(service, ["Ann", "Bo"])
    service.submit("update_player", {"player": 1, "pad": 1})
    service.submit("update_player", {"player": 2, "pad": 2})
    start_entered_game(service.submit)
    first = service.snapshot()[1]["game"]["view"]["turn"]["player"]
    phone = calibrated_phone(port, random.Random(3))
    claim(phone, first)
    status, body = phone.touch(now_us())
    assert status == 202, body
    wait_until(lambda: service.snapshot()[1]["game"]["view"]["turn"]["player"] != first, "the turn to pass")


def test_four_phones_play_taco_in_digital_mode_timed_from_the_card(phone_table: tuple[TableService, int]) -> None:
    service, port = phone_table
    phones = four_phone_players(service, port, random.Random(23))
    # Every card a taco: the first flip, said "taco", is due.
    service.submit("start_game", {"kind": "taco", "settings": {"mode": "digital", "deck": {"taco": 48},
                                                                "lead_in_ms": 300, "tempo_ms": 5000}})

    def top() -> dict[str, Any] | None:
        game = service.snapshot()[1]["game"]
        return game["view"]["top"] if game else None

    wait_until(lambda: (top() or {}).get("due") is True, "a due card on the table")
    card = top()
    assert card is not None
    for p in phones:
        p.sync_once()
    time.sleep(0.4)  # well past false_start_ms (100): a fair slap, not a flinch
    order = [3, 1, 4, 2]
    verdict = play_round(service, [phone_slap(phones[pad - 1]) for pad in order])
    assert verdict["timing"] == "card" and verdict["ref_us"] == card["at_us"]
    assert [e["player"] for e in verdict["order"]] == order, verdict["reason"]
    assert verdict["taker"] == order[-1]
    assert all(0 < e["uncertainty_ms"] < 40 for e in verdict["order"])
    assert "uncertain by at most" in verdict["reason"], verdict["reason"]

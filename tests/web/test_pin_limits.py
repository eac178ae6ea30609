"""The table PIN cannot be guessed by rotating addresses: a table-wide limit with a growing pause.

Issue 13, item 3: the limit used to be per address only, so 1,001 loopback
addresses found a 5-digit PIN in 8 s. The attacks here run against a real
waitress server from many loopback addresses; time is the limiter's injected
clock, moved by hand (nothing sleeps).
"""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Iterator

import pytest

from companion.service import TableService
from web.json_client import JsonClient
from web.security import PinLimiter, PinPolicy

from helpers.browser import LiveServer, make_app, start_live_server, table_service  # noqa: F401

PIN = "73914"
MINUTE = 60.0


class HandClock:
    """A clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def address(i: int) -> str:
    """The i-th attacker address: 127.0.x.y, never 127.0.0.1 (the table's own phone below)."""
    return f"127.0.{1 + i // 250}.{2 + i % 250}"


@pytest.fixture
def clock() -> HandClock:
    return HandClock()


@pytest.fixture
def server(tmp_path: Path, table_service: TableService, clock: HandClock) -> Iterator[LiveServer]:
    """A real server on loopback whose PIN limiter reads ``clock``; a 5-digit PIN."""
    app = make_app(table_service, tmp_path / "data", PIN=PIN, PIN_CLOCK=clock)
    live = start_live_server(app, table_service, threads=8)
    try:
        yield live
    finally:
        live.stop()


def guesses_in_any_minute(times: list[float]) -> int:
    """The most guesses that fall in any 60 s window."""
    most = 0
    for i, start in enumerate(times):
        most = max(most, sum(1 for t in times[i:] if t < start + MINUTE))
    return most


def test_an_attacker_rotating_1000_addresses_gets_at_most_10_guesses_a_minute(server: LiveServer, clock: HandClock) -> None:
    attacker = JsonClient(server.port, source="127.0.0.1")
    attacker.start()
    checked: list[float] = []  # when a guess was actually compared with the PIN (answered 403)
    paused_answers = 0
    for i in range(1000):
        clock.advance(1.0)  # one guess a second, each from a fresh address: 1,000 s in all
        status, headers, body = attacker.call("POST", "/api/pin", {"pin": f"{i:05d}"}, source=address(i))
        assert status in (403, 429), (status, body)
        if status == 403:
            checked.append(clock.now)
        else:
            paused_answers += 1
            assert "PIN entry paused" in body["error"]
            assert int(headers["Retry-After"]) >= 1
    assert guesses_in_any_minute(checked) <= 10
    assert len(checked) <= 10 * (1000 / MINUTE + 1)
    assert paused_answers > 900
    # The pause grows: the quiet gaps between bursts of guesses get longer.
    gaps = [b - a for a, b in zip(checked, checked[1:]) if b - a > 1.5]
    assert len(gaps) >= 3 and gaps == sorted(gaps) and gaps[-1] > gaps[0]


def test_the_table_screen_says_pin_entry_paused_and_its_phones_get_in_after_it(server: LiveServer, clock: HandClock) -> None:
    attacker = JsonClient(server.port, source="127.0.0.1")
    attacker.start()
    screen = JsonClient(server.port, source="127.0.0.1")
    assert screen.call("GET", "/api/pin")[2] == {"paused": False, "retry_after": 0}
    assert "PIN entry paused" not in screen.call("GET", "/screen")[2]
    for i in range(10):
        assert attacker.call("POST", "/api/pin", {"pin": f"{i:05d}"}, source=address(i))[0] == 403

    status_doc = screen.call("GET", "/api/pin")[2]
    assert status_doc["paused"] is True and status_doc["retry_after"] >= MINUTE
    assert "PIN entry paused" in screen.call("GET", "/screen")[2]

    # The table's own phone, from an address that never guessed, waits like everyone else:
    # even the right PIN is not checked during the pause (a pause reveals nothing).
    phone = JsonClient(server.port, source="127.0.0.1")
    phone.start()
    status, headers, body = phone.call("POST", "/api/pin", {"pin": PIN})
    assert status == 429 and "PIN entry paused" in body["error"]
    assert phone.call("GET", "/api/session")[2]["trusted"] is False

    clock.advance(int(headers["Retry-After"]))
    assert screen.call("GET", "/api/pin")[2]["paused"] is False
    status, _headers, body = phone.call("POST", "/api/pin", {"pin": PIN})
    assert status == 200 and body["trusted"] is True
    assert phone.call("GET", "/api/session")[2]["trusted"] is True


def test_the_pin_form_says_pin_entry_paused(server: LiveServer, clock: HandClock) -> None:
    attacker = JsonClient(server.port, source="127.0.0.1")
    attacker.start()
    for i in range(10):
        attacker.call("POST", "/api/pin", {"pin": f"{i:05d}"}, source=address(i))
    phone = JsonClient(server.port, source="127.0.0.1")
    html = phone.call("GET", "/pin")[2]
    token = html.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("POST", "/pin", body=f"pin={PIN}&csrf_token={token}&next=/",
                     headers={"Cookie": phone.cookie, "Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        page = response.read().decode()
    finally:
        conn.close()
    assert response.status == 429 and "PIN entry paused" in page
    assert response.getheader("Retry-After")


def test_the_pause_doubles_up_to_its_cap_and_a_right_pin_resets_it() -> None:
    clock = HandClock()
    limiter = PinLimiter(clock=clock)
    policy = PinPolicy(per_client=5, per_table=10, window_s=60, pause_s=60, max_pause_s=900)
    pauses = []
    for _ in range(7):
        for i in range(10):
            assert limiter.attempt(address(i), False, policy).outcome == "wrong"
        verdict = limiter.attempt("10.9.9.9", True, policy)
        assert verdict.outcome == "wait" and verdict.paused
        pauses.append(verdict.retry_after)
        clock.advance(verdict.retry_after)
    assert pauses == [60, 120, 240, 480, 900, 900, 900]
    assert limiter.attempt("10.9.9.9", True, policy).outcome == "ok"
    for i in range(10):
        limiter.attempt(address(i), False, policy)
    assert limiter.attempt("10.9.9.9", True, policy).retry_after == 60


def test_one_address_is_still_limited_on_its_own() -> None:
    clock = HandClock()
    limiter = PinLimiter(clock=clock)
    policy = PinPolicy()
    for _ in range(5):
        assert limiter.attempt("10.0.0.5", False, policy).outcome == "wrong"
    own = limiter.attempt("10.0.0.5", True, policy)
    assert own.outcome == "wait" and not own.paused
    assert limiter.attempt("10.0.0.6", True, policy).outcome == "ok"


def test_concurrent_guesses_cannot_slip_past_the_table_limit(tmp_path: Path) -> None:
    import threading

    clock = HandClock()
    limiter = PinLimiter(clock=clock)
    policy = PinPolicy()
    outcomes: list[str] = []
    lock = threading.Lock()

    def guess(i: int) -> None:
        verdict = limiter.attempt(address(i), False, policy)
        with lock:
            outcomes.append(verdict.outcome)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("wrong") == 10


def test_longer_pins_can_be_configured() -> None:
    from companion.config import parse_config
    from core.errors import ConfigError
    from web import generate_pin

    assert parse_config({"server": {"pin": "123456789012"}}).server_pin == "123456789012"
    assert parse_config({"server": {"pin_digits": 8}}).server_pin_digits == 8
    with pytest.raises(ConfigError, match="server.pin_digits"):
        parse_config({"server": {"pin_digits": 3}})
    assert all(len(generate_pin(8)) == 8 and generate_pin(8).isdigit() for _ in range(20))


def test_a_generated_pin_has_the_configured_digits(tmp_path: Path, table_service: TableService) -> None:
    from companion.config import Config
    from web import create_app, table_context

    app = create_app({"TESTING": True, "DATA_DIR": tmp_path / "d"}, service=table_service,
                     config=Config(data_dir=tmp_path / "d", server_pin_digits=9))
    pin = table_context(app).pin
    assert len(pin) == 9 and pin.isdigit()

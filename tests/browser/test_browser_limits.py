"""Issue 13 items 3 and 4 in Debian's Chromium: the table screen says "PIN entry paused" while
the whole table is locked out of PIN entry, and "Forget all other phones" on a trusted phone
sends every other phone back to watching."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.service import TableService

from helpers.browser import (  # noqa: F401
    LIVE_SSE, PHONE, TEST_PIN, LiveServer, browser_context, chromium, expect, make_app, phone,
    start_live_server, table_service,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class HandClock:
    """The PIN limiter's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> HandClock:
    return HandClock()


@pytest.fixture
def server(tmp_path: Path, table_service: TableService, clock: HandClock) -> Iterator[LiveServer]:
    live = start_live_server(make_app(table_service, tmp_path / "data", PIN_CLOCK=clock, **LIVE_SSE), table_service, threads=16)
    try:
        yield live
    finally:
        live.stop()


def _wrong_pins(port: int, count: int) -> None:
    """``count`` wrong PINs, each from its own loopback address (an attacker rotating addresses)."""
    for i in range(count):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(f"127.0.5.{i + 2}", 0))
        try:
            conn.request("GET", "/api/session")
            response = conn.getresponse()
            token = json.loads(response.read())["csrf_token"]
            cookie = (response.getheader("Set-Cookie") or "").split(";", 1)[0]
            conn.request("POST", "/api/pin", body=json.dumps({"pin": f"{i:04d}"}),
                         headers={"Content-Type": "application/json", "X-CSRF-Token": token, "Cookie": cookie})
            assert conn.getresponse().status == 403
        finally:
            conn.close()


def _enter_pin(page: Any, server: LiveServer) -> None:
    page.goto(server.url + "/pin?next=/")
    page.fill("#pin", TEST_PIN)
    page.click(".pin-form button[type=submit]")
    expect()(page.locator("#trust")).to_contain_text("Trusted phone")
    # (the table page's own client, app.js, is loaded too: a test may call it next)
    page.wait_for_function("() => window.Tabletop !== undefined && window.Tabletop.api !== undefined")


def test_the_table_screen_says_pin_entry_paused_while_it_is(server: LiveServer, clock: HandClock, phone: Any) -> None:
    screen = phone.new_page()
    screen.goto(server.url + "/screen")
    expect()(screen.locator("#conn")).to_have_text("live")
    expect()(screen.locator("#pin-paused")).to_be_hidden()
    _wrong_pins(server.port, 10)
    # The screen asks every 5 s; the banner appears without a reload.
    expect()(screen.locator("#pin-paused")).to_be_visible(timeout=20_000)
    expect()(screen.locator("#pin-paused")).to_contain_text("PIN entry paused")
    expect()(screen.locator("#pin-paused")).to_contain_text("try again in")
    clock.now += 60
    expect()(screen.locator("#pin-paused")).to_be_hidden(timeout=20_000)


def test_forget_all_other_phones_from_the_table_page(server: LiveServer, chromium: Any) -> None:
    with browser_context(chromium, **PHONE) as host_context, browser_context(chromium, **PHONE) as guest_context:
        host, guest = host_context.new_page(), guest_context.new_page()
        _enter_pin(host, server)
        _enter_pin(guest, server)
        host.on("dialog", lambda dialog: dialog.accept())
        host.click("#forget-phones")
        expect()(host.locator(".toast").last).to_contain_text("Forgot 1 other phone")
        # The guest's page learns that its trust ended either when its next change is refused, or
        # first from its own session check (app.js asks /api/session whenever its live stream opens,
        # and the stream it opened after the PIN may open only now); then it already hides the
        # add-player form. Which comes first is a race, so the next change goes through the page's
        # own client (what the form's submit and the game UIs call), which sends it either way.
        with guest.expect_response(lambda r: r.url.endswith("/api/command")) as answer:
            guest.evaluate("() => { Tabletop.api.command('add_player', {name: 'Eve'}).catch(() => {}); }")
        assert answer.value.status == 403
        assert answer.value.json()["error"] == "this needs the table PIN: open /pin, or POST it to /api/pin"
        assert server.service.snapshot()[1]["players"] == []
        # Either way the page asks for the PIN in place (pin-prompt.js) and shows the call to
        # action instead of the controls.
        expect()(guest.locator("#pin-again")).to_contain_text("needs the table PIN again")
        expect()(guest.locator("#pin-cta")).to_be_visible()
        expect()(guest.locator("#add-player")).to_be_hidden()
        expect()(guest.locator("#trust")).to_be_hidden()
        # The host stays trusted.
        host.fill("#new-name", "Ann")
        host.click("#add-player button[type=submit]")
        expect()(host.locator("#players li.player")).to_have_count(1)  # li.player: the empty list has a note li
        assert [p["name"] for p in server.service.snapshot()[1]["players"]] == ["Ann"]

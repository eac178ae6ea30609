"""Debian's Chromium on a phone-sized viewport, clicking what a player clicks, on a real server."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from helpers.browser import TEST_PIN, LiveServer, chromium, live_server, phone, table_service  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def expect() -> Any:
    from playwright.sync_api import expect as _expect

    return _expect


def test_slapping_a_simulated_pad_updates_the_table_screen_live(phone: Any, live_server: LiveServer) -> None:
    screen = phone.new_page()
    screen.goto(live_server.url + "/screen")
    expect()(screen.locator("#conn")).to_have_text("live")

    pads = phone.new_page()
    pads.goto(live_server.url + "/pads")
    expect()(pads.locator("#conn")).to_have_text("live")
    expect()(pads.locator(".pad")).to_have_count(4)
    pads.locator('.pad[data-pad="3"]').tap()

    expect()(screen.locator("#last-hit")).to_have_text(re.compile(r"Pad 3 .* slap"))
    hits = live_server.service.snapshot()[1]["recent_hits"]
    assert [h["pad"] for h in hits] == [3]


def test_keyboard_and_light_touch_on_the_pads_page(phone: Any, live_server: LiveServer) -> None:
    screen = phone.new_page()
    screen.goto(live_server.url + "/screen")
    pads = phone.new_page()
    pads.goto(live_server.url + "/pads")
    expect()(pads.locator(".pad")).to_have_count(4)

    pads.keyboard.press("2")
    expect()(screen.locator("#last-hit")).to_have_text(re.compile(r"Pad 2 .* slap"))
    pads.keyboard.press("Shift+4")
    expect()(screen.locator("#last-hit")).to_have_text(re.compile(r"Pad 4 .* touch"))
    pads.locator('[data-touch-pad="1"]').tap()
    expect()(screen.locator("#last-hit")).to_have_text(re.compile(r"Pad 1 .* touch"))
    kinds = [(h["pad"], h["kind"]) for h in live_server.service.snapshot()[1]["recent_hits"]]
    assert kinds == [(2, "slap"), (4, "touch"), (1, "touch")]


def test_table_page_pin_players_and_a_game(phone: Any, live_server: LiveServer) -> None:
    page = phone.new_page()
    page.goto(live_server.url + "/")
    expect()(page.locator("#conn")).to_have_text("live")

    # Watching works, changing needs the PIN: a watcher gets no start or add-player form,
    # just the call to enter the PIN where they would be.
    expect()(page.locator("#new-game")).to_be_hidden()
    expect()(page.locator("#start-form")).to_be_hidden()
    expect()(page.locator("#add-player")).to_be_hidden()
    expect()(page.locator("#pin-cta")).to_be_visible()
    expect()(page.locator("#pin-link")).to_have_text("Enter the PIN to change things")
    # The server refuses a watcher's change whatever the page shows.
    refused = page.evaluate("""() => Tabletop.api.command('add_player', {name: 'Ann'}).then(() => 'accepted', e => e.status + ' ' + e.message)""")
    assert refused.startswith("403 ") and "needs the table PIN" in refused, refused
    expect()(page.locator(".toast")).to_contain_text("needs the table PIN")
    assert live_server.service.snapshot()[1]["players"] == []

    page.click("#pin-link")
    page.fill("#pin", TEST_PIN)
    page.click(".pin-form button[type=submit]")
    expect()(page.locator("#trust")).to_contain_text("Trusted phone")

    for name, pad in (("Ann", "1"), ("Bob", "2")):
        page.fill("#new-name", name)
        page.select_option("#new-pad", pad)
        page.click("#add-player button[type=submit]")
        expect()(page.locator(f'.player-name >> nth={0 if name == "Ann" else 1}')).to_have_value(name)
    players = live_server.service.snapshot()[1]["players"]
    assert [(p["name"], p["pad"]) for p in players] == [("Ann", 1), ("Bob", 2)]

    # Seat order: move Bob up.
    page.click('button[aria-label="move Bob up"]')
    expect()(page.locator(".player-name >> nth=0")).to_have_value("Bob")
    expect()(page.locator("#pin-cta")).to_be_hidden()

    # Start the game; with no UI script for "counter" the key/value fallback shows its view.
    page.select_option("#start-kind", "counter")
    page.click("#start-button")
    expect()(page.locator("#game-title")).to_have_text("Counter")
    expect()(page.locator("#game dl.kv")).to_contain_text("total")
    assert live_server.service.snapshot()[1]["game"]["kind"] == "counter"

    # A server refusal shows the server's own message.
    page.fill("#new-name", "Ann")
    page.click("#add-player button[type=submit]")
    expect()(page.locator(".toast").last).to_contain_text("Ann")

    # Forgetting the phone: back to watching.
    page.click("#logout")
    expect()(page.locator("#pin-link")).to_be_visible()
    expect()(page.locator("#game-actions")).to_be_hidden()
    expect()(page.locator("li.player.readonly")).to_have_count(2)


def test_a_name_being_typed_survives_another_phone_changing_the_players(phone: Any, live_server: LiveServer) -> None:
    service = live_server.service
    ann = service.submit("add_player", {"name": "Ann", "pad": 1})["events"][0]["data"]["id"]
    page = phone.new_page()
    page.goto(live_server.url + "/pin?next=/")
    page.fill("#pin", TEST_PIN)
    page.click(".pin-form button[type=submit]")
    field = page.locator(f'li.player[data-player="{ann}"] .player-name')
    expect()(field).to_have_value("Ann")

    field.click()
    field.press("End")
    field.type("abel")  # not committed yet: no change event until the field is left
    service.submit("add_player", {"name": "Bob", "pad": 2})  # another phone, meanwhile
    service.submit("update_player", {"player": ann, "colour": "#0072b2"})
    expect()(page.locator("li.player")).to_have_count(2)
    expect()(page.locator(f'li.player[data-player="{ann}"] .player-colour')).to_have_value("#0072b2")
    # The list was redrawn; the half-typed name and the caret are still there.
    expect()(field).to_have_value("Annabel")
    expect()(field).to_be_focused()
    assert service.snapshot()[1]["players"][0]["name"] == "Ann"

    field.type("le")
    field.press("Enter")  # leaves the field: now the name is sent
    expect()(field).not_to_be_focused()
    _wait_until(lambda: [p["name"] for p in service.snapshot()[1]["players"]] == ["Annabelle", "Bob"], "the new name to reach the table")
    expect()(field).to_have_value("Annabelle")


def test_phone_viewport_has_no_horizontal_scroll(phone: Any, live_server: LiveServer) -> None:
    page = phone.new_page()
    for path in ("/", "/pads", "/screen", "/pin"):
        page.goto(live_server.url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)


def test_a_phone_that_lost_the_server_resumes_with_what_it_missed(phone: Any, live_server: LiveServer) -> None:
    from web import table_context

    from helpers.browser import start_live_server

    screen = phone.new_page()
    screen.goto(live_server.url + "/screen")
    expect()(screen.locator("#conn")).to_have_text("live")
    live_server.service.source.inject(1)
    expect()(screen.locator("#last-hit")).to_have_text(re.compile(r"Pad 1 "))

    port = live_server.port
    live_server.stop()  # the Wi-Fi drops, or the server restarts
    expect()(screen.locator("#conn")).not_to_have_text("live")
    live_server.service.source.inject(4)  # play goes on meanwhile

    table_context(live_server.app).stopping.clear()
    again = start_live_server(live_server.app, live_server.service, port=port)
    try:
        expect()(screen.locator("#conn")).to_have_text("live", timeout=30_000)
        expect()(screen.locator("#last-hit")).to_have_text(re.compile(r"Pad 4 "))
    finally:
        again.stop()


def _wait_until(cond: Any, what: str, timeout_s: float = 20.0) -> None:
    """Poll ``cond`` (a generous bound that only stops a hang)."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)

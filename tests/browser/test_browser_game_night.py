"""Game night in Debian's Chromium: a restart with a new PIN, the results and a rematch, check-in and the verdict flash.

A real server on loopback, real phones and a table screen (1280x800) driving it
as players do; simulated pads slapped through the pad source.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import (  # noqa: F401
    LIVE_SSE,
    LiveServer,
    browser_context,
    chromium,
    enter_pin,
    make_app,
    phone,
    serve_table,
    start_live_server,
)

from companion.games.taco import TacoGame
from companion.games.tap4 import Tap4

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREEN = {"viewport": {"width": 1280, "height": 800}}


@pytest.fixture
def night(tmp_path: Path) -> Iterator[LiveServer]:
    """A live server with Taco and Tap 4 and three players on pads 1-3."""
    with serve_table(tmp_path / "data", games={"taco": TacoGame, "tap4": Tap4}) as server:
        for pad, (name, colour) in enumerate((("Ann", "#e4572e"), ("Bob", "#29a3d6"), ("Cat", "#f3c623")), start=1):
            server.service.submit("add_player", {"name": name, "pad": pad, "colour": colour})
        yield server


def start_taco_and_wait_for_a_due_card(service: Any) -> int:
    """Start digital Taco (every card a Taco, nothing flips for a minute after a verdict); the due card's time."""
    sub = service.subscribe()
    try:
        service.submit("start_game", {"kind": "taco", "settings": {"deck": {"taco": 40}, "lead_in_ms": 0,
                                                                   "after_verdict_ms": 60_000}})
        state = service.snapshot()[1]
        while (state["game"]["view"]["window"] or {}).get("kind") != "due":
            update = sub.get(timeout=30)
            assert update is not None, "no due card"
            state = update.state
        return int(state["game"]["view"]["top"]["at_us"])
    finally:
        sub.close()


def test_a_false_start_flashes_as_a_flinch_and_its_row_says_what_happened(night, chromium):  # noqa: F811
    server = night
    with browser_context(chromium, **SCREEN) as context:
        screen = context.new_page()
        screen.goto(server.url + "/screen")
        screen.locator("#conn", has_text="live").wait_for()
        card_at = start_taco_and_wait_for_a_due_card(server.service)
        server.service.source.inject(2, at_us=card_at + 30_000)  # Bob, 30 ms after the card: faster than a human
        flash = screen.locator("#verdict-flash")
        flash.wait_for(state="visible")
        assert flash.get_attribute("data-sound") == "flinch"
        assert flash.locator(".vf-headline").inner_text() == "Bob flinched and takes the pile"
        assert flash.locator(".vf-rows li").all_inner_texts() == ["Bob slapped 30 ms after the card: false start"]
        row = screen.locator("#screen-game .tc-row[data-player='2'] [data-taco=flinch-why]")
        assert row.inner_text() == "slapped 30 ms after the card: false start"
        assert "flinch 0.0" not in screen.locator("#screen-game").inner_text()


def test_a_restart_with_a_new_pin_asks_every_phone_for_it_and_keeps_the_typed_round(night, phone, tmp_path):  # noqa: F811
    server = night
    server.service.submit("start_game", {"kind": "tap4"})
    page = phone.new_page()
    enter_pin(page, server.url)
    page.locator(".tap4 [data-t4=entry]").wait_for()
    page.locator(".tap4 .t4-player[data-player='1'] button[data-mode=out]").tap()
    page.locator("[aria-label='Bob total']").fill("12")
    page.locator("[aria-label='Cat total']").fill("7")

    # The service restarts its web side with another PIN on the same address: trust ends.
    port = server.port
    server.stop()
    app = make_app(server.service, tmp_path / "data", PIN="1357", **LIVE_SSE)
    restarted = start_live_server(app, server.service, port=port)
    try:
        prompt = page.locator("#pin-again")
        prompt.wait_for(state="visible")
        assert "needs the table PIN again" in prompt.inner_text()
        assert "shown on the table screen" in prompt.inner_text() and "/api/pin" not in prompt.inner_text()
        assert page.locator("[aria-label='Bob total']").input_value() == "12"  # still there, still editable
        assert page.locator("[aria-label='Cat total']").input_value() == "7"
        page.fill("#pin-again-input", "2468")  # the old PIN
        page.click("#pin-again-send")
        page.locator("#pin-again-error", has_text="not the table's PIN").wait_for()
        page.fill("#pin-again-input", "1357")
        page.click("#pin-again-send")
        prompt.wait_for(state="hidden")
        page.locator("[data-t4=save]").tap()
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.tap4 tr[data-t4=totals] td')).map(t => t.textContent).join(',') === '0,12,7'")
        rounds = server.service.snapshot()[1]["game"]["view"]["rounds"]
        assert [r["points"] for r in rounds] == [[0, 12, 7]]
    finally:
        restarted.stop()


def test_the_end_of_a_game_shows_the_results_on_screen_and_phone_and_a_rematch_starts_the_same_game(night, phone, chromium):  # noqa: F811
    server = night
    server.service.submit("start_game", {"kind": "tap4", "settings": {"target": 20}, "players": [1, 2, 3]})
    with browser_context(chromium, **SCREEN) as screen_context:
        screen = screen_context.new_page()
        screen.goto(server.url + "/screen")
        page = phone.new_page()
        enter_pin(page, server.url)
        page.locator(".tap4 [data-t4=entry]").wait_for()
        server.service.submit("enter_round", {"entries": [{"player": 1, "total": 9}, {"player": 2, "out": True},
                                                          {"player": 3, "total": 25}]})
        for where in (screen, page):
            where.locator(".results [data-results=headline]", has_text="Bob wins!").wait_for()
            assert where.locator(".podium-step[data-place='1'] .podium-name").inner_text() == "Bob"
            assert where.locator(".results-standings tbody tr").all_inner_texts()[0].split("\t")[:2] == ["1.", "Bob"]
        assert screen.locator("#rematch").count() == 0  # the screen has no buttons
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll on the phone
        server.service.submit("end_game")
        screen.locator("#checkin").wait_for(state="visible")  # idle: the results stay, check-in below
        assert screen.locator(".results [data-results=headline]").inner_text() == "Bob wins!"
        assert not screen.locator("#last-hit").is_visible()
        first = server.service.snapshot()[1]
        page.locator("#rematch").tap()
        page.locator(".tap4 [data-t4=entry]").wait_for()
        screen.locator("#screen-results").wait_for(state="hidden")
        game = server.service.snapshot()[1]["game"]
        assert game["kind"] == "tap4" and game["settings"]["target"] == 20 and game["players"] == [1, 2, 3]
        # The table page lists the finished game with who played and who won, and its sheet as the CSV.
        past = page.locator("#past-games li", has_text="won by Bob")
        past.wait_for()
        assert "Ann, Bob, Cat" in past.inner_text()
        assert past.locator("a", has_text="CSV").get_attribute("href").endswith("/sheet.csv")
        assert first["game"] is None


def test_check_in_lights_each_pad_and_a_verdict_fills_the_screen_with_the_takers_name(night, chromium):  # noqa: F811
    server = night
    with browser_context(chromium, **SCREEN) as context:
        # checkin.js arrives late, after the page's first state (a slow Pi, a busy Wi-Fi): it must still draw.
        context.route("**/static/checkin.js", lambda route: (time.sleep(0.7), route.continue_()))
        screen = context.new_page()
        screen.goto(server.url + "/screen")
        screen.locator("#conn", has_text="live").wait_for()
        screen.locator("#checkin [data-checkin=title]", has_text="0 of 3").wait_for()
        source = server.service.source
        t0 = source.now_us() - 30_000_000  # (stamps a second apart, in the past: one at a time)
        source.inject(2, at_us=t0)
        screen.locator("#checkin li.checked-in[data-player='2'][data-slaps='1']").wait_for()
        assert screen.locator("#checkin li.checked-in").count() == 1
        assert "0 of 3" in screen.locator("#checkin [data-checkin=title]").inner_text()  # twice each
        source.inject(2, at_us=t0 + 1_000_000)
        screen.locator("#checkin [data-checkin=title]", has_text="1 of 3").wait_for()
        # Two pads at once teach the pad box nothing: both light up, neither counts, and the screen says why.
        source.inject(1, at_us=t0 + 2_000_000)
        source.inject(3, at_us=t0 + 2_030_000)
        screen.locator("#checkin [data-checkin=overlap]").wait_for()
        assert screen.locator("#checkin li.checked-in").count() == 3
        assert screen.locator("#checkin li[data-player='1']").get_attribute("data-slaps") == "0"
        # A light touch shows the pad works but is no slap to learn from.
        source.inject(1, kind="touch", at_us=t0 + 3_000_000)
        source.inject(3, at_us=t0 + 3_500_000)
        screen.locator("#checkin li[data-player='3'][data-slaps='1']").wait_for()  # (hits arrive in order)
        assert screen.locator("#checkin li[data-player='1']").get_attribute("data-slaps") == "0"
        assert screen.locator("#checkin [data-checkin=overlap]").count() == 0  # (a lone hit since: the line goes)
        for k, pad in enumerate((1, 3, 1)):
            source.inject(pad, at_us=t0 + 4_000_000 + k * 1_000_000)
        screen.locator("#checkin [data-checkin=title]", has_text="Every pad works").wait_for()
        assert screen.locator("#checkin li[data-player='1']").get_attribute("data-slaps") == "2"
        assert "null" not in screen.locator("#checkin").inner_text()

        card_at = start_taco_and_wait_for_a_due_card(server.service)
        screen.locator("#checkin").wait_for(state="hidden")
        # The card is an inline SVG icon, drawn even where no colour emoji font is (a Pi kiosk).
        icon = screen.locator(".tc-card[data-card=taco] .icon[data-icon=taco] svg")
        icon.wait_for()
        assert icon.is_visible() and icon.bounding_box()["height"] > 50
        server.service.source.inject(1, at_us=card_at + 200_000)
        server.service.source.inject(3, at_us=card_at + 260_000)  # Bob never slaps
        flash = screen.locator("#verdict-flash")
        flash.wait_for(state="visible")
        assert flash.locator(".vf-name").inner_text() == "Bob"
        assert flash.locator(".vf-headline").inner_text() == "Bob takes the pile"
        assert flash.locator(".vf-reason").inner_text() == "Bob never slapped, so Bob takes the pile"
        assert "Taco said with Taco" in flash.locator(".vf-detail").inner_text()
        assert flash.get_attribute("data-sound") == "last"
        assert screen.evaluate("getComputedStyle(document.getElementById('verdict-flash')).backgroundColor") == "rgb(41, 163, 214)"
        assert "null" not in flash.inner_text()
        flash.wait_for(state="hidden", timeout=5000)  # about two seconds, then the game's own screen

        # Then the instant replay: the window on a millisecond timeline, ten times slower.
        replay = screen.locator("#slap-replay")
        replay.wait_for(state="visible")
        assert "10× slower" in replay.inner_text() and "never slapped: Bob" in replay.inner_text()
        ann, cat = replay.locator(".rp-mark[data-player='1']"), replay.locator(".rp-mark[data-player='3']")
        cat.and_(screen.locator(".shown")).wait_for()  # the last mark appears once the cursor reaches it
        assert ann.locator(".rp-ms").inner_text() == "200 ms" and cat.locator(".rp-ms").inner_text() == "260 ms"
        assert ann.bounding_box()["x"] < cat.bounding_box()["x"]
        replay.wait_for(state="hidden", timeout=10_000)

        # The other kinds of verdict, in the words and sounds the flash uses (the same function as above).
        said = screen.evaluate("""() => [
          {kind: "flinch", taker: 1, timing: "card", card: "monkey", word: "hat",
           order: [{player: 1, flinch: "false start: 28.0 ms after the card"}, {player: 3, flinch: "slapped before the card appeared"}]},
          {kind: "slap", taker: 2, winner: 3, missing: [], order: []},
          {kind: "penalty", taker: 2, penalty: "gesture"}].map(Tabletop.verdictFlash.describe)""")
        flinch, win, penalty = said
        assert flinch["sound"] == "flinch" and flinch["headline"] == "Ann flinched and takes the pile"
        assert flinch["detail"] == "Monkey said with Hat · times after the card"
        assert [r["text"] for r in flinch["rows"]] == ["slapped 28 ms after the card: false start", "slapped before the card appeared"]
        assert win["sound"] == "win" and win["headline"] == "Cat wins!" and win["player"]["name"] == "Cat"
        assert penalty["sound"] == "flinch" and penalty["headline"] == "Bob takes the pile for a wrong gesture"
        late = screen.evaluate("""() => Tabletop.verdictFlash.describeOverrule(
          {verdict: 4, action: "penalty", from: 2, to: 3, note: "wrong gesture", starts_next: true})""")
        assert late["headline"] == "Cat takes the pile for wrong gesture"
        assert late["reason"] == "The table gave Cat a penalty (wrong gesture), so the pile goes from Bob to Cat"

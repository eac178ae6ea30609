"""Watchers and trusted phones in Debian's Chromium: a phone without the PIN sees every game
read-only with one "Enter the PIN" call to action, a trusted phone sees the controls, and a
phone whose trust ran out goes back to watching at its next refused change."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers.browser import TEST_PIN, LiveServer, chromium, expect, forget_phone_from_another_tab, phone, serve_all_games  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: A control each game's phone view offers a trusted phone right after the start.
GAME_CONTROL = {
    "taco": "[data-taco=pause]",
    "tap4": "[data-t4=entry] [data-t4=save]",
    "tactile": "[data-tt=end-turn]",
    "tapeworm": "[data-tw=draw]",
}

#: Visible things in #main that change something (links and folded sections only read).
VISIBLE_CONTROLS = """sel => [...document.querySelectorAll(sel)]
  .filter(e => e.offsetParent !== null)
  .map(e => e.tagName + (e.id ? '#' + e.id : '') + ' ' + (e.textContent || e.getAttribute('aria-label') || '').trim().slice(0, 24))"""
CONTROL_SELECTOR = "main button, main input, main select, main textarea, main form"


@pytest.fixture
def games_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A live server with the four real games, 4 simulated pads and four seated players."""
    yield from serve_all_games(tmp_path / "data", ("Ann", "Bob", "Cy", "Dee"))


def _enter_pin(page: Any, server: LiveServer) -> None:
    page.goto(server.url + "/pin?next=/")
    page.fill("#pin", TEST_PIN)
    page.click(".pin-form button[type=submit]")
    expect()(page.locator("#trust")).to_contain_text("Trusted phone")


@pytest.mark.parametrize("kind", sorted(GAME_CONTROL))
def test_a_watcher_sees_each_game_read_only_and_a_trusted_phone_its_controls(
        kind: str, games_server: LiveServer, phone: Any, chromium: Any) -> None:
    games_server.service.submit("start_game", {"kind": kind})
    watcher_context = chromium.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    watcher_context.set_default_timeout(20_000)
    try:
        watcher = watcher_context.new_page()
        watcher.goto(games_server.url + "/")
        expect()(watcher.locator(f"#game[data-kind={kind}] > *").first).to_be_visible()
        expect()(watcher.locator("#conn")).to_have_text("live")
        # The game shows (its state is there to watch), but nothing in it can be pressed.
        assert watcher.locator("#game").inner_text().strip()
        assert watcher.evaluate(VISIBLE_CONTROLS, CONTROL_SELECTOR) == []
        assert watcher.locator(GAME_CONTROL[kind]).count() == 0
        expect()(watcher.locator("#game-actions")).to_be_hidden()
        expect()(watcher.locator("#pin-cta")).to_be_visible()
        expect()(watcher.locator("#pin-link")).to_have_text("Enter the PIN to change things")
    finally:
        watcher_context.close()

    page = phone.new_page()
    _enter_pin(page, games_server)
    expect()(page.locator(f"#game {GAME_CONTROL[kind]}").first).to_be_visible()
    expect()(page.locator("#end-game")).to_be_visible()
    expect()(page.locator("#pin-cta")).to_be_hidden()


def test_a_phone_whose_trust_ends_goes_back_to_watching(games_server: LiveServer, phone: Any) -> None:
    page = phone.new_page()
    _enter_pin(page, games_server)
    expect()(page.locator("#add-player")).to_be_visible()
    expect()(page.locator("li.player .player-name").first).to_be_visible()

    # Another tab of the same phone forgets it (as a PIN change or the 12 hours would).
    forget_phone_from_another_tab(phone, games_server.url)

    # The next change is refused by the server, and the page stops offering changes. The page learns
    # that its trust ended either when that change is refused, or first from its own session check
    # (app.js asks /api/session when it loads and whenever its live stream opens, and those may be
    # answered only after the forget); then it already hides the add-player form. Which comes first
    # is a race, so the change goes through the page's own client (what the form's submit and the
    # game UIs call), which sends it either way.
    with page.expect_response(lambda r: r.url.endswith("/api/command")) as answer:
        page.evaluate("() => { Tabletop.api.command('add_player', {name: 'Eve'}).catch(() => {}); }")
    assert answer.value.status == 403
    assert answer.value.json()["error"] == "this needs the table PIN: open /pin, or POST it to /api/pin"
    # Either way a phone that was trusted is asked for the PIN in place, in words for players (pin-prompt.js).
    expect()(page.locator("#pin-again")).to_contain_text("needs the table PIN again")
    page.click("#pin-again-later")  # "Just watch"
    expect()(page.locator("#pin-cta")).to_be_visible()
    expect()(page.locator("#add-player")).to_be_hidden()
    expect()(page.locator("#new-game")).to_be_hidden()
    expect()(page.locator("#trust")).to_be_hidden()
    expect()(page.locator("li.player.readonly")).to_have_count(4)
    assert page.evaluate(VISIBLE_CONTROLS, CONTROL_SELECTOR) == []
    assert [p["name"] for p in games_server.service.snapshot()[1]["players"]] == ["Ann", "Bob", "Cy", "Dee"]


def test_taco_folded_sections_show_their_triangle_idle_page_lists_past_games_tactile_no_gap(
        games_server: LiveServer, phone: Any) -> None:
    page = phone.new_page()
    _enter_pin(page, games_server)
    games_server.service.submit("start_game", {"kind": "taco"})
    page.locator(".taco summary", has_text="Penalty").wait_for()
    # The disclosure triangle is the marker of a list-item summary; display: flex drops it.
    displays = page.locator(".taco summary").evaluate_all("els => els.map(e => getComputedStyle(e).display)")
    assert displays and set(displays) == {"list-item"}, displays
    page.once("dialog", lambda d: d.accept())
    page.click("#end-game")
    expect()(page.locator("#new-game")).to_be_visible()
    # A page opened while no game runs lists the past games too.
    idle = phone.new_page()
    idle.goto(games_server.url + "/")
    expect()(idle.locator("#past-games")).to_contain_text("Taco Hat Cake Gift Pizza")
    idle.close()

    games_server.service.submit("start_game", {"kind": "tactile"})
    board = page.locator(".tactile [data-tt=board]")
    board.wait_for()
    gap = page.evaluate("""() => { const b = document.querySelector('.tactile [data-tt=board]');
      let n = b.nextElementSibling; while (n && n.getBoundingClientRect().height === 0) { n = n.nextElementSibling; }
      return n.getBoundingClientRect().top - b.getBoundingClientRect().bottom; }""")
    assert gap < 20, f"{gap} px of empty space under the TacTile board"

"""TacTile on two phones in Debian's Chromium: two turns played by tapping the board, the second phone follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import LiveServer, chromium, enter_pin, phone, seat, second_phone, serve_table  # noqa: F401
from helpers.tactile import LAYOUT, MARKET, start_entered_game

from companion.games.tactile import TacTile

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def tactile_server(tmp_path: Path) -> Iterator[tuple[LiveServer, list[int]]]:
    """A live server whose table has two players and a TacTile game with its layout and market entered."""
    with serve_table(tmp_path / "data", games={"tactile": TacTile}) as server:
        ids = seat(server.service, ("Ann", "Bob"))
        start_entered_game(server.service.submit)
        yield server, ids


def test_two_turns_by_tapping_the_board_and_the_other_phone_follows(tactile_server, phone, second_phone):  # noqa: F811
    server, (ann, bob) = tactile_server
    watcher = second_phone.new_page()
    watcher.goto(server.url + "/")
    watcher.locator(".tactile [data-tt=board]").wait_for()
    assert watcher.locator("[data-tt=current]").inner_text() == "Ann"

    page = phone.new_page()
    enter_pin(page, server.url)
    page.locator(".tactile [data-tt=board]").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the phone page scrolls sideways"

    def tile(name: str) -> Any:
        return page.locator(f".tactile [data-tile={name}]")

    # Turn 1, Ann: tap her disc on a1, the legal destinations light up, tap b1.
    tile("a1").tap()
    page.locator(f"[data-disc='{ann}a'].selected").wait_for()
    assert page.locator(".tactile .tt-tile.target").evaluate_all("els => els.map(e => e.dataset.tile).sort()") == ["a2", "b1"]
    tile("b1").tap()
    page.locator(f"[data-tile=b1] [data-disc='{ann}a']").wait_for()
    page.locator("[data-tt=basics] [data-basic=move].used").wait_for()
    page.locator("[data-gain=red]").tap()
    page.locator("[data-player='%d'] [data-colour=red]" % ann, has_text="red 1").wait_for()
    # Two basic actions taken: only ending the turn is left.
    page.locator("[data-tt=basics-count]", has_text="none left").wait_for()
    page.locator("[data-tt=end-turn]").tap()
    page.locator("[data-tt=current]", has_text="Bob").wait_for()

    # Turn 2, Bob: an illegal tap is refused with the server's reason, then a legal move.
    tile("f6").tap()
    page.locator(f"[data-disc='{bob}a'].selected").wait_for()
    tile("d6").tap()
    page.locator("[data-tt=error]", has_text="d6 is not next to f6").wait_for()
    tile("f5").tap()
    page.locator(f"[data-tile=f5] [data-disc='{bob}a']").wait_for()
    assert page.locator("[data-tt=error]").inner_text() == ""
    # One undo, saying what it takes back; the whole-turn undo says where it goes back to.
    undo = page.locator("[data-tt=undo]")
    undo.filter(has_text="f5").wait_for()
    assert undo.inner_text() == f"Undo: Bob's move of disc {bob}a to f5"
    assert page.locator("[data-tt=undo-turn]").inner_text() == "Undo turn: back to turn 1 (Ann)"
    assert page.locator("button:visible", has_text="Undo").count() == 2  # not a third, vaguer "Undo last"
    undo.tap()
    page.locator(f"[data-tile=f6] [data-disc='{bob}a']").wait_for()
    tile("f6").tap()
    tile("e6").tap()
    page.locator(f"[data-tile=e6] [data-disc='{bob}a']").wait_for()
    page.locator("[data-tt=end-turn]").tap()
    page.locator("[data-tt=current]", has_text="Ann").wait_for()

    # The second phone followed every step live.
    watcher.locator(f"[data-tile=e6] [data-disc='{bob}a']").wait_for()
    watcher.locator(f"[data-tile=b1] [data-disc='{ann}a']").wait_for()
    watcher.locator("[data-tt=current]", has_text="Ann").wait_for()
    assert "turn 3" in watcher.locator("[data-tt=status]").inner_text()
    assert watcher.locator(f"[data-player='{ann}'] [data-colour=red]").inner_text().endswith("red 1")
    assert watcher.locator("[data-tile=f5] [data-disc]").count() == 0


def test_setup_on_the_phone_last_tile_by_taps_and_a_card_by_its_form(tmp_path: Path, phone):  # noqa: F811
    with serve_table(tmp_path / "data", games={"tactile": TacTile}) as server:
        service = server.service
        for name in ("Ann", "Bob", "Cat", "Dan"):
            service.submit("add_player", {"name": name})
        service.submit("start_game", {"kind": "tactile", "settings": {"layout": "enter"}})
        letters = {"r": "red", "y": "yellow", "g": "green", "b": "blue"}
        tiles = [("abcdef"[c] + str(r + 1), letters[LAYOUT[r][c]]) for r in range(6) for c in range(6) if LAYOUT[r][c] != "h"]
        for tile, colour in tiles[:-1]:
            service.submit("place_tile", {"tile": tile, "colour": colour})

        page = phone.new_page()
        enter_pin(page, server.url)
        page.locator(".tactile [data-tt=status]", has_text="1 tiles to enter").wait_for()
        last_tile, last_colour = tiles[-1]
        page.locator(f".tactile [data-tile={last_tile}]").tap()
        page.locator(f"[data-tt=tile-picker] [data-place={last_colour}]").tap()
        page.locator("[data-tt=current]", has_text="Ann").wait_for()
        assert page.locator(f"[data-tile={last_tile}]").get_attribute("class").split()[1] == last_colour

        # The market's first slot waits for its card: enter it with the form.
        page.locator("[data-tt=entry]", has_text="Market slot 1").wait_for()
        page.select_option("[aria-label='card colour']", "green")
        page.select_option("[aria-label='card type']", "push")
        page.fill("[aria-label='cost red']", "2")
        page.locator("[data-tt=enter-card]").tap()
        page.locator("[data-tt=entry]", has_text="Market slot 2").wait_for()
        slot = page.locator("[data-tt=market] [data-slot='1']")
        assert "push" in slot.inner_text() and "cost 2●" in slot.inner_text()
        # Once the other five are entered the form goes; a card Ann cannot pay for offers no Buy.
        for number, face in enumerate(MARKET[1:], start=2):
            service.submit("enter_card", {"slot": number, **face})
        page.locator("[data-tt=entry]").wait_for(state="detached")
        page.locator("[data-tt=market] [data-buy='1']").wait_for()
        assert page.locator("[data-tt=market] [data-buy='1']").is_disabled()  # Ann cannot pay 2 red

"""Tapeworm on a phone in Debian's Chromium: play a few turns by tapping, the table screen follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import LiveServer, chromium, enter_pin, phone, seat, serve_table  # noqa: F401

from companion.games.tapeworm import Tapeworm

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def tapeworm_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A live server whose table has three players and a Tapeworm game (Ann starts)."""
    with serve_table(tmp_path / "data", games={"tapeworm": Tapeworm}) as server:
        ids = seat(server.service, ("Ann", "Bob", "Cat"))
        server.service.submit("start_game", {"kind": "tapeworm", "settings": {"deck_size": 40, "first_player": ids[0]}})
        yield server


def hand(page: Any, name: str) -> str:
    return page.locator(f".tw ul.tw-hands li:has-text('{name}') [data-tw=hand]").inner_text()


def test_play_a_few_turns_on_a_phone_and_the_screen_follows(tapeworm_server: LiveServer, phone: Any) -> None:  # noqa: F811
    server = tapeworm_server
    screen = phone.new_page()
    screen.goto(server.url + "/screen")
    screen.locator(".tw [data-tw=current]").wait_for()
    assert screen.locator(".tw [data-tw=current]").inner_text() == "Ann"
    assert screen.locator(".tw button").count() == 0  # the screen only shows

    page = phone.new_page()
    enter_pin(page, server.url)
    page.locator(".tw [data-tw=draw]").wait_for()

    # Playing before drawing is refused with the reason, and nothing changes.
    page.locator("[data-tw=play]").tap()
    page.locator(".toast", has_text="must draw a card before playing").wait_for()
    assert hand(page, "Ann") == "5"

    # Ann: draw, play three cards, end the turn.
    page.locator("[data-tw=draw]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=deck] b').textContent === '24'")
    page.locator("#tw-count").fill("3")
    page.locator("[data-tw=play]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=worm] b').textContent === '3'")
    page.locator("[data-tw=end_turn]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=current]').textContent === 'Bob'")
    assert hand(page, "Ann") == "3"

    # Bob: draw, Hatch on Cat, end the turn.
    page.locator("[data-tw=draw]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=deck] b').textContent === '23'")
    page.locator("#tw-hatch-target").select_option(label="Cat")
    page.locator("[data-tw=hatch]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=deck] b').textContent === '22'")
    page.locator("[data-tw=end_turn]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=current]').textContent === 'Cat'")

    # The table screen followed live.
    screen.wait_for_function("document.querySelector('.tw [data-tw=current]').textContent === 'Cat'")
    assert [hand(screen, n) for n in ("Ann", "Bob", "Cat")] == ["3", "5", "6"]
    assert screen.locator(".tw [data-tw=worm] b").inner_text() == "4"
    assert "Bob played Hatch: Cat draws" in screen.locator(".tw ol.tw-log").inner_text()

    # Cat: draw, then a Swap that only looked: the Swap joins the worm, nothing else moves.
    page.locator("[data-tw=draw]").tap()
    page.wait_for_function("document.querySelector('.tw [data-tw=deck] b').textContent === '21'")
    page.locator("#tw-swap-target").select_option(label="Ann")
    page.locator("[data-tw=swap-look]").tap()
    screen.wait_for_function("document.querySelector('.tw [data-tw=worm] b').textContent === '5'")
    assert [hand(screen, n) for n in ("Ann", "Bob", "Cat")] == ["3", "5", "6"]
    assert "Cat played Swap on Ann: looked and took nothing" in screen.locator(".tw ol.tw-log").inner_text()

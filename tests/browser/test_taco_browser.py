"""Taco Hat Cake Gift Pizza in Debian's Chromium: a digital game, slaps on the simulated pads page, the verdict on the table screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import LiveServer, browser_context, chromium, enter_pin, phone, serve_table  # noqa: F401

from companion.games.taco import TacoGame

pytestmark = [pytest.mark.browser, pytest.mark.slow]
#: The right edge of the game's widest element, in CSS pixels.
WIDEST = "Math.max(...Array.from(document.querySelectorAll('.taco, .taco *')).map(e => e.getBoundingClientRect().right))"


@pytest.fixture
def taco_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A live server with Ann (pad 1) and Bob (pad 2) seated and a digital game whose first card is due."""
    with serve_table(tmp_path / "data", games={"taco": TacoGame}) as server:
        service = server.service
        for name, pad in (("Ann", 1), ("Bob", 2)):
            service.submit("add_player", {"name": name, "pad": pad})
        # Every card is a Taco, so the first flip ("Taco" with a Taco) is a match. The window is
        # long and the next round far off, so the test is never racing the beat.
        settings = {"deck": {"taco": 48}, "lead_in_ms": 500, "timeout_ms": 30_000, "after_verdict_ms": 60_000}
        service.submit("start_game", {"kind": "taco", "settings": settings})
        yield server


@pytest.fixture
def table_screen(chromium: Any) -> Iterator[Any]:  # noqa: F811
    with browser_context(chromium, viewport={"width": 1280, "height": 800}) as context:
        yield context.new_page()


def test_slap_on_a_match_and_see_the_verdict_on_the_table_screen(taco_server, phone, table_screen):  # noqa: F811
    screen = table_screen
    screen.goto(taco_server.url + "/screen")
    screen.locator(".taco [data-taco=card][data-card=taco]").wait_for()
    screen.locator(".taco [data-taco=slap]").wait_for()
    assert "Ann said Taco" in screen.locator(".taco [data-taco=said]").text_content()
    assert screen.locator(".taco [data-taco=piles] [data-player='1'] [data-taco=pile-count]").inner_text() == "11"

    pads = phone.new_page()
    pads.goto(taco_server.url + "/pads")
    pads.locator("button.pad[data-pad='1']").tap()
    slapped = screen.locator(".taco [data-taco=piles] [data-player='1'].slapped")
    slapped.wait_for()
    # The pile says who slapped with a drawn hand (inline SVG), not an emoji a kiosk shows as a box.
    assert slapped.locator(".name .icon[data-icon=hand] svg").is_visible()
    assert slapped.locator(".name").inner_text().strip() == "Ann"
    pads.locator("button.pad[data-pad='2']").tap()

    verdict = screen.locator(".taco [data-taco=verdict][data-verdict='1']")
    verdict.wait_for()
    assert "Bob slapped last" in verdict.locator("[data-taco=reason]").inner_text()
    assert verdict.locator("[data-taco=taker]").inner_text() == "Bob takes 1 card"
    rows = verdict.locator(".tc-row")
    assert [rows.nth(i).get_attribute("data-player") for i in range(rows.count())] == ["1", "2"]
    assert "taker" in (rows.nth(1).get_attribute("class") or "")
    assert " ms" in rows.nth(0).locator(".t").inner_text()
    assert screen.locator(".taco [data-taco=piles] [data-player='2'] [data-taco=pile-count]").inner_text() == "13"

    # The table screen also reads on a phone held up at the table: nothing sticks out sideways.
    small = phone.new_page()
    small.goto(taco_server.url + "/screen")
    small.locator(".taco [data-taco=verdict][data-verdict='1']").wait_for()
    assert small.evaluate(WIDEST) <= 390


@pytest.fixture
def physical_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A live server with Ann, Bob and Cy on pads 1-3 playing with real cards."""
    with serve_table(tmp_path / "data", games={"taco": TacoGame}) as server:
        service = server.service
        for name, pad in (("Ann", 1), ("Bob", 2), ("Cy", 3)):
            service.submit("add_player", {"name": name, "pad": pad})
        service.submit("start_game", {"kind": "taco", "settings": {"mode": "physical", "timeout_ms": 1000}})
        yield server


def test_caller_taps_the_cards_and_a_pin_holder_overrules_the_verdict(physical_server, phone):  # noqa: F811
    page = phone.new_page()
    enter_pin(page, physical_server.url)
    taco = page.locator(".taco")
    taco.locator("[data-taco=caller]").wait_for()

    def pile(pid: int) -> str:
        return taco.locator(f"[data-taco=piles] [data-player='{pid}'] [data-taco=pile-count]").inner_text()

    taco.locator("[data-taco=caller] button[data-card=hat]").tap()  # Ann says Taco: no slap
    page.wait_for_function("() => document.querySelector('.taco [data-taco=central]').textContent.indexOf('Centre: 1 card') === 0")
    taco.locator("[data-taco=caller] button[data-card=hat]").tap()  # Bob says Hat: a match
    taco.locator("[data-taco=slap]").wait_for()
    assert pile(1) == "11" and pile(2) == "11"

    source = physical_server.service.source
    source.inject(3)
    source.inject(1)  # Bob never slaps: the window closes after its timeout
    verdict = taco.locator("[data-taco=verdict][data-verdict='1']")
    verdict.wait_for()
    assert "never slapped: Bob" in verdict.locator("[data-taco=reason]").inner_text()
    assert verdict.locator("[data-taco=taker]").inner_text() == "Bob takes 2 cards"
    page.wait_for_function("() => document.querySelector(\".taco [data-player='2'] [data-taco=pile-count]\").textContent === '13'")

    taco.locator("summary", has_text="Overrule verdict 1").click()
    taco.locator("button[data-taco=give][data-player='1']").tap()
    taco.locator("[data-taco=overrules]", has_text="overruled: Bob → Ann").wait_for()
    assert verdict.locator("[data-taco=taker]").inner_text() == "Ann takes 2 cards"
    page.wait_for_function("() => document.querySelector(\".taco [data-player='1'] [data-taco=pile-count]\").textContent === '13'")
    assert pile(2) == "11"
    assert page.evaluate(WIDEST) <= 390  # nothing of the game sticks out sideways on a phone

    # Statistics across games, with the overrule counted for its new holder.
    taco.locator("summary", has_text="Statistics (all games)").click()
    ann = taco.locator("[data-taco=stats] tr[data-player='1'] td")
    ann.first.wait_for()
    assert ann.all_inner_texts() == ["Ann", "–", "–", "0", "1", "0", "1"]

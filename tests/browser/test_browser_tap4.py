"""Tap 4 on two phones in Debian's Chromium: enter a round by card counts, see the totals on the other phone."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import LiveServer, chromium, enter_pin, phone, seat, second_phone, serve_table  # noqa: F401

from companion.games.tap4 import Tap4

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def tap4_server(tmp_path: Path) -> Iterator[tuple[LiveServer, list[int]]]:
    """A live server whose table has four players and a Tap 4 game running."""
    with serve_table(tmp_path / "data", games={"tap4": Tap4}) as server:
        ids = seat(server.service, ("Ann", "Bob", "Cat", "Dan"))
        server.service.submit("start_game", {"kind": "tap4"})
        yield server, ids


def _totals(page: Any) -> list[str]:
    return page.locator(".tap4 tr[data-t4=totals] td").all_inner_texts()


def test_enter_a_round_by_card_counts_and_see_it_on_another_phone(tap4_server, phone, second_phone):  # noqa: F811
    server, (ann, bob, cat, dan) = tap4_server
    watcher = second_phone.new_page()
    watcher.goto(server.url + "/")
    watcher.locator(".tap4 tr[data-t4=totals]").wait_for()
    assert _totals(watcher) == ["0", "0", "0", "0"]

    page = phone.new_page()
    enter_pin(page, server.url)
    page.locator(".tap4 [data-t4=entry]").wait_for()
    assert "discard the Tap Out cards lying in front of players" in page.locator("[data-t4=tap-out-note]").inner_text()
    assert page.locator("[data-t4=status] [data-t4=dealer]").inner_text() == "Dan"
    assert page.locator("[data-t4=status] [data-t4=starter]").inner_text() == "Ann"

    def block(pid: int) -> Any:
        return page.locator(f".tap4 .t4-player[data-player='{pid}']")

    block(ann).locator("button[data-mode=out]").tap()
    block(bob).locator("button[data-mode=cards]").tap()
    bob_seven = page.locator("[aria-label='Bob 7']")
    assert bob_seven.get_attribute("inputmode") == "numeric"
    for label, count in (("3", "1"), ("5", "1"), ("7", "1"), ("Tap In", "1"), ("Tap Out", "1")):
        page.locator(f"[aria-label='Bob {label}']").fill(count)
    assert block(bob).locator("[data-t4=points]").inner_text() == "= 65"  # computed as typed
    page.locator("[aria-label='Cat total']").fill("10")
    block(dan).locator("button[data-mode=cards]").tap()
    page.locator("[aria-label='Dan 12']").fill("2")
    assert block(dan).locator("[data-t4=points]").inner_text() == "= 24"
    page.locator("[data-t4=save]").tap()

    # The second phone sees the new totals live.
    watcher.wait_for_function(
        "() => Array.from(document.querySelectorAll('.tap4 tr[data-t4=totals] td')).map(t => t.textContent).join(',') === '0,65,10,24'"
    )
    assert watcher.locator(".tap4 tbody tr").count() == 1
    assert watcher.locator("[data-t4=status] [data-t4=starter]").inner_text() == "Bob"
    assert watcher.locator("[data-t4=leader]").inner_text() == "Leading: Ann with 0"
    assert _totals(page) == ["0", "65", "10", "24"]

    # An impossible round is refused with the reason, and the sheet stays as it was.
    page.locator("[data-t4=entry]").wait_for()
    block(bob).locator("button[data-mode=out]").tap()
    block(ann).locator("button[data-mode=cards]").tap()
    page.locator("[aria-label='Ann 7']").fill("5")
    block(cat).locator("button[data-mode=cards]").tap()
    page.locator("[aria-label='Cat 7']").fill("4")
    page.locator("[aria-label='Dan total']").fill("3")
    page.locator("[data-t4=save]").tap()
    page.locator(".toast", has_text="too many 7s: Ann 5 + Cat 4 = 9").wait_for()
    assert page.locator(".tap4 tbody tr").count() == 1
    assert _totals(watcher) == ["0", "65", "10", "24"]

    # Correct round 1 on the first phone; the second phone follows.
    page.locator("button[data-round='1']").tap()
    page.locator("[aria-label='Cat total']").fill("12")
    page.locator("[data-t4=save]").tap()
    watcher.wait_for_function(
        "() => Array.from(document.querySelectorAll('.tap4 tr[data-t4=totals] td')).map(t => t.textContent).join(',') === '0,65,12,24'"
    )

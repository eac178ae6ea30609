"""Small things players hit on their phones, in Debian's Chromium at 390 px: Tap 4's sheet (a corrected
round marked, "To 150" never negative, standings numbered once, the round column kept in place when
the names scroll sideways), toasts that do not pile up, and refusals the table page sees coming."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import LiveServer, chromium, enter_pin, phone, serve_table  # noqa: F401

from companion.games.tap4 import Tap4

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAMES = ("Annabelle", "Bartholomew", "Cassandra", "Dominique", "Evangeline", "Florentino")


@pytest.fixture
def sheet_server(tmp_path: Path) -> Iterator[LiveServer]:
    """Six long names; Tap 4 to 30 won after two rounds, round 1 corrected."""
    with serve_table(tmp_path / "data", games={"tap4": Tap4}) as server:
        ids = [server.service.submit("add_player", {"name": n})["events"][0]["data"]["id"] for n in NAMES]
        server.service.submit("start_game", {"kind": "tap4", "settings": {"target": 30}})

        def entries(out: int, points: int) -> list[dict[str, Any]]:
            return [{"player": p, "out": True} if p == out else {"player": p, "total": points + i} for i, p in enumerate(ids)]

        server.service.submit("enter_round", {"entries": entries(ids[0], 5)})
        server.service.submit("edit_round", {"round": 1, "entries": entries(ids[0], 6)})
        server.service.submit("enter_round", {"entries": entries(ids[1], 30)})  # everyone else passes 30
        yield server


def test_the_tap4_sheet_on_a_phone(sheet_server: LiveServer, phone: Any) -> None:  # noqa: F811
    page = phone.new_page()
    enter_pin(page, sheet_server.url)
    sheet = page.locator("#game .tap4 .t4-sheet")
    sheet.wait_for()
    assert page.locator("#game tr[data-round='1'] [data-t4=edited]").inner_text().lower() == "corrected"
    assert page.locator("#game tr[data-round='2'] [data-t4=edited]").count() == 0
    to_target = page.locator("#game tr[data-t4=to-target] td").all_inner_texts()
    assert to_target and all(int(t) >= 0 for t in to_target) and "0" in to_target
    standings = page.locator("#game [data-t4=standings] li")
    assert standings.first.inner_text() == "Bartholomew – 7"  # the list's own number is the place; no "#1" inside
    assert "#" not in " ".join(standings.all_inner_texts())
    # One undo: the sheet's own, not a second one from the table page beside it.
    assert page.locator("#game [data-t4=undo]").is_visible() and not page.locator("#undo").is_visible()
    # Scrolled sideways, the round column stays where it was.
    wrap = page.locator("#game .tap4 .t4-wrap").first
    before = page.locator("#game tr[data-round='2'] th").bounding_box()["x"]
    wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    assert wrap.evaluate("w => w.scrollLeft") > 50  # six long names do scroll
    assert page.locator("#game tr[data-round='2'] th").bounding_box()["x"] == pytest.approx(before, abs=1)


def test_toasts_do_not_pile_up_and_a_refused_removal_is_said_before_any_confirm(sheet_server: LiveServer, phone: Any) -> None:  # noqa: F811
    server = sheet_server
    server.service.submit("start_game", {"kind": "tap4"})  # a new game: every player is in it
    page = phone.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    enter_pin(page, server.url)
    page.locator("li.player").first.wait_for()
    page.locator("button[aria-label='remove Annabelle']").click()
    page.locator(".toast", has_text="Annabelle is playing Tap 4; end the game first").wait_for()
    assert dialogs == []
    for _ in range(5):
        page.evaluate("() => Tabletop.api.command('update_player', {player: 1, name: 'Bartholomew'}).catch(() => {})")
    page.locator(".toast", has_text="already").first.wait_for()
    assert page.locator(".toast").count() <= 3
    assert page.locator(".toast", has_text="already").count() == 1  # the same message renews, not repeats
    # Five different refusals: only the newest three stay.
    for ref in ("Nobody1", "Nobody2", "Nobody3", "Nobody4", "Nobody5"):
        page.evaluate("r => Tabletop.api.command('update_player', {player: r, name: 'X'}).catch(() => {})", ref)
    page.locator(".toast", has_text="'Nobody5'").wait_for()
    texts = page.locator(".toast").all_inner_texts()
    assert len(texts) == 3 and ["'Nobody3'" in texts[0], "'Nobody4'" in texts[1], "'Nobody5'" in texts[2]] == [True] * 3, texts
    assert errors == []


def test_the_callers_card_buttons_stay_put_when_a_verdict_arrives(tmp_path: Path, phone: Any) -> None:  # noqa: F811
    from companion.games.taco import TacoGame

    with serve_table(tmp_path / "data", games={"taco": TacoGame}) as server:
        for pad, name in ((1, "Ann"), (2, "Bob")):
            server.service.submit("add_player", {"name": name, "pad": pad})
        server.service.submit("start_game", {"kind": "taco", "settings": {"mode": "physical", "settle_ms": 200}})
        page = phone.new_page()
        enter_pin(page, server.url)
        button = page.locator("[data-taco=caller] button[data-card=cake]")
        button.wait_for()
        before = button.bounding_box()
        page.locator("[data-taco=caller] button[data-card=taco]").tap()  # a card called in, then both slap
        page.wait_for_function("() => document.querySelector('[data-taco=verdict]') !== null")
        server.service.source.inject(1)
        server.service.source.inject(2)
        page.locator("[data-taco=verdict] .tc-row").first.wait_for()
        after = page.locator("[data-taco=caller] button[data-card=cake]").bounding_box()
        assert after["y"] == pytest.approx(before["y"], abs=1) and after["x"] == pytest.approx(before["x"], abs=1)


def test_a_second_phone_typing_the_same_round_is_told_it_was_superseded(tmp_path: Path, phone: Any, chromium: Any) -> None:  # noqa: F811
    from helpers.browser import PHONE, browser_context

    with serve_table(tmp_path / "data", games={"tap4": Tap4}) as server:
        for name in ("Ann", "Bob", "Cat"):
            server.service.submit("add_player", {"name": name})
        server.service.submit("start_game", {"kind": "tap4"})
        first = phone.new_page()
        enter_pin(first, server.url)
        with browser_context(chromium, **PHONE) as other:
            second = other.new_page()
            enter_pin(second, server.url)
            for page in (first, second):
                page.locator(".tap4 [data-t4=entry]").wait_for()
            second.locator("[aria-label='Bob total']").fill("9")  # half-typed on the second phone
            first.locator(".tap4 .t4-player[data-player='1'] button[data-mode=out]").tap()
            first.locator("[aria-label='Bob total']").fill("12")
            first.locator("[aria-label='Cat total']").fill("7")
            first.locator("[data-t4=save]").tap()
            second.locator(".toast", has_text="Round 1 was saved from another phone first").wait_for()
            assert first.locator(".toast", has_text="another phone").count() == 0  # the phone that saved it is not told so
            assert first.locator(".toast", has_text="Round saved").count() == 1


def test_taco_statistics_fit_a_390_px_phone(tmp_path: Path, phone: Any) -> None:  # noqa: F811
    from helpers.busy_tables import busy_table

    with busy_table(tmp_path / "data", "taco") as server:  # six long names, one verdict with times
        page = phone.new_page()
        page.goto(server.url + "/")
        page.locator("#game details:has([data-taco=stats]) summary").click()
        page.locator("#game [data-taco=stats] table").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_tapeworm_log_numbers_have_room_on_a_phone(tmp_path: Path, phone: Any) -> None:  # noqa: F811
    from helpers.busy_tables import busy_table

    with busy_table(tmp_path / "data", "tapeworm") as server:  # a log of several dozen lines
        page = phone.new_page()
        page.goto(server.url + "/")
        log = page.locator("#game ol.tw-log")
        log.wait_for()
        # The widest number ("38.") in the list's own font must fit in its left padding (the list
        # scrolls, so a number past the padding is cut off).
        room, needed = log.evaluate("""ol => {
          const style = getComputedStyle(ol);
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.font = style.fontSize + ' ' + style.fontFamily;
          return [parseFloat(style.paddingLeft), ctx.measureText(ol.children.length + '. ').width];
        }""")
        assert log.locator("li").count() >= 30
        assert needed <= room

"""The table screen is a TV: at 1920x1080, 1280x800 and 1024x600 every game in its busiest state
shows what matters without scrolling, in Debian's Chromium.

"What matters" per game is a list of elements that must be wholly inside the window
and not covered or clipped (the element itself is what the window shows at its
centre): a page that hid them behind ``overflow: hidden`` would fail here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.browser import browser_context, chromium  # noqa: F401

from helpers.busy_tables import SCREEN_SIZES, busy_table, settled_overflow

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Per game: selectors of what a player across the table must see, every match.
MUST_SEE = {
    "taco": [".tc-card", ".tc-pile", ".tc-verdict .tc-reason", ".tc-row"],
    "tap4": ["[data-t4=status]", "tr[data-t4=totals] td", "tr[data-t4=places] td", ".t4-sheet tbody tr[data-round]:last-child",
             ".t4-chart img"],
    "tactile": [".tt-board", ".tt-player", ".tt-slot"],
    "tapeworm": [".tw-turn", "ul.tw-hands li", ".tw-counts"],
    # A game just ended: its results and the check-in for the next one.
    "results": [".results-headline", ".podium-step", ".results-standings tbody tr", ".results-highlights li", "#checkin li"],
    # A game won but still the running one: its results take the screen.
    "won": [".results-headline", ".podium-step", ".results-standings tbody tr"],
}
#: Where to look: the game's own screen, or the whole page for the results.
SCOPE = {"results": "main", "won": "main"}

IN_VIEW = """sel => [...document.querySelectorAll(sel)].map(e => {
  const r = e.getBoundingClientRect();
  const inside = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return inside && hit !== null && (hit === e || e.contains(hit)) ? null : sel + ' ' + JSON.stringify([r.top, r.bottom, r.left, r.right].map(Math.round));
}).filter(x => x !== null)"""


@pytest.mark.parametrize("kind", list(MUST_SEE))
def test_every_game_fits_the_screen_at_each_tv_size(kind: str, chromium: Any, tmp_path: Path) -> None:  # noqa: F811
    with busy_table(tmp_path / "data", kind) as server:
        for width, height in SCREEN_SIZES:
            with browser_context(chromium, viewport={"width": width, "height": height}) as context:
                page = context.new_page()
                page.goto(server.url + "/screen")
                scope = SCOPE.get(kind, "#screen-game")
                page.locator(f"{scope} {MUST_SEE[kind][0]}").first.wait_for()
                page.wait_for_function("() => [...document.images].every(i => i.complete)")
                assert settled_overflow(page) == 0, f"{kind} at {width}x{height} scrolls"
                for selector in MUST_SEE[kind]:
                    assert page.locator(f"{scope} {selector}").count() > 0, selector
                    assert page.evaluate(IN_VIEW, f"{scope} {selector}") == [], f"{kind} at {width}x{height}: out of view"
                if kind == "tap4":
                    # The latest round is on screen, the oldest fold with a note that says so.
                    assert page.locator(".t4-sheet tbody tr[data-round]:last-child").get_attribute("data-round") == "11"
                    folded = page.locator("tr[data-t4=folded]")
                    if height < 1080:
                        assert folded.inner_text().startswith("Rounds 1–")


def test_tap4_refolds_when_its_layout_changes_without_a_redraw(chromium: Any, tmp_path: Path) -> None:  # noqa: F811
    """A late change of layout that is no redraw of the game (a picture or a font arriving, a style
    sheet loaded late) still refolds Tap 4's rounds: the page is brought back into the window."""
    with busy_table(tmp_path / "data", "tap4") as server:
        with browser_context(chromium, viewport={"width": 1024, "height": 600}) as context:
            page = context.new_page()
            page.goto(server.url + "/screen")
            page.locator("#screen-game tr[data-t4=folded]").wait_for()
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            assert settled_overflow(page) == 0
            before = page.locator(".t4-sheet tbody tr[data-round][data-folded]").count()
            # Taller rows, set from outside the game's own elements: no mutation inside it.
            page.add_style_tag(content=".screen-game .tap4 .t4-sheet tbody tr[data-round] td { padding-block: 10px; }")
            assert settled_overflow(page) == 0, "the page scrolls after its rows grew"
            assert page.locator(".t4-sheet tbody tr[data-round][data-folded]").count() > before

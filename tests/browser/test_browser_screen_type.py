"""The table screen on a phone and a portrait tablet: the lines read from a chair are big, in Debian's Chromium.

The issue: the gesture instruction ("Scratch your head…") was about 16 px (14.4 px
measured) and the team and turn lines small. Here a monkey is due in Taco (its
gesture on the screen), then a verdict (its headline "Dan takes 3 cards" is the
verdict's biggest line, the reason below it smaller but still large), then TacTile
in Team Battle (its team and turn line). Each size is measured in CSS pixels at a
390x844 phone and an 820x1180 portrait tablet, and neither page scrolls sideways.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from helpers.browser import browser_context, chromium, serve_table  # noqa: F401
from helpers.tactile import start_entered_game

from companion.games import load_games

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: (name, viewport, least gesture/turn-line size, least verdict headline size), in CSS px.
SIZES = [("phone", {"width": 390, "height": 844}, 20, 28), ("tablet", {"width": 820, "height": 1180}, 36, 50)]

FONT_PX = "sel => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize)"
SIDEWAYS = "document.documentElement.scrollWidth - innerWidth"


def wait_for(service: Any, done: Any, what: str) -> None:
    """Read the table's updates until ``done(state)``."""
    sub = service.subscribe()
    try:
        state = service.snapshot()[1]
        while not done(state):
            update = sub.get(timeout=30)
            assert update is not None, f"no {what}"
            state = update.state
    finally:
        sub.close()


def test_gesture_verdict_headline_and_turn_line_are_sized_for_the_table(tmp_path: Path, chromium: Any) -> None:  # noqa: F811
    with serve_table(tmp_path / "data", games=dict(load_games())) as server, ExitStack() as contexts:
        service = server.service
        for pad, name in enumerate(("Ann", "Bob", "Cat", "Dan"), start=1):
            service.submit("add_player", {"name": name, "pad": pad})
        service.submit("start_game", {"kind": "taco", "settings": {"deck": {"monkey": 64}, "lead_in_ms": 0,
                                                                   "after_verdict_ms": 60_000}})
        wait_for(service, lambda s: (s["game"]["view"]["window"] or {}).get("kind") == "due", "due monkey")
        pages = []
        for name, viewport, least, _ in SIZES:
            page = contexts.enter_context(browser_context(chromium, viewport=viewport)).new_page()
            pages.append((name, page, least))
            page.goto(server.url + "/screen")
            gesture = page.locator(".taco [data-taco=gesture]")
            gesture.wait_for()
            assert gesture.inner_text().startswith("Scratch your head")
            assert page.evaluate(FONT_PX, ".taco [data-taco=gesture]") >= least, name
        card_at = service.snapshot()[1]["game"]["view"]["top"]["at_us"]
        for pad, ms in ((1, 300), (2, 350), (3, 420)):  # Dan never slaps
            service.source.inject(pad, at_us=card_at + ms * 1000)
        wait_for(service, lambda s: s["game"]["view"]["verdict"] is not None, "verdict")
        for (name, page, _), (_, _, _, headline) in zip(pages, SIZES):
            page.locator("#verdict-flash").wait_for(state="hidden", timeout=10_000)
            taker = page.locator(".taco [data-taco=verdict] [data-taco=taker]")
            taker.wait_for()
            assert taker.inner_text().startswith("Dan takes")
            taker_px = page.evaluate(FONT_PX, ".taco [data-taco=verdict] [data-taco=taker]")
            reason_px = page.evaluate(FONT_PX, ".taco [data-taco=verdict] [data-taco=reason]")
            assert taker_px >= headline, name
            assert 24 <= reason_px < taker_px, name  # the reason below the headline, smaller
            assert page.evaluate(SIDEWAYS) <= 0, f"the {name} screen scrolls sideways"

        service.submit("end_game", {})
        start_entered_game(service.submit)
        for name, page, least in pages:
            status = page.locator(".tactile [data-tt=status]")
            status.filter(has_text="Team · turn 1").wait_for()
            assert page.evaluate(FONT_PX, ".tactile [data-tt=status]") >= least, name
            assert page.evaluate(SIDEWAYS) <= 0, f"the {name} screen scrolls sideways"

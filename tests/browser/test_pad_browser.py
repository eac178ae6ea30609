"""Debian's Chromium drives /pad on two phone contexts, each through its own loopback delay/loss proxy.

Ann's phone touches first, Bo's 300 ms later; Ann's proxy holds her hit
back 700 ms more, so it reaches the table after Bo's. The table judges by
the stamps the pages took at the touch, so Ann is first and Bo (last)
takes the pile: network delay decides nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.games import load_games
from web.netproxy import Delay, DelayProxy, LossBursts

from helpers.browser import PHONE, browser_context, chromium, expect, serve_table, wait_until  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Any]:
    with serve_table(tmp_path / "data", games=dict(load_games())) as server:
        for name, pad in (("Ann", 1), ("Bo", 2)):
            server.service.submit("add_player", {"name": name, "pad": pad})
        server.service.submit("start_game", {"kind": "taco", "settings": {"mode": "physical", "settle_ms": 0}})
        yield server


def open_pad(context: Any, proxy: DelayProxy, code: str) -> Any:
    """The /pad page through ``proxy``, the pad taken with its code as a player types it."""
    page = context.new_page()
    page.on("pageerror", lambda exc: pytest.fail(f"/pad raised {exc}"))
    page.goto(f"http://127.0.0.1:{proxy.port}/pad")
    page.locator('[data-pad="claim"] input[name="code"]').fill(code)
    page.locator('[data-pad="claim"] button').click()
    return page


def test_the_earlier_touch_wins_when_the_network_reverses_the_arrivals(chromium: Any, table: Any) -> None:  # noqa: F811
    service = table.service
    codes = service.phone_pads.codes()
    weather = {"up": Delay(5, 80), "down": Delay(5, 80, 2.0),
               "loss": LossBursts(p_enter=0.02, p_leave=0.4, stall_ms=200)}
    with DelayProxy(table.port, seed=1, **weather) as ann_net, DelayProxy(table.port, seed=2, **weather) as bo_net, \
            browser_context(chromium, **PHONE) as ann_phone, browser_context(chromium, **PHONE) as bo_phone:
        ann = open_pad(ann_phone, ann_net, codes[1])
        bo = open_pad(bo_phone, bo_net, codes[2])
        for page, name in ((ann, "Ann"), (bo, "Bo")):
            expect()(page.locator('[data-pad="who"]')).to_contain_text(f"{name} · pad")
            expect()(page.locator('[data-pad="sync"]')).to_contain_text("clock ±", timeout=15_000)
            expect()(page.locator('[data-pad="latency"]')).to_contain_text("not calibrated")
        time.sleep(2.0)  # the pages' first fast rounds of sync (20 a second)
        ann_net.set_extra_up_ms(700)  # from now on Ann's requests reach the table 0.7 s late
        ann_box, bo_box = ann.locator("#pp-area").bounding_box(), bo.locator("#pp-area").bounding_box()
        started = time.monotonic()
        ann.mouse.click(ann_box["x"] + ann_box["width"] / 2, ann_box["y"] + ann_box["height"] / 2)
        time.sleep(0.3)
        bo.mouse.click(bo_box["x"] + bo_box["width"] / 2, bo_box["y"] + bo_box["height"] / 2)
        between_ms = (time.monotonic() - started) * 1000  # the touches were at most this far apart

        def verdict() -> Any:
            game = service.snapshot()[1]["game"]
            return game["view"]["verdict"]

        wait_until(lambda: verdict() is not None, "the verdict", timeout=20)
        v = verdict()
        hits = service.snapshot()[1]["recent_hits"]
        # Bo's hit reached the table first ...
        assert [h["pad"] for h in hits[-2:]] == [2, 1], hits
        # ... but Ann touched first: Bo is last and takes the pile, clear of both phones' uncertainty.
        assert [e["player"] for e in v["order"]] == [1, 2], v["reason"]
        assert v["taker"] == 2 and v["photo_finish"] == []
        assert 300 - 120 < v["order"][1]["margin_ms"] < between_ms + 120  # give or take the phones' uncertainty
        assert "uncertain by at most" in v["reason"]
        expect()(ann.locator('[data-pad="message"]')).to_have_text("registered")
        expect()(bo.locator('[data-pad="message"]')).to_have_text("registered")


def test_a_phone_calibrates_by_tapping_along_and_keeps_it(chromium: Any, table: Any) -> None:  # noqa: F811
    with browser_context(chromium, **PHONE) as context:
        page = context.new_page()
        page.on("pageerror", lambda exc: pytest.fail(f"/pad raised {exc}"))
        page.goto(f"{table.url}/pad")
        expect()(page.locator('[data-pad="latency"]')).to_contain_text("not calibrated")
        page.locator('[data-pad="calibrate"]').click()
        area = page.locator("#pp-area").bounding_box()
        # A tapper who answers each flash as it comes (the page counts its beats in data-calibration-beat):
        # each tap lands one reaction after its beat, whatever else the machine is doing.
        for beat in range(1, 21):
            page.wait_for_function(f"Number(document.getElementById('phone-pad').dataset.calibrationBeat) >= {beat}",
                                   polling="raf", timeout=10_000)
            page.mouse.click(area["x"] + area["width"] / 2, area["y"] + area["height"] / 2)
        expect()(page.locator('[data-pad="message"]')).to_contain_text("calibrated:", timeout=10_000)
        expect()(page.locator('[data-pad="latency"]')).to_contain_text("touch latency")
        tag = page.locator('[data-pad="tag"]').inner_text()
        latency = table.service.phone_pads.latency_of(tag)
        assert latency.calibrated and latency.taps >= 8
        page.reload()  # kept for this phone, not for the page load
        expect()(page.locator('[data-pad="latency"]')).to_contain_text("touch latency")


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 844, "height": 390}],
                         ids=["portrait", "landscape"])
def test_the_slap_area_fills_the_screen_either_way_round(chromium: Any, table: Any, viewport: dict[str, int]) -> None:  # noqa: F811
    with browser_context(chromium, **{**PHONE, "viewport": viewport}) as context:
        page = context.new_page()
        page.goto(f"{table.url}/pad")
        box = page.locator("#pp-area").bounding_box()
        assert box["width"] == viewport["width"]
        assert box["height"] > viewport["height"] * 0.4
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

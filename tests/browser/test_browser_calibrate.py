"""Debian's Chromium on a phone viewport calibrating a pad box (the PadBoxEmulator on a pty)
through a real server: the meter moves when the box is hit, a slider reaches the box."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.service import TableService
from hardware import protocol as p
from hardware.emulator import PadBoxEmulator

from helpers.browser import TEST_PIN, LiveServer, chromium, enter_pin, forget_phone_from_another_tab, make_app, phone, start_live_server, wait_until  # noqa: F401
from test_browser_trust import CONTROL_SELECTOR, VISIBLE_CONTROLS
from helpers.calibration import box_service, rung_down, sim_service  # noqa: F401
from helpers.padbox import emu, private_emulator_dir  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def expect() -> Any:
    from playwright.sync_api import expect as _expect

    return _expect


@pytest.fixture
def box_server(tmp_path: Path, box_service: TableService) -> Iterator[LiveServer]:  # noqa: F811
    """The app on a real TableService reading a SerialPadBox on the emulator, under waitress."""
    server = start_live_server(make_app(box_service, tmp_path / "data", SSE_POLL_S=0.1), box_service, threads=8)
    try:
        yield server
    finally:
        server.stop()


def test_meter_moves_and_slider_reaches_the_box(phone: Any, box_server: LiveServer, emu: PadBoxEmulator) -> None:
    page = phone.new_page()
    enter_pin(page, box_server.url, "/calibrate")
    expect()(page.locator("#trust")).to_contain_text("Trusted phone")
    expect()(page.locator(".cal-pad")).to_have_count(4)
    expect()(page.locator("#conn")).to_have_text("live")
    expect()(page.locator("#out-slap-2")).to_have_text(str(p.PARAMS["slap"][2]))

    # The meter: a slap on pad 2 shows as its latest peak, then as its last peak.
    emu.strike(2, 812)
    expect()(page.locator("#last-peak-2")).to_have_text("last peak 812 (slap)")
    expect()(page.locator("#last-peak-1")).to_have_text("no hit yet")
    emu.strike(3, 100)
    expect()(page.locator("#last-peak-3")).to_have_text("last peak 100 (touch)")

    # A slider takes effect on the box at once.
    page.locator("#th-slap-2").fill("420")
    wait_until(lambda: emu.settings[2]["slap"] == 420, "the slap threshold to reach the box")
    assert emu.eeprom[2]["slap"] == p.PARAMS["slap"][2]
    emu.strike(2, 400)  # now below the slap threshold: a touch
    expect()(page.locator("#last-peak-2")).to_have_text("last peak 400 (touch)")

    page.click("#save")
    wait_until(lambda: emu.eeprom[2]["slap"] == 420, "the settings to be saved")


def test_a_watcher_sees_the_meters_but_no_controls_until_the_pin(
        phone: Any, box_server: LiveServer, emu: PadBoxEmulator) -> None:
    page = phone.new_page()
    page.goto(box_server.url + "/calibrate")
    expect()(page.locator(".cal-pad")).to_have_count(4)
    expect()(page.locator("#conn")).to_have_text("live")
    # The meters and last peaks are there to watch...
    expect()(page.locator("#meter-2")).to_be_visible()
    emu.strike(2, 812)
    expect()(page.locator("#last-peak-2")).to_have_text("last peak 812 (slap)")
    # ...but nothing that changes the box, only the one call to action.
    assert page.evaluate(VISIBLE_CONTROLS, CONTROL_SELECTOR) == []
    expect()(page.locator("#th-slap-2")).to_be_hidden()
    expect()(page.locator("#save")).to_be_hidden()
    expect()(page.locator("#check-start")).to_be_hidden()
    expect()(page.locator("#trust")).to_be_hidden()
    expect()(page.locator("#pin-cta")).to_be_visible()
    expect()(page.locator("#pin-link")).to_have_text("Enter the PIN to change things")

    page.click("#pin-link")
    page.fill("#pin", TEST_PIN)
    page.click(".pin-form button[type=submit]")
    page.wait_for_url("**/calibrate")
    expect()(page.locator("#th-slap-2")).to_be_visible()
    expect()(page.locator("#th-touch-4")).to_be_visible()
    expect()(page.locator("#save")).to_be_visible()
    expect()(page.locator("#check-start")).to_be_visible()
    expect()(page.locator("#pin-cta")).to_be_hidden()
    expect()(page.locator("#trust")).to_contain_text("Trusted phone")

    # Trust running out (another tab forgets the phone): the next threshold change is refused
    # and the page goes back to watching, the box keeps its threshold. The page learns that its
    # trust ended either when that change is refused, or first from its own session check (app.js
    # asks /api/session when it loads, and that may be answered only after the forget); then it
    # already hides the sliders. Which comes first is a race, so the change goes through the page's
    # own client (what a slider's move sends), which sends it either way.
    forget_phone_from_another_tab(phone, box_server.url)
    with page.expect_response(lambda r: r.url.endswith("/api/calibration/thresholds")) as answer:
        page.evaluate("() => { Tabletop.api.post('/api/calibration/thresholds', {pad: 2, slap: 420}).catch(() => {}); }")
    assert answer.value.status == 403
    assert answer.value.json()["error"] == "this needs the table PIN: open /pin, or POST it to /api/pin"
    # Either way a phone that was trusted is asked for the PIN in place, in words for players (pin-prompt.js).
    expect()(page.locator("#pin-again")).to_contain_text("needs the table PIN again")
    page.click("#pin-again-later")  # "Just watch"
    expect()(page.locator("#pin-cta")).to_be_visible()
    expect()(page.locator("#th-slap-2")).to_be_hidden()
    expect()(page.locator("#check")).to_be_hidden()
    assert page.evaluate(VISIBLE_CONTROLS, CONTROL_SELECTOR) == []
    assert emu.settings[2]["slap"] == p.PARAMS["slap"][2]


def test_guided_check_in_the_browser(phone: Any, box_server: LiveServer, emu: PadBoxEmulator) -> None:
    page = phone.new_page()
    enter_pin(page, box_server.url, "/calibrate")
    expect()(page.locator("#conn")).to_have_text("live")

    page.select_option("#check-pad", "3")
    page.click("#check-start")
    expect()(page.locator("#check-step")).to_have_text("Slap pad 3 hard, 3 times.")
    for n, peak in enumerate((800, 700, 900), start=1):
        emu.strike(3, peak)
        emu.strike(4, peak // 4)
        expect()(page.locator("#check-progress")).to_have_attribute("data-slaps", str(n))
        wait_until(lambda: rung_down(box_server.service.calibration.levels()), "pad 3 to ring down")
    page.click("#check-next")
    expect()(page.locator("#check-step")).to_have_text("Now touch pad 3 lightly, 3 times.")
    for n, peak in enumerate((100, 120, 90), start=1):
        emu.strike(3, peak)
        expect()(page.locator("#check-progress")).to_have_attribute("data-touches", str(n))
        wait_until(lambda: rung_down(box_server.service.calibration.levels()), "pad 3 to ring down")
    page.click("#check-finish")
    expect()(page.locator("#check-suggestion")).to_have_text("Suggested: slap 290, touch 42.")
    expect()(page.locator('#check-xtalk li[data-pad="4"]')).to_contain_text("25%")
    page.click("#check-apply")
    wait_until(lambda: emu.settings[3]["slap"] == 290 and emu.settings[3]["touch"] == 42, "the suggestion to reach the box")
    expect()(page.locator("#out-slap-3")).to_have_text("290")


def test_simulated_pads_say_there_are_no_levels(phone: Any, tmp_path: Path, sim_service: TableService) -> None:  # noqa: F811
    server = start_live_server(make_app(sim_service, tmp_path / "data"), sim_service, threads=4)
    try:
        page = phone.new_page()
        page.goto(server.url + "/")
        page.click("#calibrate-link")
        expect()(page.locator("#no-levels")).to_contain_text("The pads are simulated, so there are no levels to show")
        expect()(page.locator("#no-levels")).to_contain_text("--pads serial")
        expect()(page.locator(".cal-pad")).to_have_count(0)
        expect()(page.locator("#conn")).to_have_text("no levels")
    finally:
        server.stop()

"""The table screen in Debian's Chromium shows the join QR code, the address and the PIN hint."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.browser import TEST_PIN, LiveServer, chromium, live_server, phone, table_service  # noqa: F401

from web.join import PIN_ON_SCREEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_screen_shows_the_join_qr_code(phone: Any, live_server: LiveServer) -> None:
    from playwright.sync_api import expect

    page = phone.new_page()
    page.goto(live_server.url + "/screen")
    qr = page.locator("#join-qr")
    expect(qr).to_be_visible()
    # The image really loaded and is a square QR code (an SVG from /join.svg).
    page.wait_for_function("() => { const i = document.getElementById('join-qr'); return i.complete && i.naturalWidth > 0; }")
    size = page.evaluate("() => { const i = document.getElementById('join-qr'); return [i.naturalWidth, i.naturalHeight]; }")
    assert size[0] == size[1] and size[0] > 100
    url = page.locator("#join-url").inner_text()
    assert url.startswith("http://") and url.endswith(f":{live_server.port}/")
    assert page.request.get(live_server.url + "/api/join").json()["url"] == url
    expect(page.locator("#join-pin")).to_have_text(PIN_ON_SCREEN)
    expect(page.locator("#screen-pin")).to_have_text(TEST_PIN)

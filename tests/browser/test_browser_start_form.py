"""The start form is drawn from the settings each game declares (games_available[].setting_specs):
labels, units and ranges come from Python, so the browser shows the same limits the game checks."""

from __future__ import annotations

from typing import Any

import pytest

from companion.games import load_games
from helpers.browser import LiveServer, chromium, expect, phone, trusted_table_page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _trusted_table(phone: Any, server: LiveServer) -> Any:
    return trusted_table_page(phone, server.url)


@pytest.mark.parametrize("kind", sorted(load_games()))
def test_every_number_input_carries_the_declared_label_unit_and_range(games_server: LiveServer, phone: Any, kind: str) -> None:
    page = _trusted_table(phone, games_server)
    page.select_option("#start-kind", kind)
    for spec in load_games()[kind].setting_specs:
        if spec.type != "number":
            continue
        box = page.locator(f"#start-settings input[data-key={spec.key}]")
        expect()(box).to_have_attribute("min", str(spec.min))
        expect()(box).to_have_attribute("max", str(spec.max))
        label = page.locator("#start-settings label.setting", has=page.locator(f"input[data-key={spec.key}]"))
        expect()(label.locator(".setting-label")).to_contain_text(spec.label)
        if spec.unit:
            expect()(label.locator(".unit")).to_have_text(spec.unit)


def test_a_folded_setting_is_under_advanced_and_a_choice_lists_its_labels(games_server: LiveServer, phone: Any) -> None:
    page = _trusted_table(phone, games_server)
    page.select_option("#start-kind", "taco")
    expect()(page.locator("#start-settings details.advanced input[data-key=timeout_ms]")).to_be_hidden()
    expect()(page.locator("#start-settings > label input[data-key=tempo_ms]")).to_be_visible()
    options = page.locator("#start-settings select[data-key=mode] option")
    expect()(options).to_have_text(["digital cards", "real cards"])

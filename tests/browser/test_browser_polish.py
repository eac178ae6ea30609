"""What people at the table see, in Debian's Chromium on a 390 px phone: readable names, ready
new players, a start form without raw JSON or ``null`` that starts every game with its
defaults, and no page that scrolls sideways (also with a long name and a game running)."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.browser import LiveServer, chromium, expect, phone, trusted_table_page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LONG_NAME = "Bartholomew-Maximilian"
KINDS = ("taco", "tap4", "tactile", "tapeworm")


def _trusted_table(phone: Any, server: LiveServer) -> Any:
    return trusted_table_page(phone, server.url)


def _sticking_out(page: Any) -> list[str]:
    """What sticks out past the right edge: names the culprit when the width check fails."""
    return list(page.evaluate("""() => { const w = document.documentElement.clientWidth; const out = [];
      document.querySelectorAll('body *').forEach(e => { const r = e.getBoundingClientRect();
        if (r.right > w + 1 && out.length < 6) out.push(e.tagName + '.' + e.className + ' ' + Math.round(r.right)); });
      return out; }"""))


def _scroll_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_new_players_get_free_pads_distinct_colours_and_readable_names(phone: Any, games_server: LiveServer) -> None:
    page = _trusted_table(phone, games_server)
    expect()(page.locator("#players .empty-note")).to_be_visible()
    for index, name in enumerate(("Ann", LONG_NAME, "Cat")):
        page.fill("#new-name", name)  # nothing else chosen: "Add" alone must seat a ready player
        page.click("#add-player button[type=submit]")
        expect()(page.locator(f"li.player >> nth={index} >> .player-name")).to_have_value(name)
    players = games_server.service.snapshot()[1]["players"]
    assert [p["pad"] for p in players] == [1, 2, 3]
    assert len({p["colour"].lower() for p in players}) == 3
    assert page.locator("#new-pad").input_value() == "4"

    for name in ("Ann", LONG_NAME):
        field = page.locator(f'li.player .player-name[value="{name}"]')
        box = field.bounding_box()
        assert box is not None and box["width"] >= 200, (name, box)  # a real name field, not a sliver
        # The whole name fits in the field: nothing is cut off.
        assert field.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), name
    assert _scroll_width(page) <= 390


def test_start_form_is_readable_and_starts_every_game_with_its_defaults(phone: Any, games_server: LiveServer) -> None:
    service = games_server.service
    for pad, name in enumerate(("Ann", "Bob", "Cat", "Dan"), start=1):
        service.submit("add_player", {"name": name, "pad": pad})
    page = _trusted_table(phone, games_server)
    for kind in KINDS:
        page.select_option("#start-kind", kind)
        settings = page.locator("#start-settings")
        text = settings.inner_text()
        values = settings.locator("input, select").evaluate_all("es => es.map(e => e.value)")
        assert "null" not in text and "{" not in text, (kind, text)
        assert not [v for v in values if v == "null" or v.startswith(("{", "["))], (kind, values)
        # Every numeric default is a number box that fits inside the card.
        numbers = settings.locator("input[data-type=number], input[data-type=counts]")
        assert numbers.count() > 0, kind
        assert all(t == "number" for t in numbers.evaluate_all("es => es.map(e => e.type)")), kind
        right = settings.evaluate("e => e.getBoundingClientRect().right")
        assert max(settings.locator("input, select").evaluate_all(
            "es => es.map(e => e.getBoundingClientRect().right)")) <= right + 1, kind
        assert _scroll_width(page) <= 390, kind

        page.click("#start-button")
        expect()(page.locator("#game-title")).not_to_have_text("No game running")
        game = service.snapshot()[1]["game"]
        assert game is not None and game["kind"] == kind
        defaults = next(g["settings"] for g in service.snapshot()[1]["games_available"] if g["kind"] == kind)
        assert game["settings"] == defaults, kind  # the form sent the defaults back unchanged
        expect()(page.locator("#new-game")).to_be_hidden()  # a second game would be refused anyway
        service.submit("end_game", {})
        expect()(page.locator("#new-game")).to_be_visible()

    # Complex settings (the taco deck) are folded away, one number per card kind.
    page.select_option("#start-kind", "taco")
    deck = page.locator("#start-settings details.advanced fieldset[data-key=deck]")
    expect()(deck).to_be_hidden()
    page.click("#start-settings details.advanced summary")
    expect()(deck.locator("input[data-sub=taco]")).to_have_value("11")

    # What was typed survives a live update from another phone (a new player redraws the form).
    page.fill("#start-settings input[data-key=tempo_ms]", "900")
    page.fill("#start-settings input[data-sub=monkey]", "4")
    service.submit("add_player", {"name": "Eve"})
    expect()(page.locator("#start-players")).to_contain_text("Eve")
    expect()(page.locator("#start-settings input[data-key=tempo_ms]")).to_have_value("900")
    expect()(deck.locator("input[data-sub=monkey]")).to_have_value("4")
    page.locator("#start-players label", has_text="Eve").locator("input").uncheck()
    page.click("#start-button")
    expect()(page.locator("#game-title")).not_to_have_text("No game running")
    game = service.snapshot()[1]["game"]
    assert game["settings"]["tempo_ms"] == 900 and game["settings"]["deck"]["monkey"] == 4
    assert game["settings"]["cards_each"] is None  # the empty "auto" box is sent as null


@pytest.mark.parametrize("kind", KINDS)
def test_no_page_scrolls_sideways_on_a_phone_with_a_long_name_in_a_game(
        phone: Any, games_server: LiveServer, kind: str) -> None:
    service = games_server.service
    for pad, name in enumerate(("Ann", LONG_NAME, "Cat", "Dan"), start=1):
        service.submit("add_player", {"name": name, "pad": pad})
    service.submit("start_game", {"kind": kind})
    service.source.inject(2)
    page = phone.new_page()
    for path in ("/", "/screen", "/pads", "/calibrate", "/pin"):
        page.goto(games_server.url + path)
        if path in ("/", "/screen", "/pads"):
            expect()(page.locator("#conn")).to_have_text("live")
        if path in ("/", "/screen"):
            page.locator(f"[data-kind={kind}] *").first.wait_for()
        assert _scroll_width(page) <= 390, (path, _scroll_width(page), _sticking_out(page))


def test_tap_targets_on_the_table_page_are_thumb_sized(phone: Any, games_server: LiveServer) -> None:
    games_server.service.submit("add_player", {"name": "Ann", "pad": 1})
    page = _trusted_table(phone, games_server)
    page.locator("li.player").first.wait_for()
    small = page.evaluate("""() => [...document.querySelectorAll('.bar a, main button, main select, main input, #calibrate-link')]
      .filter(e => e.offsetParent && e.type !== 'checkbox')
      .map(e => [e, e.getBoundingClientRect()]).filter(([e, r]) => r.height < 44 || r.width < 44)
      .map(([e, r]) => (e.id || e.className || e.tagName) + ' ' + Math.round(r.width) + 'x' + Math.round(r.height))""")
    assert small == []

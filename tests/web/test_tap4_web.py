"""Tap 4 web extras through Flask's test client: chart, CSV, sheet, past games and statistics."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from helpers.browser import seat, trust
from helpers.game_docs import documented_fields, view_paths

from flask import Flask

from companion.games.base import Game
from companion.games.tap4 import Tap4
from companion.service import TableService

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def games() -> dict[str, type[Game]]:
    """Only Tap 4 at this table."""
    return {"tap4": Tap4}


@pytest.fixture
def client(app: Flask) -> Any:
    with app.test_client() as c:
        yield c


def _play(service: TableService) -> tuple[int, list[int]]:
    ids = seat(service, ("Ann", "Bob", "Cat"))
    a, b, c = ids
    service.submit("start_game", {"kind": "tap4", "settings": {"target": 60}})
    game_id = service.snapshot()[1]["game"]["game_id"]
    service.submit("enter_round", {"entries": [{"player": a, "out": True}, {"player": b, "total": 30},
                                               {"player": c, "cards": {"tap_in": 1, "3": 1}}]})
    service.submit("enter_round", {"entries": [{"player": a, "total": 10}, {"player": b, "total": 35},
                                               {"player": c, "out": True}]})
    return game_id, ids


def test_chart_csv_and_sheet_of_a_game(client, service):
    game_id, (a, b, c) = _play(service)
    response = client.get(f"/api/games/tap4/{game_id}/chart.svg")
    assert response.status_code == 200
    assert response.mimetype == "image/svg+xml"
    assert response.headers["Cache-Control"] == "no-store"
    root = ET.fromstring(response.get_data(as_text=True))
    assert len(root.findall(f"{SVG}polyline")) == 3

    response = client.get(f"/api/games/tap4/{game_id}/sheet.csv")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[1] == ["1", "Cat", "Ann", "Ann", "0", "0", "30", "30", "23", "23"]
    assert rows[3] == ["total", "", "", "", "", "10", "", "65", "", "23"]

    data = client.get(f"/api/games/tap4/{game_id}/sheet.json").get_json()
    assert data["outcome"]["winners"] == [a]
    assert [p["total"] for p in data["view"]["players"]] == [10, 65, 23]


def test_summary_lists_games_with_winners_and_player_statistics(client, service):
    game_id, (a, b, c) = _play(service)
    service.submit("end_game", {})
    data = client.get("/api/games/tap4/summary").get_json()
    assert data["games"][0]["game_id"] == game_id
    assert data["games"][0]["winners"] == ["Ann"]
    assert data["games"][0]["rounds"] == 2
    stats = {s["name"]: s for s in data["stats"]}
    assert stats["Ann"]["wins"] == 1 and stats["Ann"]["went_out"] == 1
    assert stats["Bob"]["worst_round"] == 35 and stats["Bob"]["average_round"] == 32.5


def test_the_summary_has_exactly_the_documented_fields(client, service):
    _play(service)
    data = client.get("/api/games/tap4/summary").get_json()
    assert view_paths(data, {}) == set(documented_fields("tap4", "Past games and statistics"))


@pytest.mark.parametrize("path", ["/api/games/tap4/999/chart.svg", "/api/games/tap4/999/sheet.csv", "/api/games/tap4/999/sheet.json"])
def test_unknown_game_is_a_404_that_says_so(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "no game 999" in response.get_json()["error"]


def test_the_ui_script_is_served_and_offered_to_pages(client):
    response = client.get("/static/games/tap4.js")
    assert response.status_code == 200
    assert b"window.TabletopGames.tap4" in response.data
    assert b'content="tap4' in client.get("/").data or b",tap4" in client.get("/").data


def _trusted(client: Any) -> str:
    return trust(client)["X-CSRF-Token"]


@pytest.mark.parametrize(
    "entries, status, words",
    [
        ([{"player": "A", "out": True}, {"player": "B", "cards": {"7": 5}}, {"player": "C", "cards": {"7": 4}}],
         409, "too many 7s: Bob 5 + Cat 4 = 9"),
        ([{"player": "A", "out": True}, {"player": "B", "total": -3}, {"player": "C", "total": 4}],
         400, "Bob's total must not be negative"),
        ([{"player": "A", "out": True}, {"player": "B", "out": True}, {"player": "C", "total": 4}],
         409, "Ann and Bob are marked out"),
    ],
)
def test_impossible_round_through_the_api_is_refused_and_changes_nothing(client, service, entries, status, words):
    game_id, (a, b, c) = _play(service)
    token = _trusted(client)
    ids = {"A": a, "B": b, "C": c}
    before = service.snapshot()
    body = {"name": "edit_round", "args": {"round": 1, "entries": [{**e, "player": ids[e["player"]]} for e in entries]}}
    response = client.post("/api/command", json=body, headers={"X-CSRF-Token": token})
    assert response.status_code == status
    assert words in response.get_json()["error"]
    assert service.snapshot() == before

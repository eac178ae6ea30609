"""Taco Hat Cake Gift Pizza server extras: statistics across games and one game's verdicts, over the Flask test client."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import make_app, running_service
from helpers.game_docs import documented_fields, view_paths

from companion.games.taco import TacoGame
from companion.service import TableService

WAIT = 30.0


@pytest.fixture
def played(tmp_path: Path) -> Iterator[tuple[Any, TableService]]:
    """A table where one digital game had one judged slap window (Bob last)."""
    with running_service(tmp_path / "data", games={"taco": TacoGame}) as service:
        for name, pad in (("Ann", 1), ("Bob", 2)):
            service.submit("add_player", {"name": name, "pad": pad})
        sub = service.subscribe()
        service.submit("start_game", {"kind": "taco", "settings": {"deck": {"taco": 24}, "lead_in_ms": 0,
                                                                   "after_verdict_ms": 60_000}})
        state = service.snapshot()[1]
        while not (state["game"]["view"]["window"] or {}).get("kind") == "due":
            update = sub.get(timeout=WAIT)
            assert update is not None
            state = update.state
        card_at = state["game"]["view"]["top"]["at_us"]
        service.source.inject(1, at_us=card_at + 210_000)
        service.source.inject(2, at_us=card_at + 330_000)
        while state["game"]["view"]["verdict"] is None:
            update = sub.get(timeout=WAIT)
            assert update is not None
            state = update.state
        sub.close()
        yield make_app(service, tmp_path / "data").test_client(), service


def test_stats_across_games(played):
    client, _ = played
    response = client.get("/api/games/taco/stats.json")
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    rows = {r["name"]: r for r in response.get_json()["players"]}
    assert rows["Ann"]["best_ms"] == 210.0 and rows["Ann"]["piles"] == 0
    assert rows["Bob"]["median_ms"] == 330.0 and rows["Bob"]["piles"] == 1 and rows["Bob"]["last"] == 1
    assert rows["Bob"]["games"] == 1


def test_stats_rows_have_exactly_the_documented_fields(played):
    client, _ = played
    body = client.get("/api/games/taco/stats.json").get_json()
    assert view_paths(body, {}) == set(documented_fields("taco", "`GET /api/games/taco/stats.json`"))


def test_a_verdict_events_data_is_the_views_verdict_without_what_the_overrules_fold(played):
    client, service = played
    game_id = next(g["game_id"] for g in service.past_games() if g["kind"] == "taco")
    (event,) = client.get(f"/api/games/taco/{game_id}/verdicts.json").get_json()["events"]
    shown = service.snapshot()[1]["game"]["view"]["verdict"]
    data = {k: v for k, v in event["data"].items() if k != "_step"}  # the table's mark, see docs/api.md
    assert {k: v for k, v in shown.items() if k not in ("holder", "overrules", "cancelled")} == data


def test_one_games_verdicts(played):
    client, service = played
    game_id = next(g["game_id"] for g in service.past_games() if g["kind"] == "taco")
    response = client.get(f"/api/games/taco/{game_id}/verdicts.json")
    assert response.status_code == 200
    (verdict,) = response.get_json()["events"]
    assert verdict["type"] == "verdict" and verdict["data"]["taker"] == 2


def test_an_unknown_game_is_a_404_that_says_where_to_look(played):
    client, _ = played
    response = client.get("/api/games/taco/9999/verdicts.json")
    assert response.status_code == 404
    assert "no Taco Hat Cake Gift Pizza game 9999" in response.get_json()["error"]

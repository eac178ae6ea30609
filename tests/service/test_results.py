"""The end of a game and the history across games: results, rematch, past games, records, the Taco verdict sheet.

A real table service (real store, simulated pads) behind the Flask test client;
the Taco game is played with hits at chosen times, the Tap 4 games with rounds.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import csrf_headers, make_app, running_service, trust

from companion.games.taco import TacoGame
from companion.games.tap4 import Tap4
from companion.results import duration_s, standings, tap4_highlights
from companion.games.base import Player

WAIT = 30.0
GAMES = {"taco": TacoGame, "tap4": Tap4}


def _wait_state(sub: Any, state: dict[str, Any], done: Any) -> dict[str, Any]:
    while not done(state):
        update = sub.get(timeout=WAIT)
        assert update is not None, "the table published nothing"
        state = update.state
    return state


def play_taco_window(service: Any, slaps: dict[int, int]) -> dict[str, Any]:
    """Wait for the next due card and slap the pads ``{pad: ms after the card}``; the state with its verdict."""
    sub = service.subscribe()
    try:
        state = service.snapshot()[1]
        before = state["game"]["view"]["verdict_count"]
        state = _wait_state(sub, state, lambda s: (s["game"]["view"]["window"] or {}).get("kind") == "due")
        card_at = state["game"]["view"]["top"]["at_us"]
        for pad, ms in slaps.items():
            service.source.inject(pad, at_us=card_at + ms * 1000)
        return _wait_state(sub, state, lambda s: s["game"]["view"]["verdict_count"] > before)
    finally:
        sub.close()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A trusted test client on a table with Ann (pad 1), Bob (pad 2) and Cat (pad 3)."""
    with running_service(tmp_path / "data", games=GAMES) as service:
        for name, pad in (("Ann", 1), ("Bob", 2), ("Cat", 3)):
            service.submit("add_player", {"name": name, "pad": pad})
        client = make_app(service, tmp_path / "data").test_client()
        trust(client)
        yield client, service


TACO = {"deck": {"taco": 40}, "lead_in_ms": 0, "after_verdict_ms": 300, "tempo_ms": 400, "timeout_ms": 1500}


def _start_taco(service: Any) -> int:
    return service.submit("start_game", {"kind": "taco", "settings": TACO})["events"][0]["seq"]


def test_results_of_an_ended_taco_game_name_the_fastest_hand_and_the_pile_takers(table):
    client, service = table
    game_id = _start_taco(service)
    play_taco_window(service, {1: 180, 2: 260, 3: 400})  # Cat last
    play_taco_window(service, {1: 300, 2: 150})  # Cat never slapped
    service.submit("end_game")
    body = client.get(f"/api/games/{game_id}/results").get_json()
    assert body["finished"] is False and body["headline"] == "Game ended before anyone won"
    assert body["duration_s"] is not None and body["duration_s"] >= 0
    highlights = {h["kind"]: h for h in body["highlights"]}
    assert highlights["fastest_reaction"]["name"] == "Bob" and highlights["fastest_reaction"]["value"] == 150
    assert highlights["fastest_reaction"]["text"] == "Bob slapped 150 ms after the card"
    assert highlights["most_piles"]["name"] == "Cat" and highlights["most_piles"]["value"] == 2
    assert "most_flinches" not in highlights  # nobody flinched
    # Nobody won: the fewest cards left come first; Cat took both piles.
    assert [row["name"] for row in body["standings"]][-1] == "Cat"
    assert body["standings"][-1]["score"].endswith("cards left")
    assert body["rematch"] == {"kind": "taco", "settings": service.past_games()[0]["settings"], "players": [1, 2, 3]}


def test_latest_results_and_a_rematch_with_the_same_players_and_settings(table):
    client, service = table
    assert client.get("/api/results/latest").get_json() == {"results": None}
    headers = csrf_headers(client)
    refused = client.post("/api/rematch", json={}, headers=headers)
    assert refused.status_code == 409 and "nothing to play again" in refused.get_json()["error"]
    service.submit("start_game", {"kind": "tap4", "settings": {"target": 60}, "players": [1, 3]})
    service.submit("end_game")
    latest = client.get("/api/results/latest").get_json()["results"]
    assert latest["kind"] == "tap4" and [r["name"] for r in latest["standings"]] == ["Ann", "Cat"]
    answer = client.post("/api/rematch", json={}, headers=headers)
    assert answer.status_code == 200, answer.get_json()
    game = service.snapshot()[1]["game"]
    assert game["kind"] == "tap4" and game["players"] == [1, 3] and game["settings"]["target"] == 60
    assert game["game_id"] != latest["game_id"]
    # While that game runs, a second rematch is refused by the table's own rule.
    again = client.post("/api/rematch", json={"game_id": latest["game_id"]}, headers=headers)
    assert again.status_code == 409 and "still running" in again.get_json()["error"]


def test_a_rematch_is_refused_when_a_player_left_and_for_bad_input(table):
    client, service = table
    headers = csrf_headers(client)
    game_id = service.submit("start_game", {"kind": "tap4", "players": [1, 2]})["events"][0]["seq"]
    service.submit("end_game")
    service.submit("remove_player", {"player": 2})
    gone = client.post("/api/rematch", json={"game_id": game_id}, headers=headers)
    assert gone.status_code == 409 and "Bob left the table" in gone.get_json()["error"]
    assert client.post("/api/rematch", json={"game_id": "x"}, headers=headers).status_code == 400
    assert client.post("/api/rematch", json={"game": 1}, headers=headers).status_code == 400
    assert client.post("/api/rematch", json={"game_id": 999}, headers=headers).status_code == 404
    watcher = make_app(service, Path(client.application.config["DATA_DIR"])).test_client()
    assert watcher.post("/api/rematch", json={}, headers=csrf_headers(watcher)).status_code == 403
    assert service.snapshot()[1]["game"] is None  # nothing refused started anything


def _round(service: Any, entries: dict[int, Any]) -> None:
    service.submit("enter_round", {"entries": [{"player": p, "out": True} if v == "out" else {"player": p, "total": v}
                                               for p, v in entries.items()]})


def test_tap4_results_rank_by_total_and_find_the_biggest_comeback(table):
    client, service = table
    game_id = service.submit("start_game", {"kind": "tap4", "settings": {"target": 40}})["events"][0]["seq"]
    _round(service, {1: "out", 2: 25, 3: 10})   # 0, 25, 10: Bob 3rd, 25 behind
    _round(service, {1: 30, 2: "out", 3: 12})   # 30, 25, 22
    _round(service, {1: 15, 2: "out", 3: 13})   # 45, 25, 35: Ann reached 40, Bob wins
    body = client.get(f"/api/games/{game_id}/results").get_json()
    assert body["finished"] and body["winners"] == [2] and body["headline"] == "Bob wins!"
    assert [(r["place"], r["name"], r["score"]) for r in body["standings"]] == [
        (1, "Bob", "25 points"), (2, "Cat", "35 points"), (3, "Ann", "45 points")]
    assert [r["name"] for r in body["podium"]] == ["Bob", "Cat", "Ann"]
    (comeback,) = body["highlights"]
    assert comeback["kind"] == "biggest_comeback" and comeback["name"] == "Bob"
    assert comeback["text"] == "Bob was 3rd after round 1, 25 points behind, and finished 1st"


def test_the_comeback_needs_a_climb():
    players = [Player(1, "Ann"), Player(2, "Bob")]
    view = {"players": [{"id": 1}, {"id": 2}], "rounds": [
        {"round": 1, "totals": [0, 10]}, {"round": 2, "totals": [5, 30]}]}
    assert tap4_highlights(players, view) == []
    assert tap4_highlights(players, {"players": view["players"], "rounds": view["rounds"][:1]}) == []


def test_standings_share_places_on_equal_scores_and_fall_back_without_a_view():
    players = [Player(1, "Ann"), Player(2, "Bob"), Player(3, "Cat"), Player(4, "Dev")]
    view = {"hands": [{"player": 1, "cards": 0}, {"player": 2, "cards": 4}, {"player": 3, "cards": 2},
                      {"player": 4, "cards": 2}]}
    rows = standings("tapeworm", players, view, [1])
    assert [(r["place"], r["name"]) for r in rows] == [(1, "Ann"), (2, "Cat"), (2, "Dev"), (4, "Bob")]
    assert [(r["place"], r["name"]) for r in standings("other", players, None, [3])] == [
        (1, "Cat"), (2, "Ann"), (2, "Bob"), (2, "Dev")]


def test_duration_is_none_while_running_or_unreadable():
    assert duration_s({"started": "2026-11-29T21:00:00.000Z", "ended": "2026-11-29T21:12:30.500Z"}) == 750.5
    assert duration_s({"started": "2026-11-29T21:00:00.000Z", "ended": None}) is None
    assert duration_s({"started": "yesterday", "ended": "2026-11-29T21:00:00.000Z"}) is None


def test_history_lists_date_duration_players_and_winner_and_records_sum_up_every_game(table):
    client, service = table
    _start_taco(service)
    play_taco_window(service, {1: 200, 2: 240, 3: 500})
    play_taco_window(service, {1: 220, 2: 180, 3: 300})
    service.submit("end_game")
    service.submit("start_game", {"kind": "tap4", "settings": {"target": 20}, "players": [1, 2]})
    _round(service, {1: "out", 2: 25})
    service.submit("end_game")
    games = client.get("/api/history").get_json()["games"]
    assert [g["kind"] for g in games] == ["tap4", "taco"]
    assert games[0]["players"] == ["Ann", "Bob"] and games[0]["winners"] == ["Ann"]
    assert games[1]["players"] == ["Ann", "Bob", "Cat"] and games[1]["winners"] == []
    assert all(isinstance(g["duration_s"], float) and g["started"] and g["ended"] for g in games)
    rows = {r["name"]: r for r in client.get("/api/records").get_json()["players"]}
    ann = rows["Ann"]
    assert ann["games"] == 2 and ann["wins"] == 1
    assert ann["by_kind"] == {"taco": {"title": "Taco Hat Cake Gift Pizza", "games": 1, "wins": 0},
                              "tap4": {"title": "Tap 4", "games": 1, "wins": 1}}
    assert ann["best_ms"] == 200 and ann["median_ms"] == 210.0 and ann["reactions"] == 2 and ann["flinches"] == 0
    assert rows["Cat"]["games"] == 1 and rows["Cat"]["by_kind"].keys() == {"taco"} and rows["Cat"]["best_ms"] == 300
    assert list(rows) [0] == "Ann"  # most wins first
    page = client.get("/history")
    assert page.status_code == 200 and b"history.js" in page.data


def test_the_taco_csv_is_a_plain_table_with_one_row_per_verdict(table):
    client, service = table
    service.submit("update_player", {"player": 2, "name": "=Bob"})  # a formula-looking name
    game_id = _start_taco(service)
    play_taco_window(service, {1: 180, 2: 260, 3: 400})
    play_taco_window(service, {1: 300, 2: 150})
    service.submit("overrule", {"verdict": 2, "taker": 1})
    response = client.get(f"/api/games/taco/{game_id}/verdicts.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert len(rows) == 2
    first, second = rows
    assert first["verdict"] == "1" and first["kind"] == "slap" and first["taker"] == "Cat"
    assert (first["Ann ms"], first["'=Bob ms"], first["Cat ms"]) == ("180.0", "260.0", "400.0")
    assert first["card"] and first["word"] and first["cards taken"].isdigit()
    assert second["never slapped"] == "Cat" and second["Cat ms"] == ""
    assert second["taker"] == "Ann" and second["overruled"] == "reassign to Ann"
    assert not any(cell.startswith(("{", "[")) for row in rows for cell in row.values())  # no JSON in a cell
    assert client.get("/api/games/taco/999/verdicts.csv").status_code == 404


def test_an_unknown_game_has_no_results(table):
    client, _ = table
    response = client.get("/api/games/77/results")
    assert response.status_code == 404 and "/api/history" in response.get_json()["error"]

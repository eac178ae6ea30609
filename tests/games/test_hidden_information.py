"""No endpoint, stream or page shows what the players could not see at the table until the game ends.

Per game, from its rulebook (rules/ beside DESIGN.md):

* Taco Hat Cake Gift Pizza, digital: the piles are dealt face down and nobody
  looks at them; the companion deals them, so its ``dealt`` event holds the
  shuffled deck, every pile in order and the cards returned to the box. Only
  the counts may be read while the game runs.
* Tapeworm: hands are hidden, and the companion only counts cards (it never
  learns which cards a player holds): every event carries counts.
* TacTile: the market is face up and bought cards are public; the deck is a
  count until a card shows in the market; the tile layout is face up.
* Tap 4: piles and hands are only tallied at the end of a round, when they
  are turned up; the companion records nothing before that.

Each test reads as a guest without the PIN, over a real waitress server:
``/api/state``, the live stream (a watcher connected before the deal, and a
resume from the start), ``/api/games``, a game's history, export.json and
export.csv, the game's own endpoints (Taco stats and verdicts, Tap 4 chart,
sheet and summary) and the pages.
"""

from __future__ import annotations

import csv
import io
import json
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.disclosure import public_events, running_games
from companion.games import load_games
from web.sse_client import SseClient

from helpers.browser import HttpSession, LiveServer, serve_all_games
from helpers.tactile import start_entered_game

pytestmark = pytest.mark.slow

#: A digital Taco game that deals and then waits a minute before its first flip: nothing is face up.
QUIET_TACO = {"mode": "digital", "lead_in_ms": 60_000}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    yield from serve_all_games(tmp_path / "data", ["Ann", "Bob", "Cat"])


def raw(server: LiveServer, path: str) -> str:
    with urllib.request.urlopen(f"{server.url}{path}", timeout=30) as response:
        assert response.status == 200, path
        return response.read().decode("utf-8")


def guest_reads(server: LiveServer, game_id: int, kind: str) -> dict[str, Any]:
    """Everything a guest without the PIN can read about the table and this game: path -> parsed body."""
    out: dict[str, Any] = {}
    paths = ["/api/state", "/api/games", f"/api/games/{game_id}/history", f"/api/games/{game_id}/export.json"]
    if kind == "taco":
        paths += ["/api/games/taco/stats.json", f"/api/games/taco/{game_id}/verdicts.json"]
    if kind == "tap4":
        paths += [f"/api/games/tap4/{game_id}/sheet.json", "/api/games/tap4/summary"]
    for path in paths:
        out[path] = json.loads(raw(server, path))
    rows = list(csv.DictReader(io.StringIO(raw(server, f"/api/games/{game_id}/export.csv"))))
    out["export.csv"] = [{**row, "data": json.loads(row["data"])} for row in rows]
    for path in ["/", "/screen"] + ([f"/api/games/tap4/{game_id}/chart.svg", f"/api/games/tap4/{game_id}/sheet.csv"]
                                    if kind == "tap4" else []):
        out[path] = raw(server, path)
    for name, kw in (("stream from the start", {"after": 0}), ("stream resumed", {"last_event_id": 1})):
        client = SseClient(server.port, **kw)
        try:
            messages = client.until(lambda m: m.event == "state")
        finally:
            client.close()
        out[name] = [m.json() for m in messages if m.event in ("log", "state")]
    return out


def string_lists(obj: Any) -> Iterator[list[str]]:
    """Every list of strings anywhere inside ``obj``."""
    if isinstance(obj, dict):
        for value in obj.values():
            yield from string_lists(value)
    elif isinstance(obj, list):
        if obj and all(isinstance(x, str) for x in obj):
            yield obj
        for value in obj:
            yield from string_lists(value)


def shows_any(obj: Any, secrets: list[list[str]], run: int = 6) -> list[str]:
    """Where ``obj`` shows a secret card sequence (``run`` cards of it in a row), as readable notes."""
    if isinstance(obj, str):
        found = []
        for secret in secrets:
            for sep in (",", ", "):
                if json.dumps(secret[:run], separators=(sep, ":"))[1:-1] in obj:
                    found.append(f"text shows {secret[:run]}")
        return found
    found = []
    for seen in string_lists(obj):
        for secret in secrets:
            for i in range(len(secret) - run + 1):
                window = secret[i:i + run]
                if any(seen[j:j + run] == window for j in range(len(seen) - run + 1)):
                    found.append(f"{seen[:8]}... shows {window}")
                    break
    return found


def stored_game(server: LiveServer, game_id: int) -> list[dict[str, Any]]:
    return server.service.store.events_of_game(game_id)


def served_events(reads: dict[str, Any], game_id: int) -> list[dict[str, Any]]:
    """The game's events as export.json served them, without the history's own fields."""
    return [{k: v for k, v in e.items() if k not in ("undone", "undone_by")}
            for e in reads[f"/api/games/{game_id}/export.json"]["events"]]


def expected_public(server: LiveServer, game_id: int) -> list[dict[str, Any]]:
    events = stored_game(server, game_id)
    return public_events(events, load_games(), running_games(events))


# -------------------------------------------------------------------- Taco ---
def test_a_digital_taco_deal_is_read_by_nobody_until_the_game_ends(server: LiveServer) -> None:
    watcher = SseClient(server.port)  # a phone watching before the deal
    try:
        watcher.until(lambda m: m.event == "state")
        owner = HttpSession(server.port)
        owner.login()
        status, answer = owner.request("POST", "/api/command",
                                       {"name": "start_game", "args": {"kind": "taco", "settings": QUIET_TACO}})
        assert status == 200, answer
        live = [m.json() for m in watcher.until(lambda m: m.event == "state" and bool(m.json()["game"]))
                if m.event in ("log", "state")]
    finally:
        watcher.close()
    game_id = answer["events"][0]["game_id"]
    [dealt] = [e for e in stored_game(server, game_id) if e["type"] == "dealt"]
    secrets = [dealt["data"]["deck"], *(h["cards"] for h in dealt["data"]["hands"])]
    assert len(secrets[0]) == 64 and all(len(s) == 12 for s in secrets[1:])

    reads = guest_reads(server, game_id, "taco")
    reads["the command's answer"] = answer
    reads["the live stream"] = live
    leaks = {where: found for where, body in reads.items() if (found := shows_any(body, secrets))}
    assert leaks == {}

    # What may be read: who holds how many, and that the rest is withheld until the end.
    [public_deal] = [e for e in served_events(reads, game_id) if e["type"] == "dealt"]
    assert public_deal["data"]["hands"] == [{"player": p, "count": 12} for p in (1, 2, 3)]
    assert public_deal["data"]["deck"] == 64 and public_deal["data"]["out_of_play"] == 64 - 36
    assert "shown when the game ends" in public_deal["data"]["withheld"]
    assert served_events(reads, game_id) == expected_public(server, game_id)
    assert reads["/api/games/taco/stats.json"]["players"]  # the stats still count the game

    # Once the game has ended, the history is whole: the deal can be checked.
    status, _ = owner.request("POST", "/api/command", {"name": "end_game", "args": {}})
    assert status == 200
    after = json.loads(raw(server, f"/api/games/{game_id}/export.json"))
    [whole] = [e for e in after["events"] if e["type"] == "dealt"]
    assert whole["data"]["deck"] == dealt["data"]["deck"] and whole["data"]["hands"] == dealt["data"]["hands"]
    assert shows_any(json.loads(raw(server, f"/api/games/{game_id}/history")), secrets)


def test_a_winner_alone_does_not_end_the_secrecy_only_the_game_ending_does(server: LiveServer) -> None:
    # An overrule can still take a win back, so the piles stay hidden until game_ended.
    from companion.disclosure import running_games as running

    markers = [{"seq": 5, "type": "game_started", "game_id": 5, "data": {"kind": "taco"}}]
    assert running(markers) == {5: "taco"}
    assert running(markers + [{"seq": 9, "type": "game_ended", "game_id": 5, "data": {"outcome": {"winners": [1]}}}]) == {}


def test_physical_taco_records_counts_only(server: LiveServer) -> None:
    owner = HttpSession(server.port)
    owner.login()
    status, answer = owner.request("POST", "/api/command",
                                   {"name": "start_game", "args": {"kind": "taco", "settings": {"mode": "physical"}}})
    assert status == 200, answer
    game_id = answer["events"][0]["game_id"]
    [dealt] = [e for e in stored_game(server, game_id) if e["type"] == "dealt"]
    assert dealt["data"]["hands"] == [{"player": p, "count": 12} for p in (1, 2, 3)] and "deck" not in dealt["data"]
    reads = guest_reads(server, game_id, "taco")
    assert served_events(reads, game_id) == expected_public(server, game_id)


# ---------------------------------------------------------------- Tapeworm ---
def test_tapeworm_hands_are_counts_everywhere(server: LiveServer) -> None:
    service = server.service
    service.submit("start_game", {"kind": "tapeworm", "settings": {"deck_size": 40, "first_player": 1}})
    game_id = service.snapshot()[1]["game"]["game_id"]
    for name, args in (("draw", {}), ("swap", {"target": 2}), ("peek", {}), ("dig", {}), ("end_turn", {}),
                       ("draw", {}), ("hatch", {"target": 3}), ("end_turn", {})):
        service.submit(name, args)
    reads = guest_reads(server, game_id, "tapeworm")
    events = served_events(reads, game_id)
    assert events == [e for e in expected_public(server, game_id)] == stored_game(server, game_id)
    # The companion never learns a card: every count of cards is a number, never a list of cards.
    for event in events:
        for key in ("cards", "hands", "discarded", "severed"):
            value = event["data"].get(key)
            assert value is None or isinstance(value, int) or (
                key == "hands" and all(isinstance(n, int) for n in value.values())), (event, key)
    assert not any(string_lists(reads["/api/state"]["game"]["view"]["hands"]))


# ------------------------------------------------------------------ TacTile --
def test_tactile_shows_only_the_face_up_market_and_layout(server: LiveServer) -> None:
    service = server.service
    service.submit("remove_player", {"player": 3})
    start_entered_game(lambda name, args: service.submit(name, args))
    game_id = service.snapshot()[1]["game"]["game_id"]
    reads = guest_reads(server, game_id, "tactile")
    events = served_events(reads, game_id)
    assert events == expected_public(server, game_id) == stored_game(server, game_id)
    # Cards are recorded only as they show face up in the market; the deck is a count.
    assert {e["type"] for e in events} <= {"game_started", "layout_set", "card_entered"}
    market = reads["/api/state"]["game"]["view"]["market"]
    assert isinstance(market["deck"], int)


# -------------------------------------------------------------------- Tap 4 --
def test_tap4_records_a_round_only_once_it_is_turned_up(server: LiveServer) -> None:
    service = server.service
    service.submit("start_game", {"kind": "tap4", "settings": {"target": 60}})
    game_id = service.snapshot()[1]["game"]["game_id"]
    service.submit("enter_round", {"entries": [{"player": 1, "out": True}, {"player": 2, "total": 30},
                                               {"player": 3, "cards": {"tap_in": 1, "3": 1}}]})
    reads = guest_reads(server, game_id, "tap4")
    events = served_events(reads, game_id)
    assert events == expected_public(server, game_id) == stored_game(server, game_id)
    assert [e["type"] for e in events if e["type"] != "game_started"] == ["round_entered"]


# ------------------------------------------------------------- the filter ----
def test_an_event_whose_game_fails_to_say_what_is_public_is_withheld_whole() -> None:
    from companion.disclosure import WITHHELD_ALL, public_event
    from companion.games.taco import TacoGame

    games = {"taco": TacoGame}
    broken = {"seq": 7, "game_id": 5, "type": "dealt", "data": {"hands": "not a list of hands", "deck": ["taco"] * 64}}
    assert public_event(broken, games, {5: "taco"})["data"] == WITHHELD_ALL
    assert public_event(broken, games, {})["data"] == broken["data"]  # the game ended: whole
    hit = {"seq": 8, "game_id": 5, "type": "hit", "data": {"pad": 1}}
    assert public_event(hit, games, {5: "taco"}) == hit

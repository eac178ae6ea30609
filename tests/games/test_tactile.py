"""TacTile rules: data-driven scenarios from tests/scenarios/tactile, plus settings checks.

Each scenario file gives the players, settings, an optional layout and
market, and steps: play lines that must be accepted, play lines that must be
refused with a reason (state unchanged), and expectations on the public view.
After every step the invariants hold (discs never share a non-home tile,
resources and cards are conserved), and at the end a replay of the event log
rebuilds exactly the same view (what a restart does).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.errors import CompanionError, InputError
from companion.games.base import Command, Player
from companion.games.tactile import TacTile
from companion.games.tactile_board import COLOURS, is_corner
from test_tactile_script import Table

HERE = Path(__file__).resolve().parents[1] / "scenarios" / "tactile"
SCENARIOS = sorted(HERE.glob("*.json"))

#: Eight tiles of each colour; a1 f1 a6 f6 are the home corners.
DEFAULT_LAYOUT = ["hrygbh", "rygbry", "gbrygb", "brygbr", "ygbryg", "hbrygh"]


def check_invariants(table: Table, where: str) -> None:
    """What no sequence of legal steps may break."""
    state, settings = table.game.state, table.game.settings
    on_board = [d.tile for d in state.discs.values() if d.tile is not None and not is_corner(d.tile)]
    assert len(on_board) == len(set(on_board)), f"two discs share a tile at {where}"
    assert state.resource_totals() == settings["resources"], f"resources not conserved at {where}"
    assert all(v >= 0 for v in state.stockpile.values()), f"negative stockpile at {where}"
    assert all(v >= 0 for r in state.resources.values() for v in r.values()), f"negative resources at {where}"
    assert state.card_total() == settings["deck_size"], f"cards not conserved at {where}"
    slots = [s for s in state.market.slots if isinstance(s, int)]
    places = Counter(slots + state.market.discard + state.market.known + list(state.owner))
    assert all(n == 1 for n in places.values()), f"a card is in two places at {where}: {places}"


def lookup(view: dict[str, Any], path: str) -> Any:
    """``"discs.1a.tile"`` -> the value; ``card.<id>`` finds a card (owned or in the market), ``player.<id>`` a player."""
    head, _, rest = path.partition(".")
    if head == "card":
        card_id, _, rest = rest.partition(".")
        owned = [{**c, "owner": p["id"]} for p in view["players"] for c in p["cards"]]
        shown = [{**s["card"], "owner": None, "slot": s["slot"]} for s in view["market"]["slots"] if s["card"]]
        value: Any = next(c for c in owned + shown if c["id"] == int(card_id))
    elif head == "player":
        pid, _, rest = rest.partition(".")
        value = next(p for p in view["players"] if p["id"] == int(pid))
    else:
        value, rest = view, path
    for key in filter(None, rest.split(".")):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def matches(action: dict[str, Any], want: dict[str, Any]) -> bool:
    return all(action.get(k) == v for k, v in want.items())


def run_steps(table: Table, steps: list[dict[str, Any]], name: str) -> None:
    for number, step in enumerate(steps, start=1):
        where = f"{name} step {number}: {step}"
        if "include" in step:
            run_steps(table, json.loads((HERE / step["include"]).read_text())["steps"], step["include"])
        if "play" in step:
            lines = [step["play"]] if isinstance(step["play"], str) else step["play"]
            if "refused" in step:
                assert len(lines) == 1, where
                before, log_length = table.game.view(), len(table.events)
                with pytest.raises(CompanionError) as info:
                    table.play(lines[0], step.get("at_us", 0))
                assert step["refused"] in str(info.value), f"{where}: got {info.value}"
                assert table.game.view() == before, f"refusal changed the state at {where}"
                assert len(table.events) == log_length, where
            else:
                for line in lines:
                    try:
                        table.play(line, step.get("at_us", 0))
                    except CompanionError as error:
                        raise AssertionError(f"{where}: '{line}' refused: {error}") from error
        if "market" in step:
            table.fill_market(step["market"])
        if "hit" in step:
            hit = step["hit"]
            table.hit(hit["pad"], hit.get("kind", "slap"), hit.get("at_us", 0))
        for path, want in step.get("expect", {}).items():
            got = lookup(table.game.view(), path)
            assert got == want, f"{where}: {path} is {got!r}, expected {want!r}"
        if "legal" in step:
            legal = table.game.view()["legal"]
            for want in step["legal"].get("includes", []):
                assert any(matches(a, want) for a in legal), f"{where}: {want} not legal; legal: {legal}"
            for want in step["legal"].get("excludes", []):
                assert not any(matches(a, want) for a in legal), f"{where}: {want} is legal"
            if "kinds" in step["legal"]:
                assert sorted({a["kind"] for a in legal}) == sorted(step["legal"]["kinds"]), f"{where}: {legal}"
        check_invariants(table, where)


def table_for(scenario: dict[str, Any]) -> Table:
    settings = {"layout": "enter", **scenario.get("settings", {})}
    table = Table(scenario["players"], settings, seed=scenario.get("seed", 0))
    if settings["layout"] == "enter" and scenario.get("layout", True):
        table.do("set_layout", {"rows": scenario.get("layout") or DEFAULT_LAYOUT})
    if "market" in scenario:
        table.fill_market(scenario["market"])
    return table


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text())
    table = table_for(scenario)
    run_steps(table, scenario["steps"], path.name)
    replay = table.replayed(table.events)
    assert replay.view() == table.game.view(), "replaying the log gives another state"


def test_scenarios_cover_the_issue() -> None:
    names = {p.stem for p in SCENARIOS}
    for needed in (
        "showdown_victory",
        "brawl_victory",
        "brawl_both_discs_one_tile_eliminates",
        "brawl_one_disc_per_score_tile",
        "team_victory_elimination_skipping",
        "two_action_limit",
        "activation_chain",
        "push_legality",
        "trapped_disc",
        "market_reset_colour",
        "market_reset_type",
        "deck_reshuffle",
        "swap_with_ally",
        "illegal_moves",
    ):
        assert needed in names


# ----- setup and settings -----------------------------------------------------------


def game(players: int, **settings: Any) -> TacTile:
    return TacTile([Player(i, f"P{i}") for i in range(1, players + 1)], settings)


@pytest.mark.parametrize("count, mode", [(2, "showdown"), (3, "brawl"), (4, "team")])
def test_mode_follows_player_count(count: int, mode: str) -> None:
    assert game(count).view()["mode"] == mode


def test_discs_start_at_home_in_corners() -> None:
    two = game(2).view()
    assert {d: v["tile"] for d, v in two["discs"].items()} == {"1a": "a1", "1b": "a1", "2a": "f6", "2b": "f6"}
    four = game(4).view()
    assert four["board"]["homes"] == {"1": "a1", "2": "f1", "3": "f6", "4": "a6"}
    assert [p["ally"] for p in four["players"]] == [3, 4, 1, 2]
    assert [p["score_tiles"] for p in four["players"]] == [["f6"], ["a6"], ["a1"], ["f1"]]
    three = game(3).view()
    assert [p["score_tiles"] for p in three["players"]] == [["a6", "f1"], ["a1", "f6"], ["f1", "a6"]]


def test_shuffled_layout_comes_from_the_seed_and_counts() -> None:
    tables = [Table(2, {}, seed=s) for s in (1, 1, 2)]
    rows = [t.game.view()["board"]["rows"] for t in tables]
    assert rows[0] == rows[1] != rows[2]
    joined = "".join(rows[0])
    assert {c: joined.count(c) for c in "rygb"} == {"r": 8, "y": 8, "g": 8, "b": 8}
    custom = Table(2, {"tiles": {"red": 11, "yellow": 5, "green": 8, "blue": 8}}, seed=4)
    joined = "".join(custom.game.view()["board"]["rows"])
    assert (joined.count("r"), joined.count("y")) == (11, 5)


def test_layout_entered_tile_by_tile_starts_play_when_complete() -> None:
    table = Table(2, {"layout": "enter"})
    assert table.game.view()["phase"] == "setup"
    with pytest.raises(CompanionError, match="the board is not laid yet: 32 tiles"):
        table.play("move 1a b1")
    tiles = [(f"{'abcdef'[c]}{r + 1}", DEFAULT_LAYOUT[r][c]) for r in range(6) for c in range(6) if DEFAULT_LAYOUT[r][c] != "h"]
    names = dict(zip("rygb", COLOURS))
    for tile, letter in tiles[:-1]:
        table.play(f"tile {tile} {names[letter]}")
    with pytest.raises(CompanionError, match="all 8 red tiles are already placed"):
        table.play(f"tile {tiles[-1][0]} red")
    table.play(f"tile {tiles[-1][0]} {names[tiles[-1][1]]}")
    view = table.game.view()
    assert (view["phase"], view["turn"]["player"], view["board"]["rows"]) == ("play", 1, DEFAULT_LAYOUT)
    with pytest.raises(CompanionError, match="already laid"):
        table.play("tile b1 red")


def test_first_player_setting_sets_the_turn_order() -> None:
    view = game(4, first_player=3).view()
    assert view["order"] == [3, 4, 1, 2]


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"layout": "random"}, "'layout'"),
        ({"tiles": {"red": 9, "yellow": 8, "green": 8, "blue": 8}}, "add up to 32"),
        ({"tiles": {"red": 32}}, "'tiles' must give a count"),
        ({"resources": -1}, "'resources"),
        ({"deck_size": 3}, "'deck_size'"),
        ({"first_player": 9}, "'first_player'"),
        ({"first_player": "ann"}, "'first_player'"),
        ({"push_needs_contact": "yes"}, "'push_needs_contact'"),
        ({"pad_ends_turn": 1}, "'pad_ends_turn'"),
        ({"pushes": True}, "no setting 'pushes'"),
    ],
)
def test_bad_settings_are_named(bad: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=words):
        game(2, **bad)


def test_player_counts_outside_two_to_four_are_refused() -> None:
    with pytest.raises(CompanionError, match="2 to 4 players"):
        game(5)
    with pytest.raises(CompanionError, match="2 to 4 players"):
        game(1)


def test_legal_actions_is_a_queryable_view() -> None:
    table = table_for({"players": 2, "market": ["red move red:1"] * 2 + ["blue gain green:1"] * 2 + ["yellow push red:2"] * 2})
    legal = table.game.legal_actions()
    moves = list(legal.of_kind("move"))
    assert {(a.disc, a.to) for a in moves} == {("1a", (0, 1)), ("1a", (1, 0)), ("1b", (0, 1)), ("1b", (1, 0))}
    assert moves[0] in legal and len(legal) == len(list(legal))
    assert [a.kind for a in legal.for_disc("2a")] == []
    assert legal.basics_left() == ["move", "gain", "buy", "swap", "reset"]
    # Every listed action is accepted by decide, and its command names it exactly.
    for action in list(legal):
        name, args = action.command()
        assert table.game.decide(Command(name, args))


def test_unknown_arguments_are_named() -> None:
    table = Table(2, {}, seed=1)
    with pytest.raises(InputError, match="move has no argument 'tile'; valid arguments: card, disc, to"):
        table.do("move", {"disc": "1a", "tile": "b1"})
    with pytest.raises(InputError, match="end_turn has no argument 'now'; valid arguments: none"):
        table.do("end_turn", {"now": True})


@pytest.mark.parametrize("command", ["move", "push"])
@pytest.mark.parametrize("disc", [[], {}, ["1a"], {"1a": 1}])
def test_a_disc_of_the_wrong_shape_is_named_not_a_crash(command: str, disc: Any) -> None:
    # A list or an object as 'disc' used to raise TypeError (unhashable) inside the rules: a 500.
    table = Table(2, {}, seed=1)
    before = table.game.view()
    with pytest.raises(InputError, match="'disc' must be one of 1a, 1b, 2a, 2b"):
        table.do(command, {"disc": disc, "to": "b1"})
    assert table.game.view() == before

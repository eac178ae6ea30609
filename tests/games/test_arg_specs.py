"""Command arguments declared once as ArgSpec values and checked once before routing.

Data-driven: for each game and the table, a command with one bad argument and the
message a caller sees (word for word what the handlers said before the specs), and
that nothing changed. Then what the specs promise in general: every argument of
every declared command has a spec, bounds are read at run time, clients get them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from companion.games import load_games
from companion.games.args import ARG_TYPES, ArgSpec, Bound
from companion.games.base import Command, Game, Player
from companion.games.taco import TacoGame
from companion.games.tactile import TacTile
from companion.games.tap4 import Tap4
from companion.games.tapeworm import Tapeworm
from companion.table import TABLE_COMMAND_TABLE, TableState
from core.errors import InputError, RuleError

from helpers.games import play, started

AT = "2026-12-01T23:00:00.000Z"
ROUND = {"entries": [{"player": 1, "out": True}, {"player": 2, "total": 10}]}


def taco() -> Game:
    return started(TacoGame, 3, {"mode": "physical"})


def tap4() -> Game:
    game = Tap4([Player(i, f"P{i}") for i in (1, 2)], {})
    play(game, "enter_round", ROUND)
    return game


def tapeworm() -> Game:
    game = started(Tapeworm, 2, {"first_player": 1, "deck_size": 40})
    play(game, "draw")
    return game


def tactile() -> Game:
    return started(TacTile, 2, {})


# (make the game, command, args, the message it must give, word for word)
GAME_CASES: list[tuple[Any, str, dict[str, Any], str]] = [
    (taco, "card_flipped", {"card": 7}, "'card' must be str, got 7"),
    (taco, "card_flipped", {"card": "Burrito"}, "'card' must be one of taco, hat, cake, gift, pizza, monkey, unicorn, ninja, got 'Burrito'"),
    (taco, "card_flipped", {}, "'card' is missing"),
    (taco, "penalty", {"player": True}, "'player' must be a number, got True"),
    (taco, "penalty", {"player": "1"}, "'player' must be int, got '1'"),
    (taco, "penalty", {"player": 1, "reason": "rude"}, "'reason' must be one of gesture, peek, pace, other, got 'rude'"),
    (taco, "set_pile", {"player": 1, "count": 65}, "'count' must be a whole number from 0 to 64, got 65"),
    (taco, "set_pile", {"player": 1, "count": 1.0}, "'count' must be a whole number from 0 to 64, got 1.0"),
    (tap4, "enter_round", {}, "'entries' must be a list with one entry per player"),
    (tap4, "enter_round", {"entries": {"player": 1}}, "'entries' must be a list with one entry per player"),
    (tap4, "edit_round", {"round": 2, **ROUND}, "'round' must be a round number from 1 to 1, got 2"),
    (tap4, "edit_round", {"round": True, **ROUND}, "'round' must be a round number from 1 to 1, got True"),
    (lambda: Tap4([Player(i, f"P{i}") for i in (1, 2)], {}), "choose_starter", {"player": None}, "'player' must be int, got None"),
    (tapeworm, "play", {"count": 41}, "'count' must be a whole number from 1 to 40, got 41"),
    (tapeworm, "cut", {"severed": 0}, "'severed' must be a whole number from 1 to 500, got 0"),
    (tapeworm, "swap", {"target": 2, "took": 1}, "'took' must be true or false, got 1"),
    (tapeworm, "ringworm", {"discard": 3}, "'discard' must be a whole number from 0 to 2, got 3"),
    (tactile, "buy", {"slot": 7}, "'slot' must be a market slot from 1 to 6, got 7"),
    (tactile, "buy", {"slot": False}, "'slot' must be a market slot from 1 to 6, got False"),
    (tactile, "move", {"disc": ["1a"], "to": "c4"}, "'disc' must be one of 1a, 1b, 2a, 2b, got ['1a']"),
    (tactile, "gain", {"colour": "pink"}, "'colour' must be one of red, yellow, green, blue, got 'pink'"),
    (tactile, "gain", {"colour": "red", "card": "free"}, "'card' must be a card id (a whole number) or \"basic\", got 'free'"),
    (tactile, "swap", {"card": 3}, "'ally_card' must be a card id (a whole number), got None"),
    (tactile, "swap", {"card": 3, "ally_card": True}, "'ally_card' must be a card id (a whole number), got True"),
    (tactile, "swap", {"give": "red"}, "'take' must be one of red, yellow, green, blue, got None"),
]


@pytest.mark.parametrize("make, name, args, message", GAME_CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_a_bad_game_argument_is_refused_with_its_message_and_changes_nothing(make: Any, name: str, args: dict[str, Any],
                                                                             message: str) -> None:
    game = make()
    before = copy.deepcopy(game.view())
    with pytest.raises(InputError) as info:
        game.decide(Command(name, args))
    assert str(info.value) == message
    assert game.view() == before


def table() -> TableState:
    state = TableState(load_games(), pad_count=4)
    state.execute(Command("add_player", {"name": "Ann", "pad": 1}), AT)
    state.execute(Command("add_player", {"name": "Cy"}), AT)
    state.execute(Command("start_game", {"kind": "tap4"}), AT)
    return state


TABLE_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("add_player", {"name": 5}, "'name' must be str, got 5"),
    ("add_player", {"name": "Bo", "pad": 5}, "'pad' must be a pad number from 1 to 4 (or null), got 5"),
    ("add_player", {"name": "Bo", "colour": "red"}, "'colour' must be a colour like '#e4572e', got 'red'"),
    ("update_player", {"player": None, "name": "Bo"}, "'player' is missing"),
    ("update_player", {"player": 1.5, "name": "Bo"}, "'player' must be a player id or name, got 1.5"),
    ("update_player", {"player": 1, "colour": None}, "'colour' must be a colour like '#e4572e', got None"),
    ("seat_players", {"order": "Ann"}, "'order' must be list, got 'Ann'"),
    ("start_game", {"kind": 4}, "'kind' must be str, got 4"),
    ("start_game", {"kind": "tap4", "settings": [1]}, "'settings' must be an object, got [1]"),
    ("start_game", {"kind": "tap4", "seed": -1}, f"'seed' must be a whole number from 0 to {2**63 - 1}, got -1"),
    ("undo", {"seq": "last"}, "'seq' must be an event number, got 'last'"),
]


@pytest.mark.parametrize("name, args, message", TABLE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(TABLE_CASES)])
def test_a_bad_table_argument_is_refused_with_its_message_and_changes_nothing(name: str, args: dict[str, Any], message: str) -> None:
    state = table()
    before = copy.deepcopy(state.view())
    with pytest.raises(InputError) as info:
        state.execute(Command(name, args), AT)
    assert str(info.value) == message
    assert state.view() == before


def test_a_missing_argument_is_named_where_the_handler_once_said_no_such_value() -> None:
    # Before the specs a Hatch without a target said "no player with id None".
    with pytest.raises(InputError, match="^'target' is missing$"):
        tapeworm().decide(Command("hatch", {}))


def test_an_unknown_argument_is_named_before_any_value_is_checked() -> None:
    with pytest.raises(InputError, match="set_pile has no argument 'cout'; valid arguments: count, player"):
        taco().decide(Command("set_pile", {"player": "x", "cout": 3}))


def test_a_state_refusal_that_empties_a_bound_comes_before_the_argument_check() -> None:
    # No round yet: 'round' would range over 1..0, so the command is refused as a whole first.
    game = Tap4([Player(i, f"P{i}") for i in (1, 2)], {})
    with pytest.raises(RuleError, match="no round has been entered yet"):
        game.decide(Command("edit_round", {"round": 1, **ROUND}))
    with pytest.raises(RuleError, match="there is no verdict to overrule yet"):
        taco().decide(Command("overrule", {"verdict": 1, "taker": 2}))


def test_a_bound_is_read_from_the_game_when_the_command_arrives() -> None:
    small = started(Tapeworm, 2, {"first_player": 1, "deck_size": 20})
    play(small, "draw")
    with pytest.raises(InputError, match="from 1 to 20, got 21"):
        small.decide(Command("play", {"count": 21}))


def test_true_is_not_one_and_one_is_not_true() -> None:
    spec = ArgSpec("n", "choice", choices=(1, True))
    spec.check({"n": 1}, None)
    spec.check({"n": True}, None)
    with pytest.raises(InputError, match="'n' must be one of 1, True, got 1.0"):
        spec.check({"n": 1.0}, None)
    with pytest.raises(InputError, match="'x' must be a whole number from 0 to 3, got True"):
        ArgSpec("x", "int", min=0, max=3).check({"x": True}, None)


def test_an_optional_argument_may_be_left_out_and_a_nullable_one_may_be_null() -> None:
    ArgSpec("x", "int", optional=True).check({}, None)
    ArgSpec("x", "int", optional=True, nullable=True).check({"x": None}, None)
    with pytest.raises(InputError, match="'x' must be int, got None"):
        ArgSpec("x", "int", optional=True).check({"x": None}, None)
    with pytest.raises(InputError, match="'x' is missing"):
        ArgSpec("x", "int", nullable=True).check({"x": None}, None)


def test_an_unknown_type_is_a_declaration_error() -> None:
    with pytest.raises(ValueError, match="argument 'x': type must be one of"):
        ArgSpec("x", "float")


def every_command() -> list[tuple[str, Any]]:
    out = [(f"table.{s.name}", s) for s in TABLE_COMMAND_TABLE.specs]
    return out + [(f"{cls.kind}.{s.name}", s) for cls in load_games().values() for s in cls.command_specs]


@pytest.mark.parametrize("where, spec", every_command(), ids=[w for w, _ in every_command()])
def test_every_argument_of_every_declared_command_has_a_spec(where: str, spec: Any) -> None:
    declared = {a.name for a in spec.arg_specs}
    assert declared == set(spec.args), f"{where}: arguments without a spec: {set(spec.args) - declared}"
    assert all(a.type in ARG_TYPES for a in spec.arg_specs)


def test_clients_get_each_commands_specs_with_run_time_bounds_by_label() -> None:
    state = table()
    available = {g["kind"]: g for g in state.view()["games_available"]}
    commands = {c["name"]: c for c in available["tapeworm"]["commands"]}
    assert commands["play"]["args"] == ["count"]
    assert commands["play"]["arg_specs"] == [
        {"name": "count", "type": "int", "optional": True, "min": 1, "max_from": "setting 'deck_size'", "default": 1}
    ]
    taco_commands = {c["name"]: c for c in available["taco"]["commands"]}
    verdict = taco_commands["overrule"]["arg_specs"][0]
    assert verdict["name"] == "verdict" and verdict["max_from"] == "the number of verdicts so far" and verdict["min"] == 1
    assert taco_commands["penalty"]["arg_specs"][1]["choices"] == ["gesture", "peek", "pace", "other"]
    assert {c["name"] for c in available["tactile"]["commands"] if "arg_specs" in c} >= {"move", "buy", "swap"}


def test_a_bound_label_is_what_clients_see() -> None:
    spec = ArgSpec("n", "int", min=0, max=Bound(lambda owner: owner, "the owner itself"))
    assert spec.to_dict() == {"name": "n", "type": "int", "min": 0, "max_from": "the owner itself"}
    spec.check({"n": 5}, 5)
    with pytest.raises(InputError, match="from 0 to 4, got 5"):
        spec.check({"n": 5}, 4)

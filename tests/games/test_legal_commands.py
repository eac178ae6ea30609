"""Legal moves as data: each game's ``legal_commands()`` lists exactly the commands its rules accept now.

Data-driven positions per game (what is legal there, by name and arguments), and
for every game: asking changes nothing, and every command listed is accepted.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from companion.games.base import Game, Player
from companion.games.taco import TacoGame
from companion.games.tactile import TacTile
from companion.games.tap4 import Tap4
from companion.games.tapeworm import Tapeworm

from helpers.games import play, started


def legal(game: Game) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.args)) for c in game.legal_commands()]


def test_tapeworm_a_turn_opens_with_the_owed_draw_only() -> None:
    game = started(Tapeworm, 2, {"first_player": 1})
    assert legal(game) == [("draw", {})]


def test_tapeworm_after_the_draw_any_card_in_hand_may_be_played() -> None:
    game = started(Tapeworm, 2, {"first_player": 1})
    play(game, "draw")
    assert legal(game) == [
        *[("play", {"count": n}) for n in range(1, 7)],  # six cards in hand after the draw
        ("peek", {}), ("hatch", {"target": 2}), ("swap", {"target": 2, "took": True}),
        ("swap", {"target": 2, "took": False}), ("dig", {}), ("end_turn", {}),
    ]


def test_tapeworm_a_worm_on_the_table_can_be_cut_and_the_player_may_declare_locked() -> None:
    game = started(Tapeworm, 2, {"first_player": 1})
    play(game, "draw")
    play(game, "play", {"count": 2})
    names = legal(game)
    assert ("cut", {"severed": 1}) in names and ("cut", {"severed": 2}) in names
    assert ("cut", {"severed": 3}) not in names  # the worm has two cards
    assert ("declare_locked", {}) in names and ("draw", {}) not in names
    assert ("play", {"count": 5}) not in names  # four cards left in hand


def test_tap4_the_first_starter_is_chosen_before_round_1_only() -> None:
    game = Tap4([Player(i, f"P{i}") for i in (1, 2, 3)], {})
    assert legal(game) == [("choose_starter", {"player": p}) for p in (1, 2, 3)]
    play(game, "enter_round", {"entries": [{"player": 1, "out": True}, {"player": 2, "total": 10}, {"player": 3, "total": 5}]})
    assert legal(game) == []


def test_taco_pause_then_resume() -> None:
    game = started(TacoGame, 3, {})
    assert legal(game) == [("pause", {})]  # nothing to resume, no pile to take yet
    play(game, "pause")
    assert legal(game) == [("resume", {})]


def test_tactile_every_legal_action_is_a_legal_command() -> None:
    game = started(TacTile, 2, {})
    commands = [(c.name, dict(c.args)) for c in game.legal_commands() if c.name != "undo_turn"]
    assert commands == [action.command() for action in game.legal_actions()]
    assert commands, "a fresh TacTile turn has legal actions"


GAMES = [
    pytest.param(lambda: started(Tapeworm, 3, {}), id="tapeworm"),
    pytest.param(lambda: started(TacTile, 3, {}), id="tactile"),
    pytest.param(lambda: Tap4([Player(i, f"P{i}") for i in (1, 2)], {}), id="tap4"),
    pytest.param(lambda: started(TacoGame, 2, {}), id="taco"),
]


@pytest.mark.parametrize("make", GAMES)
def test_asking_changes_nothing_and_every_listed_command_is_accepted(make: Any) -> None:
    game = make()
    before = copy.deepcopy(game.view())
    commands = game.legal_commands()
    assert game.view() == before
    for command in commands:
        assert game.decide(command), f"{command.name} {dict(command.args)} is listed as legal but decides nothing"
    assert game.view() == before

"""Tapeworm rules: data-driven scenarios from tests/scenarios/tapeworm, and card conservation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from core.errors import CompanionError
from companion.games.base import Command, Player
from companion.games.tapeworm import Tapeworm

from helpers.games import play, started

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios" / "tapeworm").glob("*.json"))


def new_game(players: int, game_settings: dict[str, Any], seed: int = 0) -> Tapeworm:
    game = started(Tapeworm, players, game_settings, seed)
    assert isinstance(game, Tapeworm)
    return game


def check(game: Tapeworm, expected: dict[str, Any]) -> None:
    view = game.view()
    for key, want in expected.items():
        if key == "hands":
            hands = {str(h["player"]): h["cards"] for h in view["hands"]}
            for pid, cards in want.items():
                assert hands[pid] == cards, f"hand of player {pid}: {hands[pid]} != {cards}"
        else:
            assert view[key] == want, f"{key}: {view[key]!r} != {want!r}"


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text())
    game = new_game(scenario["players"], scenario.get("settings", {}))
    for number, step in enumerate(scenario["steps"], start=1):
        where = f"{path.name} step {number}: {step}"
        if "do" in step:
            if "refused" in step:
                before = game.view()
                with pytest.raises(CompanionError) as info:
                    game.decide(Command(step["do"], step.get("args", {})))
                assert step["refused"] in str(info.value), where
                assert game.view() == before, f"refusal changed the state at {where}"
            else:
                play(game, step["do"], step.get("args"))
        if "expect" in step:
            check(game, step["expect"])
        assert game.total_cards() == game.settings["deck_size"], f"cards not conserved at {where}"


def test_scenarios_exist() -> None:
    assert len(SCENARIOS) >= 8


def test_random_first_player_comes_from_the_seed() -> None:
    firsts = {new_game(4, {}, seed=s).view()["current"] for s in range(8)}
    assert firsts == {1, 2, 3, 4}
    assert new_game(4, {}, seed=5).view()["current"] == new_game(4, {}, seed=5).view()["current"]


@pytest.mark.parametrize(
    "bad, words",
    [({"deck_size": 5}, "'deck_size'"), ({"deck_sz": 50}, "no setting 'deck_sz'"), ({"first_player": "ann"}, "'first_player'")],
)
def test_bad_settings_are_named(bad: dict[str, Any], words: str) -> None:
    with pytest.raises(CompanionError, match=words):
        Tapeworm([Player(1, "A"), Player(2, "B")], bad)


def test_deck_too_small_for_the_deal_is_refused() -> None:
    game = Tapeworm([Player(i, f"P{i}") for i in range(1, 9)], {"deck_size": 30})
    with pytest.raises(CompanionError, match="cannot deal 5 each to 8 players"):
        game.start(Command("start"))


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["draw", "play", "cut", "peek", "hatch", "swap", "dig", "ringworm", "end_turn"]),
        st.integers(min_value=0, max_value=4),
        st.integers(min_value=1, max_value=4),
        st.booleans(),
    ),
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(players=st.integers(min_value=2, max_value=4), deck=st.integers(min_value=21, max_value=80), actions=ACTIONS)
def test_cards_are_conserved_and_counts_never_negative(players: int, deck: int, actions: list[tuple[str, int, int, bool]]) -> None:
    game = new_game(players, {"deck_size": deck})
    for name, number, target, flag in actions:
        args = {"count": number, "severed": number, "discard": min(number, 2), "target": target, "took": flag}
        try:
            events = game.decide(Command(name, args))
        except CompanionError:
            continue
        for event in events:
            game.evolve(event)
        view = game.view()
        assert game.total_cards() == deck
        assert min(h["cards"] for h in view["hands"]) >= 0
        assert min(view["deck"], view["discard"], view["worm"]) >= 0

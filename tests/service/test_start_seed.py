"""``start_game`` takes an optional ``seed``: the same seed deals the same game (replays and tests).

Without it the table draws a random seed per command, as before. The
shuffle's result is recorded in the game's events either way, so a restart
never depends on the seed.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import InputError
from companion.games import load_games
from companion.games.base import Command
from companion.table import TableState

AT = "2026-11-29T21:00:00.000Z"


def table(random_seed: int) -> TableState:
    """A table with three seated players; commands carry ``random_seed`` as the service's random draw."""
    state = TableState(dict(load_games()), pad_count=4)
    for pad, name in enumerate(("Ann", "Bob", "Cy"), start=1):
        state.execute(Command("add_player", {"name": name, "pad": pad}, seed=random_seed), AT)
    return state


def start(state: TableState, random_seed: int, **args: Any) -> list[dict[str, Any]]:
    return state.execute(Command("start_game", args, seed=random_seed, actor="test"), AT)


def dealt(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    first = {"taco": "dealt", "tactile": "layout_shuffled", "tapeworm": "dealt"}[kind]
    return next(e["data"] for e in events if e["type"] == first)


@pytest.mark.parametrize("kind", ["taco", "tactile", "tapeworm"])
def test_the_same_seed_deals_the_same_game_whatever_the_tables_own_randomness(kind: str) -> None:
    a = dealt(start(table(1), 1, kind=kind, seed=20261129), kind)
    b = dealt(start(table(2), 987654321, kind=kind, seed=20261129), kind)
    assert a == b


def test_taco_digital_decks_differ_by_seed() -> None:
    decks = {json_key(dealt(start(table(1), 1, kind="taco", seed=s), "taco")) for s in range(5)}
    assert len(decks) == 5


def json_key(data: dict[str, Any]) -> str:
    return repr(sorted((h["player"], tuple(h.get("cards", ()))) for h in data["hands"]))


def test_without_a_seed_the_tables_random_draw_is_used() -> None:
    a = dealt(start(table(1), 11, kind="taco"), "taco")
    b = dealt(start(table(1), 12, kind="taco"), "taco")
    assert a != b


@pytest.mark.parametrize(
    "seed, words",
    [("42", "'seed' must be a whole number"), (-1, "from 0 to"), (2**63, "from 0 to"), (True, "'seed' must be a whole number"), (1.5, "'seed' must be a whole number")],
)
def test_a_bad_seed_is_refused_by_name_and_nothing_starts(seed: Any, words: str) -> None:
    state = table(1)
    before = state.view()
    with pytest.raises(InputError, match=words):
        start(state, 1, kind="taco", seed=seed)
    assert state.view() == before

"""The game docs a script writer reads are exact: every public view field and every command.

Each ``docs/games/<kind>.md`` has a ``## Public view`` table whose first
column names every field of ``game.view()`` by its path (``hands[].player``
for a key of each list item, ``discs.<disc>.tile`` for a key of a map whose
keys are ids or names), and a ``## Commands`` table naming every command.

The documented paths (a row ``verdict.*`` repeating the fields of ``verdicts[]``
under ``verdict.``) must be exactly the paths the views have: the views
are collected while every scenario file of the game runs (the same runners
as the rule tests), so a field that is added, renamed or dropped without the
docs following fails here, and so does a documented field no view has.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any, Callable

import pytest

from core.errors import InputError
from companion.games.base import Command, Game, Player
from companion.games.taco import TacoGame
from companion.games.tactile import TacTile
from companion.games.tap4 import Tap4
from companion.games.tapeworm import Tapeworm

from helpers.game_docs import DOCS, documented_commands, documented_fields, maps_of, section, table_rows, view_paths  # noqa: F401


def _run_taco() -> None:
    module = importlib.import_module("test_taco_scenarios")
    for param in module._load():
        module.test_scenario(param.values[0])


def _run_tactile() -> None:
    module = importlib.import_module("test_tactile")
    for path in module.SCENARIOS:
        module.test_scenario(path)


def _run_tapeworm() -> None:
    module = importlib.import_module("test_tapeworm")
    for path in module.SCENARIOS:
        module.test_scenario(path)


def _run_tap4() -> None:
    module = importlib.import_module("test_tap4")
    for path in sorted((module.SCENARIOS / "games").glob("*.json")):
        module.test_game_scenario(path)


#: kind -> (Game class, a runner that plays every scenario file of the game).
GAMES: dict[str, tuple[type[Game], Callable[[], None]]] = {
    "taco": (TacoGame, _run_taco),
    "tactile": (TacTile, _run_tactile),
    "tapeworm": (Tapeworm, _run_tapeworm),
    "tap4": (Tap4, _run_tap4),
}


@functools.cache
def seen_paths(kind: str) -> frozenset[str]:
    """Every view path met while the scenario files of ``kind`` run."""
    cls, run = GAMES[kind]
    maps = maps_of(documented_fields(kind))
    paths: set[str] = set()
    original = cls.view

    def recording(self: Any) -> Any:
        view = original(self)
        view_paths(view, maps, out=paths)
        return view

    cls.view = recording  # type: ignore[method-assign]
    try:
        run()
    finally:
        cls.view = original  # type: ignore[method-assign]
    return frozenset(paths)


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_documented_view_fields_are_exactly_the_views_keys(kind: str) -> None:
    fields = documented_fields(kind)
    assert len(fields) == len(set(fields)), f"docs/games/{kind}.md lists a field twice"
    seen = seen_paths(kind)
    undocumented = sorted(seen - set(fields))
    never_seen = sorted(set(fields) - seen)
    assert not undocumented, f"view fields missing in docs/games/{kind}.md: {undocumented}"
    assert not never_seen, f"docs/games/{kind}.md lists fields no view has: {never_seen}"


#: The section of each game's docs whose table lists its settings.
SETTINGS_SECTION = {"taco": "Settings", "tactile": "Settings", "tap4": "Settings", "tapeworm": "Setup"}


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_setting_is_documented(kind: str) -> None:
    rows = table_rows(section((DOCS / f"{kind}.md").read_text(), SETTINGS_SECTION[kind]))
    documented = [cells[0].strip("`") for cells in rows]
    assert len(documented) == len(set(documented)), f"docs/games/{kind}.md lists a setting twice"
    assert set(documented) == set(GAMES[kind][0].default_settings())


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_command_is_documented(kind: str) -> None:
    cls = GAMES[kind][0]
    assert set(documented_commands(kind)) == set(cls.command_names())


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_command_lists_exactly_the_arguments_it_takes(kind: str) -> None:
    documented = documented_commands(kind)
    taken = {spec.name: set(spec.args) for spec in GAMES[kind][0].command_specs}
    assert documented == taken


def _fresh(kind: str) -> Game:
    """A new game of ``kind`` for three players with pads (Taco needs them), not started."""
    cls = GAMES[kind][0]
    return cls([Player(i, f"P{i}", pad=i) for i in (1, 2, 3)], {})


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_an_argument_a_command_does_not_take_is_refused_by_name(kind: str) -> None:
    game = _fresh(kind)
    for spec in game.command_specs:
        args = {name: None for name in spec.args} | {"colur": "red"}
        with pytest.raises(InputError, match=rf"^{spec.name} has no argument 'colur'; valid arguments: "):
            game.decide(Command(spec.name, args))


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_an_unknown_command_is_refused_with_the_valid_ones(kind: str) -> None:
    game = _fresh(kind)
    with pytest.raises(InputError, match="has no command 'dance'; commands: ") as info:
        game.decide(Command("dance", {}))
    assert all(name in str(info.value) for name in game.command_names())


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_the_docs_cite_the_rulebook_not_a_path_outside_the_repository(kind: str) -> None:
    text = (DOCS / f"{kind}.md").read_text()
    assert "shared/rules" not in text and "../../../" not in text
    assert re.search(r"rulebook", text, re.I), "the docs say what the rulebook is"


def test_the_path_rules_of_this_test() -> None:
    view = {"a": [{"b": 1}, {"c": {"x": 2}}], "m": {"1": {"t": 0}}, "s": [1, 2], "n": None}
    assert view_paths(view, {"m": "id"}) == {"a", "a[].b", "a[].c", "a[].c.x", "m", "m.<id>", "m.<id>.t", "s", "n"}
    assert maps_of(["m.<id>.t", "x[].cost.<colour>"]) == {"m": "id", "x[].cost": "colour"}

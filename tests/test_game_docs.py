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
from pathlib import Path
from typing import Any, Callable

import pytest

from core.errors import InputError
from companion.games.base import Command, Game, Player
from companion.games.taco import TacoGame
from companion.games.tactile import TacTile
from companion.games.tap4 import Tap4
from companion.games.tapeworm import Tapeworm

DOCS = Path(__file__).resolve().parent.parent / "docs" / "games"


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


def section(text: str, title: str) -> str:
    """The body of the section whose heading starts with ``title`` (``##`` or deeper), up to the next
    heading of the same level or higher."""
    match = re.search(rf"^(#{{2,}}) {re.escape(title)}.*?$", text, re.M)
    assert match, f"no '{title}' section"
    end = re.compile(rf"^#{{1,{len(match.group(1))}}} ", re.M).search(text, match.end())
    return text[match.end(): end.start() if end else len(text)]


def table_rows(body: str) -> list[list[str]]:
    """The cells of every table row whose first cell is a `code` name (header and rules skipped)."""
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if cells and re.fullmatch(r"`[^`]+`", cells[0]):
            rows.append(cells)
    return rows


def documented_fields(kind: str, title: str = "Public view") -> list[str]:
    """Paths named in the first column of the field table of the section ``title`` (default: the view).

    A row ``x.*`` whose meaning names another object first (``every field of
    `ys[]` ...``) stands for all of that object's fields under ``x.``.
    """
    rows = table_rows(section((DOCS / f"{kind}.md").read_text(), title))
    fields = [cells[0].strip("`") for cells in rows]
    out = [f for f in fields if not f.endswith(".*")]
    for cells in rows:
        path = cells[0].strip("`")
        if path.endswith(".*"):
            source = re.search(r"`([^`]+)`", cells[-1])
            assert source, f"{kind}: the row {path} must name the object whose fields it repeats"
            prefix = source.group(1) + "."
            out += [path[:-1] + f[len(prefix):] for f in fields if f.startswith(prefix)]
    return out


def documented_commands(kind: str) -> dict[str, set[str]]:
    """Command name -> argument names from the ``## Commands`` table: each `name` or `name?` followed by its (type)."""
    out: dict[str, set[str]] = {}
    for cells in table_rows(section((DOCS / f"{kind}.md").read_text(), "Commands")):
        args = set(re.findall(r"`([a-z_]+)\??` \(", cells[1])) if len(cells) > 1 else set()
        out[cells[0].strip("`")] = args
    return out


def view_paths(view: Any, maps: dict[str, str], prefix: str = "", out: set[str] | None = None) -> set[str]:
    """Every path in ``view``: dict keys, ``[]`` for the items of a list of objects, ``<x>`` for map keys."""
    out = set() if out is None else out
    if isinstance(view, dict):
        for key, value in view.items():
            path = f"{prefix}.<{maps[prefix]}>" if prefix in maps else (f"{prefix}.{key}" if prefix else str(key))
            out.add(path)
            view_paths(value, maps, path, out)
    elif isinstance(view, list):
        for item in view:
            if isinstance(item, dict):
                view_paths(item, maps, f"{prefix}[]", out)
    return out


def maps_of(fields: list[str]) -> dict[str, str]:
    """Map paths the docs declare: ``a.<id>`` makes ``a`` a map keyed by ids."""
    maps: dict[str, str] = {}
    for path in fields:
        for match in re.finditer(r"\.<([a-z_]+)>", path):
            maps[path[: match.start()]] = match.group(1)
    return maps


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

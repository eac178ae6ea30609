"""Taco Hat Cake Gift Pizza rules, driven by the scenario files in tests/scenarios/taco/.

Each file (JSON; an object or a list of objects) sets up a table and runs
steps on a virtual clock; times are milliseconds (fractions allowed):

* ``{"advance": ms}``: let the beat and window deadlines run up to ``ms``.
* ``{"hits": [{"pad", "at", "kind"?, "arrive"?, "uncertainty"?}, ...]}``: hits
  delivered in the listed order, each when it arrives (default: at its onset
  time); ``uncertainty`` (ms) as a phone pad's hit carries it.
* ``{"command": name, "args": {...}, "at": ms, "error": "text"?}``: a command;
  with ``error`` it must be refused with that text and change nothing.
* ``{"restart": ms}``: replay the log into a fresh game, then resume at ``ms``.
* ``{"bots": {"order": [pad, ...], "reaction": ms, "gap": ms, "windows": n}}``:
  play on with bots, digital play only: every due card is slapped by every
  pad in ``order`` (the first ``reaction`` ms after the card, each next one
  ``gap`` ms later), until someone wins or ``windows`` slap windows have
  passed. After each verdict the last in ``order`` took the pile and starts
  the next round at "Taco", and no card was lost.
* ``{"expect": {...}}``: ``verdict`` (partial match of the latest verdict),
  ``verdicts`` (all of them, partially), ``verdict_count``, ``piles``
  ({player: count or null}), ``central``, ``view`` (partial), ``outcome``,
  ``events`` (types produced by the previous step), ``ignored`` (why each
  ignored hit of the step did not count, by substring), ``flipped`` (cards
  flipped so far, as "player:card:word"), ``beats_passed`` (beats said by
  empty-handed players so far, as "player:word").

After every step the test checks that no card was lost or made up
(digital play) and that a replay of the log gives the same view.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import CompanionError
from companion.games.taco import TacoGame
from helpers.taco_driver import VirtualTable

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios" / "taco"


def _load() -> list[Any]:
    cases = []
    for path in sorted(SCENARIOS.glob("*.json")):
        data = json.loads(path.read_text())
        items = data if isinstance(data, list) else [data]
        for i, item in enumerate(items):
            name = path.stem if len(items) == 1 else f"{path.stem}[{item.get('title', i)}]"
            cases.append(pytest.param(item, id=name))
    return cases


def us(ms_value: float) -> int:
    return int(round(ms_value * 1000))


def matches(actual: Any, expected: Any, where: str = "") -> None:
    """Partial, recursive comparison: dicts compare only the keys given; lists compare all items."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: '{key}' missing in {sorted(actual)}"
            matches(actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), f"{where}: expected {len(expected)} items, got {len(actual)}: {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            matches(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def check(table: VirtualTable, expect: dict[str, Any], produced: list[Any], step: int) -> None:
    game = table.game
    view = game.view()
    where = f"step {step}"
    for key, value in expect.items():
        if key == "verdict":
            assert game.verdicts, f"{where}: no verdict yet"
            matches(game.verdicts[-1], value, f"{where}.verdict")
        elif key == "verdicts":
            matches(game.verdicts, value, f"{where}.verdicts")
        elif key == "verdict_count":
            assert len(game.verdicts) == value, f"{where}: {len(game.verdicts)} verdicts: {game.verdicts!r}"
        elif key == "piles":
            counts = {str(p["player"]): p["count"] for p in view["piles"]}
            matches(counts, value, f"{where}.piles")
        elif key == "central":
            assert view["central"] == value, f"{where}: central pile {view['central']!r}"
        elif key == "view":
            matches(view, value, f"{where}.view")
        elif key == "outcome":
            assert game.outcome() == value if value is None else True
            if value is not None:
                matches(game.outcome(), value, f"{where}.outcome")
        elif key == "events":
            assert [e.type for e in produced] == value, f"{where}: events {[(e.type, e.data) for e in produced]!r}"
        elif key == "flipped":
            flips = [f"{e.data['player']}:{e.data['card']}:{e.data['word']}" for e in table.log if e.type == "flipped"]
            assert flips == value, f"{where}: flipped {flips!r}"
        elif key == "beats_passed":
            passed = [f"{e.data['player']}:{e.data['word']}" for e in table.log if e.type == "beat_passed"]
            assert passed == value, f"{where}: beats passed {passed!r}"
        elif key == "ignored":
            whys = [e.data["why"] for e in produced if e.type == "hit_ignored"]
            assert len(whys) == len(value) and all(v in w for v, w in zip(value, whys)), f"{where}: ignored {whys!r}"
        else:  # pragma: no cover - a typo in a scenario file
            raise AssertionError(f"{where}: unknown expectation '{key}'")


def play_bots(table: VirtualTable, bots: dict[str, Any]) -> list[Any]:
    """Play on with bots that slap every due card in a fixed order (see the module docstring)."""
    game = table.game
    assert game.digital, "bots play digital games only"
    order, dealt = bots["order"], game.cards_in_play()
    produced: list[Any] = []
    windows = 0
    while table.game.outcome() is None and windows < bots["windows"]:
        deadline = table.game.next_deadline_us()
        assert deadline is not None, "a running digital game always has a next beat or a window"
        produced += table.advance(deadline)
        w = table.game.window
        if w is None or w.kind != "due":
            continue
        windows += 1
        count = len(table.game.verdicts)
        for i, pad in enumerate(order):
            produced += table.hit(pad, w.card_at + us(bots["reaction"] + i * bots["gap"]))
        game = table.game
        assert len(game.verdicts) == count + 1, f"window {windows}: every pad slapped, so a verdict is due at once"
        verdict = game.verdicts[-1]
        assert verdict["taker"] == order[-1] and verdict["missing"] == [], f"window {windows}: {verdict['reason']}"
        assert game.cards_in_play() == dealt, f"window {windows}: cards not conserved"
        if verdict["winner"] is None:
            view = game.view()
            assert view["round_first"] == order[-1], f"window {windows}: the taker starts the next round"
            assert view["beat"] == {"player": order[-1], "word": "taco"}, f"window {windows}: chant restarts at Taco"
    return produced


def replayed_view(table: VirtualTable) -> dict[str, Any]:
    game = TacoGame(table.players, table.settings)
    for event in table.log:
        game.evolve(event)
    return game.view()


@pytest.mark.parametrize("scenario", _load())
def test_scenario(scenario: dict[str, Any]) -> None:
    hands = scenario.get("hands")
    table = VirtualTable(
        scenario["players"],
        scenario.get("settings", {}),
        seed=scenario.get("seed", 0),
        hands={int(k): v for k, v in hands.items()} if hands is not None else None,
        resolution_us=scenario.get("resolution_us", 1),
    )
    digital = table.game.digital
    dealt = table.game.cards_in_play()
    produced: list[Any] = []
    for n, step in enumerate(scenario.get("steps", []), start=1):
        if "advance" in step:
            produced = table.advance(us(step["advance"]))
        elif "hits" in step:
            produced = []
            for h in step["hits"]:
                arrive = us(h["arrive"]) if "arrive" in h else None
                produced += table.hit(h["pad"], us(h["at"]), h.get("kind", "slap"), arrive, us(h.get("uncertainty", 0)))
        elif "command" in step:
            at = us(step["at"]) if "at" in step else None
            if "error" in step:
                if at is not None:
                    table.advance(at)
                before = (len(table.log), copy.deepcopy(table.game.view()))
                with pytest.raises(CompanionError, match=step["error"]):
                    table.command(step["command"], step.get("args", {}))
                assert (len(table.log), table.game.view()) == before, f"step {n}: a refused command changed the game"
                produced = []
            else:
                produced = table.command(step["command"], step.get("args", {}), at)
        elif "restart" in step:
            produced = table.restart(us(step["restart"]))
        elif "bots" in step:
            produced = play_bots(table, step["bots"])
        if "expect" in step:
            check(table, step["expect"], produced, n)
        if digital:
            assert table.game.cards_in_play() == dealt, f"step {n}: cards not conserved"
        assert replayed_view(table) == table.game.view(), f"step {n}: a replay of the log gives another state"
    if "final" in scenario:
        check(table, scenario["final"], produced, 0)

"""Tap 4 rules: scoring, round checks and whole games, driven by tests/scenarios/tap4/."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError, RuleError
from companion.games import GAMES, load_games
from companion.games.base import Command, Event, Player
from companion.games.tap4 import Tap4
from companion.games.tap4_scoring import (
    CARD_KEYS,
    DECK,
    DECK_POINTS,
    DECK_SIZE,
    card_points,
    check_round,
    deal_plan,
    max_points,
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios" / "tap4"


def _load(name: str) -> dict[str, Any]:
    return json.loads((SCENARIOS / name).read_text())


def _players(names: list[str]) -> list[Player]:
    return [Player(i + 1, name) for i, name in enumerate(names)]


def _entries(players: list[Player], shorthand: dict[str, Any]) -> list[dict[str, Any]]:
    """Scenario shorthand (name -> "out" | total | {counts}) as enter_round entries."""
    ids = {p.name: p.id for p in players}
    entries = []
    for name, spec in shorthand.items():
        if spec == "out":
            entries.append({"player": ids[name], "out": True})
        elif isinstance(spec, dict):
            entries.append({"player": ids[name], "cards": spec})
        else:
            entries.append({"player": ids[name], "total": spec})
    return entries


class Sheet:
    """A Tap4 game driven like the table service does: decide, record, evolve; undo = replay without."""

    def __init__(self, names: list[str], settings: dict[str, Any] | None = None) -> None:
        self.players = _players(names)
        self.settings = settings or {}
        self.log: list[tuple[Event, bool]] = []  # (event, undone)
        self.game = Tap4(self.players, self.settings)

    def submit(self, name: str, args: dict[str, Any], actor: str | None = None) -> list[Event]:
        events = self.game.decide(Command(name, args, actor=actor))
        for e in events:
            # Through JSON, as the store would keep it.
            stored = Event(e.type, json.loads(json.dumps(e.data)))
            self.log.append((stored, False))
            self.game.evolve(stored)
        return events

    def undo(self, change: int | None = None) -> None:
        live = [i for i, (_, undone) in enumerate(self.log) if not undone]
        if change is None:
            idx = live[-1]
        else:
            idx = next(i for i in live if self.log[i][0].data.get("change") == change)
        event = self.log[idx][0]
        self.game.check_undo(event, Command("undo"))
        self.log[idx] = (event, True)
        self.game = Tap4(self.players, self.settings)
        for e, undone in self.log:
            if not undone:
                self.game.evolve(e)

    def name_of(self, pid: int) -> str:
        return next(p.name for p in self.players if p.id == pid)


# ----- registration and settings ------------------------------------------


def test_tap4_is_registered():
    assert load_games()["tap4"] is Tap4
    assert GAMES["tap4"].kind == "tap4"
    assert {"enter_round", "edit_round", "choose_starter"} <= Tap4.command_names()


@pytest.mark.parametrize("count", [1, 7])
def test_player_count_outside_two_to_six_is_refused(count):
    with pytest.raises(RuleError, match="2 to 6 players"):
        Tap4(_players([f"P{i}" for i in range(count)]), {})


@pytest.mark.parametrize("count", [2, 3, 6])
def test_player_count_two_to_six_is_accepted(count):
    assert len(Tap4(_players([f"P{i}" for i in range(count)]), {}).view()["players"]) == count


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"target": 0}, "'target' must be a whole number from 1 to 10000, got 0"),
        ({"target": "150"}, "'target' must be a whole number"),
        ({"target": True}, "'target' must be a whole number"),
        ({"first_starter": "Ann"}, "'first_starter' must be a player id or null"),
        ({"first_starter": 9}, "no player with id 9"),
        ({"goal": 100}, "no setting 'goal'"),
    ],
)
def test_bad_settings_are_refused_by_name(settings, words):
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Tap4(_players(["Ann", "Bob", "Cat"]), settings)


def test_default_target_is_150_and_first_starter_setting_is_used():
    game = Tap4(_players(["Ann", "Bob", "Cat"]), {"first_starter": 2})
    assert game.settings["target"] == 150
    assert game.view()["next"]["starter"] == 2


def test_unknown_command_is_refused():
    with pytest.raises(InputError, match="no command 'slap'"):
        Tap4(_players(["Ann", "Bob", "Cat"]), {}).decide(Command("slap"))


# ----- scoring --------------------------------------------------------------


def test_deck_constants_match_the_rulebook():
    assert DECK_SIZE == 114
    assert DECK_POINTS == 8 * 78 + 11 * 20 + 7 * 30


@pytest.mark.parametrize("case", _load("scoring.json")["cases"], ids=lambda c: c["name"])
def test_scoring_from_card_counts(case):
    assert card_points({k: v or 0 for k, v in case["cards"].items()}) == case["points"]
    if case.get("in_round") is False:
        return
    # The same cards entered for a player in a round score the same.
    players = _players(["Ann", "Bob", "Cat"])
    entries = check_round([(p.id, p.name) for p in players], _entries(players, {"Ann": "out", "Bob": case["cards"], "Cat": 1}))
    assert entries[1]["points"] == case["points"]
    assert entries[1]["mode"] == "cards"


def test_max_points_takes_the_highest_cards_first():
    full = {"tap_out": 7, "tap_in": 11, "12": 8}
    assert max_points(3, full) == 90
    assert max_points(10, full) == 7 * 30 + 3 * 20
    assert max_points(0, full) == 0


# ----- validation -----------------------------------------------------------

VALIDATION = _load("validation.json")


@pytest.mark.parametrize("case", VALIDATION["cases"], ids=lambda c: c["name"])
def test_round_validation(case):
    sheet = Sheet(case.get("players", VALIDATION["players"]))
    args = {"entries": case["raw"] if "raw" in case else _entries(sheet.players, case["round"])}
    before = copy.deepcopy(sheet.game.view())
    if "refused" in case:
        with pytest.raises((InputError, RuleError)) as info:
            sheet.submit("enter_round", args)
        assert case["refused"] in str(info.value)
        assert sheet.game.view() == before, "a refused round must leave the sheet unchanged"
        assert sheet.log == []
    else:
        sheet.submit("enter_round", args)
        view = sheet.game.view()
        assert len(view["rounds"]) == 1
        points = {sheet.name_of(pid): pts for pid, pts in zip([p["id"] for p in view["players"]], view["rounds"][0]["points"])}
        for name, expected in case["points"].items():
            assert points[name] == expected


def test_refused_round_after_accepted_rounds_leaves_sheet_unchanged():
    sheet = Sheet(["Ann", "Bob", "Cat"])
    sheet.submit("enter_round", {"entries": _entries(sheet.players, {"Ann": "out", "Bob": 10, "Cat": 12})})
    before = copy.deepcopy(sheet.game.view())
    bad = _entries(sheet.players, {"Ann": {"7": 5}, "Bob": "out", "Cat": {"7": 4}})
    with pytest.raises(RuleError, match="too many 7s"):
        sheet.submit("enter_round", {"entries": bad})
    with pytest.raises(RuleError, match="too many 7s"):
        sheet.submit("edit_round", {"round": 1, "entries": bad})
    assert sheet.game.view() == before
    assert len(sheet.log) == 1


# ----- whole games ----------------------------------------------------------


def _check(sheet: Sheet, expect: dict[str, Any]) -> None:
    view = sheet.game.view()
    names = [p["name"] for p in view["players"]]
    by_name = {p["name"]: p for p in view["players"]}
    rounds = {str(r["round"]): r for r in view["rounds"]}
    for key, want in expect.items():
        if key == "totals":
            assert {n: by_name[n]["total"] for n in want} == want
        elif key == "to_target":
            assert {n: by_name[n]["to_target"] for n in want} == want
        elif key == "places":
            assert {n: by_name[n]["place"] for n in want} == want
        elif key == "rounds":
            assert len(view["rounds"]) == want
        elif key == "leaders":
            assert [sheet.name_of(p) for p in view["leaders"]] == want
        elif key == "over":
            assert view["over"] is want
        elif key == "next":
            if want is None:
                assert view["next"] is None
            else:
                got = view["next"]
                assert got["round"] == want["round"]
                assert sheet.name_of(got["starter"]) == want["starter"]
                assert sheet.name_of(got["dealer"]) == want["dealer"]
        elif key == "setup":
            assert {k: view["setup"][k] for k in want} == want
        elif key == "setup_note":
            assert want in view["setup"]["note"]
        elif key == "winners":
            outcome = sheet.game.outcome()
            assert (None if outcome is None else [sheet.name_of(w) for w in outcome["winners"]]) == want
        elif key == "reason":
            assert sheet.game.outcome()["reason"] == want
        elif key == "round_points":
            for rnd, pts in want.items():
                got = dict(zip(names, rounds[rnd]["points"]))
                assert {n: got[n] for n in pts} == pts
        elif key in ("out", "starters", "dealers"):
            field = {"out": "out", "starters": "starter", "dealers": "dealer"}[key]
            assert {r: sheet.name_of(rounds[r][field]) for r in want} == want
        elif key in ("edits", "edited_by", "entered_by"):
            assert {r: rounds[r][key] for r in want} == want
        elif key == "last_event":
            event = sheet.log[-1][0]
            assert event.type == want["type"]
            assert event.data["by"] == want["by"]
            changes = [{**c, "player": sheet.name_of(c["player"])} for c in event.data["changes"]]
            assert changes == want["changes"]
        else:
            raise AssertionError(f"unknown expectation {key!r}")


def _step(sheet: Sheet, step: dict[str, Any]) -> None:
    actor = step.get("actor")
    if "enter" in step:
        sheet.submit("enter_round", {"entries": _entries(sheet.players, step["enter"])}, actor)
    elif "edit" in step:
        sheet.submit("edit_round", {"round": step["edit"], "entries": _entries(sheet.players, step["round"])}, actor)
    elif "choose_starter" in step:
        pid = next((p.id for p in sheet.players if p.name == step["choose_starter"]), 99)
        sheet.submit("choose_starter", {"player": pid}, actor)
    elif "undo" in step:
        sheet.undo(step["undo"])


@pytest.mark.parametrize("path", sorted((SCENARIOS / "games").glob("*.json")), ids=lambda p: p.stem)
def test_game_scenario(path):
    scenario = json.loads(path.read_text())
    sheet = Sheet(scenario["players"], scenario.get("settings"))
    for n, step in enumerate(scenario["steps"]):
        if "refused" in step:
            before = copy.deepcopy(sheet.game.view())
            log_before = list(sheet.log)
            with pytest.raises((InputError, RuleError)) as info:
                _step(sheet, step)
            assert step["refused"] in str(info.value), f"step {n}"
            assert sheet.game.view() == before, f"step {n}: a refused change must leave the sheet unchanged"
            assert sheet.log == log_before
        else:
            _step(sheet, step)
        _check(sheet, step.get("expect", {}))
    # A restart replays the log: the same sheet comes back.
    replayed = Tap4(sheet.players, sheet.settings)
    for event, undone in sheet.log:
        if not undone:
            replayed.evolve(event)
    assert replayed.view() == sheet.game.view()
    assert replayed.outcome() == sheet.game.outcome()


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6])
def test_start_rotates_left_over_many_rounds(count):
    names = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay"][:count]
    sheet = Sheet(names, {"target": 10000})
    for r in range(1, 4 * count + 2):
        nxt = sheet.game.view()["next"]
        assert nxt["round"] == r
        assert nxt["starter"] == sheet.players[(r - 1) % count].id
        assert nxt["dealer"] == sheet.players[(r - 2) % count].id
        out = sheet.players[r % count].name  # whoever; it does not move the start
        sheet.submit("enter_round", {"entries": _entries(sheet.players, {n: "out" if n == out else 3 for n in names})})
    rounds = sheet.game.view()["rounds"]
    assert [r["starter"] for r in rounds] == [sheet.players[i % count].id for i in range(len(rounds))]


def test_undo_of_a_non_sheet_event_is_left_to_the_table():
    game = Tap4(_players(["Ann", "Bob", "Cat"]), {})
    game.check_undo(Event("player_added", {}), Command("undo"))  # no error: not ours to judge


# ----- property: what is accepted always fits the deck ------------------------

_counts = st.dictionaries(st.sampled_from(CARD_KEYS), st.integers(min_value=0, max_value=9), max_size=5)


@settings(max_examples=300, deadline=None)
@given(players=st.integers(min_value=2, max_value=6), data=st.data())
def test_accepted_rounds_always_fit_the_deck_and_refused_ones_do_not(players, data):
    names = [f"P{i}" for i in range(players)]
    ps = _players(names)
    out = data.draw(st.sets(st.integers(min_value=1, max_value=players), max_size=2), label="out")
    hands = {p.id: data.draw(_counts, label=f"cards {p.id}") for p in ps}
    entries = [{"player": p.id, "out": True} if p.id in out else {"player": p.id, "cards": hands[p.id]} for p in ps]
    # Independent oracle: the rules as the rulebook and docs/games/tap4.md state them.
    held = [p.id for p in ps if p.id not in out]
    possible = (
        len(out) == 1
        and all(sum(hands[pid].values()) > 0 for pid in held)
        and all(sum(hands[pid].get(k, 0) for pid in held) <= DECK[k] for k in CARD_KEYS)
        and sum(sum(hands[pid].values()) for pid in held) <= deal_plan(players).dealt
    )
    try:
        result = check_round([(p.id, p.name) for p in ps], entries)
    except (InputError, RuleError):
        assert not possible
        return
    assert possible
    assert [e["player"] for e in result] == [p.id for p in ps]
    assert sum(1 for e in result if e["points"] == 0) == 1
    for e in result:
        if e["mode"] == "cards":
            assert e["points"] == card_points(hands[e["player"]])

"""Tap 4 on the real table service: SQLite log, generic undo, restart, statistics from game_events."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.table import Table, open_table

from core.errors import RuleError
from companion.games import load_games
from companion.games.tap4_stats import player_stats, rebuild_from_summary, sheet_csv


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    with open_table(tmp_path / "data", games=dict(load_games())) as t:
        yield t


def _round(ids: list[int], out: int, points: dict[int, Any]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    for pid in ids:
        if pid == out:
            entries.append({"player": pid, "out": True})
        elif isinstance(points[pid], dict):
            entries.append({"player": pid, "cards": points[pid]})
        else:
            entries.append({"player": pid, "total": points[pid]})
    return {"entries": entries}


def _totals(view: dict[str, Any]) -> list[int]:
    return [p["total"] for p in view["players"]]


def test_a_game_through_the_table_with_undo_redo_and_restart(table: Table):
    a, b, c = table.seat(["Ann", "Bob", "Cat"])
    table.cmd("start_game", {"kind": "tap4", "settings": {"target": 100}})
    table.cmd("enter_round", _round([a, b, c], a, {b: {"tap_in": 1, "tap_out": 1, "3": 1, "5": 1, "7": 1}, c: 10}), actor="Ann's phone")
    table.cmd("enter_round", _round([a, b, c], b, {a: 20, c: 5}), actor="Bob's phone")
    assert _totals(table.view()) == [20, 65, 15]

    # An impossible round is refused by the table and nothing is logged.
    seq_before = table.service.snapshot()[0]
    with pytest.raises(RuleError, match="too many 7s: Ann 5 \\+ Bob 4 = 9"):
        table.cmd("enter_round", _round([a, b, c], c, {a: {"7": 5}, b: {"7": 4}}))
    assert table.service.snapshot()[0] == seq_before

    edit = table.cmd("edit_round", {"round": 1, **_round([a, b, c], a, {b: 60, c: 10})}, actor="Cat's phone")
    assert edit["events"][0]["actor"] == "Cat's phone"
    assert edit["events"][0]["data"]["changes"] == [{"player": b, "from": 65, "to": 60}]
    assert _totals(table.view()) == [20, 60, 15]

    # Only the latest change can be undone, through the table's generic undo.
    first_round_seq = next(e["seq"] for e in table.service.history(table.service.snapshot()[1]["game"]["game_id"])
                           if e["type"] == "round_entered")
    with pytest.raises(RuleError, match="only the latest change"):
        table.cmd("undo", {"seq": first_round_seq})
    table.cmd("undo")
    assert _totals(table.view()) == [20, 65, 15]
    undo_round2 = table.cmd("undo")["events"][0]["seq"]
    assert _totals(table.view()) == [0, 65, 10]
    assert table.view()["next"]["round"] == 2

    # A new round 2, then a redo of the old round 2 would not add up: refused.
    table.cmd("enter_round", _round([a, b, c], c, {a: 1, b: 2}))
    with pytest.raises(RuleError, match="cannot undo event"):
        table.cmd("undo", {"seq": undo_round2})
    view = table.view()
    assert _totals(view) == [1, 67, 10]

    table.restart()
    assert table.view() == view, "a restart replays the log to the same sheet"

    table.cmd("enter_round", _round([a, b, c], a, {b: 40, c: 3}))
    state = table.service.snapshot()[1]["game"]
    assert state["outcome"]["winners"] == [a]
    assert state["view"]["over"] is True


def test_statistics_and_csv_from_the_table_log(table: Table):
    a, b, c = table.seat(["Ann", "Bob", "Cat"])
    # Game 1: Ann wins.
    table.cmd("start_game", {"kind": "tap4", "settings": {"target": 50}})
    table.cmd("enter_round", _round([a, b, c], a, {b: 30, c: 10}))
    table.cmd("enter_round", _round([a, b, c], a, {b: 25, c: 12}))
    table.cmd("end_game")
    # Game 2: Bob and Cat tie for the win; an undone round does not count.
    table.cmd("start_game", {"kind": "tap4", "settings": {"target": 50}})
    table.cmd("enter_round", _round([a, b, c], b, {a: 99, c: 5}))
    table.cmd("undo")
    table.cmd("enter_round", _round([a, b, c], b, {a: 40, c: 5}))
    table.cmd("enter_round", _round([a, b, c], c, {a: 20, b: 5}))
    table.cmd("end_game")
    # Game 3: no rounds: not counted as played.
    table.cmd("start_game", {"kind": "tap4"})
    table.cmd("end_game")

    stats = {s["name"]: s for s in player_stats(table.service.game_events("tap4"))}
    assert stats["Ann"] == {"player": a, "name": "Ann", "games": 2, "finished": 2, "wins": 1, "rounds": 4,
                            "average_round": 15.0, "best_round": 0, "worst_round": 40, "went_out": 2,
                            "went_out_share": 0.5}
    assert stats["Bob"]["wins"] == 1 and stats["Cat"]["wins"] == 1
    assert stats["Bob"]["best_round"] == 0 and stats["Bob"]["worst_round"] == 30
    assert stats["Cat"]["average_round"] == round((10 + 12 + 5 + 0) / 4, 1)
    assert stats["Cat"]["went_out"] == 1

    past = [g for g in table.service.past_games() if g["kind"] == "tap4"]
    game2 = next(g for g in past if g["outcome"] and set(g["outcome"]["winners"]) == {b, c})
    sheet = rebuild_from_summary(game2, table.service.history(game2["game_id"]))
    lines = sheet_csv(sheet.view()).splitlines()
    assert lines[0] == "round,dealer,starter,went out,Ann,Ann total,Bob,Bob total,Cat,Cat total"
    assert lines[1] == "1,Cat,Ann,Bob,40,40,0,0,5,5"
    assert lines[-2] == "total,,,,,60,,5,,5"

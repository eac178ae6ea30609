"""Undo takes back a whole step: every event one command (or hit, or deadline) produced together."""

from __future__ import annotations

import pytest
from test_table import Table

from core.errors import RuleError


@pytest.fixture
def playing() -> Table:
    t = Table()
    t.run("add_player", name="Ann", pad=1)
    t.run("start_game", kind="counter", settings={"target": 10_000})
    t.run("add", n=1)
    return t


def test_undo_removes_every_event_of_the_last_command(playing: Table) -> None:
    step = playing.run("add_many", ns=[10, 20, 30])
    assert [e["data"]["_step"] for e in step] == [[1, 3], [2, 3], [3, 3]]
    assert playing.total == 61
    [undo] = playing.run("undo")
    assert undo["data"]["seqs"] == [e["seq"] for e in step]
    assert playing.total == 1
    playing.run("undo")
    assert playing.total == 0


def test_undo_of_a_middle_event_takes_its_whole_step_and_redo_restores_it(playing: Table) -> None:
    step = playing.run("add_many", ns=[10, 20])
    playing.run("add", n=100)
    [undo] = playing.run("undo", seq=step[1]["seq"])
    assert playing.total == 101
    playing.run("undo", seq=undo["seq"])  # redo
    assert playing.total == 131


def test_a_step_with_an_event_the_game_refuses_to_undo_is_refused_whole(playing: Table) -> None:
    playing.run("add_many", ns=[10, "lock"])
    with pytest.raises(RuleError, match="locked"):
        playing.run("undo")
    assert playing.total == 12


def test_games_never_see_the_step_mark(playing: Table) -> None:
    playing.run("add_many", ns=[5, 6])
    game = playing.state.active.game
    assert game.total == 12
    # A refold (what undo and replay do) gives the same state.
    playing.run("add", n=1)
    playing.run("undo")
    assert playing.state.active.game.total == 12


def test_single_event_commands_carry_no_mark(playing: Table) -> None:
    [event] = playing.run("add", n=2)
    assert "_step" not in event["data"]

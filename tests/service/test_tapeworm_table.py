"""Tapeworm on the real table service: undo is an event, and a restart mid-game comes back exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from helpers.table import Table, open_table

from core.errors import RuleError
from companion.games.tapeworm import Tapeworm


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    """Ann, Bob and Cat at the table and a 40-card Tapeworm game that Bob starts."""
    with open_table(tmp_path / "data", games={"tapeworm": Tapeworm}) as t:
        ids = t.seat(["Ann", "Bob", "Cat"])
        t.cmd("start_game", {"kind": "tapeworm", "settings": {"deck_size": 40, "first_player": ids[1]}})
        yield t


def hands(table: Table) -> dict[int, int]:
    return {h["player"]: h["cards"] for h in table.view()["hands"]}


def test_undo_takes_back_the_last_action_as_a_new_event(table: Table) -> None:
    ann, bob, cat = table.player_ids
    table.cmd("draw")
    table.cmd("hatch", {"target": cat})
    assert hands(table) == {ann: 5, bob: 5, cat: 6}
    undone = table.cmd("undo")
    assert undone["events"][0]["type"] == "undo"
    assert hands(table) == {ann: 5, bob: 6, cat: 5} and table.view()["worm"] == 0
    # The history keeps both the Hatch and its undo.
    game_id = table.game()["game_id"]
    types = [e["type"] for e in table.service.history(game_id)]
    assert "drew" in types and types[-1] == "undo"
    with pytest.raises(RuleError):
        table.cmd("draw")  # the draw itself was not undone


def test_restart_in_the_middle_of_a_game_comes_back_exactly(table: Table) -> None:
    ann, bob, cat = table.player_ids
    table.cmd("draw")
    table.cmd("play", {"count": 2})
    table.cmd("end_turn")
    table.cmd("draw")
    table.cmd("dig")
    before = table.view()
    table.restart()
    assert table.view() == before
    assert before["current"] == cat and before["has_drawn"] is True
    table.cmd("end_turn")
    assert table.view()["current"] == ann


def test_winner_is_named_and_the_game_refuses_more_play(table: Table) -> None:
    ann, bob, cat = table.player_ids
    table.cmd("draw")
    table.cmd("play", {"count": 6})
    table.cmd("end_turn")
    assert table.game()["outcome"]["winners"] == [bob]
    with pytest.raises(RuleError, match="game is over"):
        table.cmd("draw")


def test_the_deal_cannot_be_undone(table: Table) -> None:
    assert table.game()["can_undo"] is False
    with pytest.raises(RuleError, match="deal cannot be undone"):
        table.cmd("undo")

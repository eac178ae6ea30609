"""TacTile on the real table service: SQLite log, generic undo within a turn, undo_turn, redo refused, restart."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from helpers.tactile import start_entered_game
from helpers.table import Table, open_table

from core.errors import RuleError
from companion.games.tactile import TacTile

@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    with open_table(tmp_path / "data", games={"tactile": TacTile}) as t:
        yield t


def test_tactile_through_the_table(table: Table) -> None:
    ann = table.cmd("add_player", {"name": "Ann"})["events"][0]["data"]["id"]
    bob = table.cmd("add_player", {"name": "Bob"})["events"][0]["data"]["id"]
    start_entered_game(table.cmd)
    view = table.game()["view"]
    assert (view["phase"], view["turn"]["player"], view["market"]["pending"]) == ("play", ann, [])

    table.cmd("move", {"disc": f"{ann}a", "to": "b1"})
    table.cmd("gain", {"colour": "red"})
    assert table.game()["can_undo"]
    table.cmd("undo")  # the gain
    view = table.game()["view"]
    assert (view["players"][0]["resources"]["red"], view["turn"]["basics_used"]) == (0, ["move"])
    with pytest.raises(RuleError, match="already took the basic action Move"):
        table.cmd("move", {"disc": f"{ann}b", "to": "a2"})
    table.cmd("gain", {"colour": "red"})
    table.cmd("end_turn")
    assert not table.game()["can_undo"]
    with pytest.raises(RuleError, match="that turn is over"):
        table.cmd("undo")

    # A step in the middle of a turn cannot be undone before the later ones.
    move = table.cmd("move", {"disc": f"{bob}a", "to": "f5"})["events"][0]["seq"]
    gain = table.cmd("gain", {"colour": "green"})["events"][0]["seq"]
    with pytest.raises(RuleError, match="only the latest step"):
        table.cmd("undo", {"seq": move})
    # Undo the gain and gain again: a redo of the first gain would be a second Gain, so the table refuses it.
    undo_gain = table.cmd("undo")["events"][0]["seq"]
    table.cmd("gain", {"colour": "green"})
    with pytest.raises(RuleError, match="cannot undo event"):
        table.cmd("undo", {"seq": undo_gain})  # redoing the old gain would be a second Gain
    assert gain < undo_gain

    table.cmd("undo_turn")
    view = table.game()["view"]
    assert (view["turn"]["player"], view["turn"]["number"], view["discs"][f"{ann}a"]["tile"]) == (ann, 1, "a1")
    assert view["market"]["pending"] == [], "the cards on the table when the turn began stay known"

    table.cmd("move", {"disc": f"{ann}a", "to": "a2"})
    before = table.game()
    table.close()
    table.open()
    assert table.game() == before, "a restart replays the log to the same game"

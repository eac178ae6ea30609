"""TacTile on the real table service: SQLite log, generic undo within a turn, undo_turn, redo refused, restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.errors import RuleError
from companion.games.tactile import TacTile
from companion.service import TableService
from companion.store import EventStore
from hardware.sim import SimulatedPads

LAYOUT = ["hrygbh", "rygbry", "gbrygb", "brygbr", "ygbryg", "hbrygh"]
MARKET = [
    {"colour": "blue", "type": "move", "cost": {"red": 1}},
    {"colour": "green", "type": "push", "cost": {"red": 1}},
    {"colour": "red", "type": "gain", "cost": {"red": 1}},
    {"colour": "yellow", "type": "gain", "cost": {"blue": 2}},
    {"colour": "yellow", "type": "push", "cost": {"green": 2}},
    {"colour": "red", "type": "move", "cost": {"yellow": 3}},
]


class Table:
    """A TableService on a real SQLite file; ``restart()`` opens a new service on the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open()

    def open(self) -> None:
        self.store = EventStore(self.path)
        self.service = TableService(self.store, SimulatedPads(4), games={"tactile": TacTile})
        self.service.start()

    def close(self) -> None:
        self.service.stop()
        self.store.close()

    def cmd(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.service.submit(name, args or {}, actor="test", timeout=30)

    def game(self) -> dict[str, Any]:
        return self.service.snapshot()[1]["game"]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path / "table.db")
    try:
        yield t
    finally:
        t.close()


def test_tactile_through_the_table(table: Table) -> None:
    ann = table.cmd("add_player", {"name": "Ann"})["events"][0]["data"]["id"]
    bob = table.cmd("add_player", {"name": "Bob"})["events"][0]["data"]["id"]
    table.cmd("start_game", {"kind": "tactile", "settings": {"layout": "enter"}})
    table.cmd("set_layout", {"rows": LAYOUT})
    for slot, face in enumerate(MARKET, start=1):
        table.cmd("enter_card", {"slot": slot, **face})
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

"""A real, restartable table for game tests: a started TableService on a real SQLite log.

``restart()`` stops the service, closes its store and opens a new service on the
same file, so a test can prove that replaying the log gives back the same game::

    from helpers.table import open_table

    @pytest.fixture
    def table(tmp_path):
        with open_table(tmp_path / "data", games={"tactile": TacTile}) as t:
            yield t
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from companion.games.base import Game
from companion.service import TableService

from helpers.browser import make_service, stop_service


class Table:
    """A started TableService (4 simulated pads) on a real EventStore in ``data_dir``."""

    def __init__(self, data_dir: Path, games: Mapping[str, type[Game]]) -> None:
        self.data_dir = data_dir
        self.games = dict(games)
        #: The ids of the players ``seat()`` added, in order.
        self.player_ids: list[int] = []
        self.service: TableService = self._new_service()

    def _new_service(self) -> TableService:
        return make_service(self.data_dir, games=self.games)

    def open(self) -> None:
        """Start a new service on the same log (after ``close()``)."""
        self.service = self._new_service()

    def close(self) -> None:
        """Stop the service and close its store."""
        stop_service(self.service)

    def restart(self) -> None:
        """Stop and open again: the new service replays the log."""
        self.close()
        self.open()

    def cmd(self, name: str, args: dict[str, Any] | None = None, actor: str | None = "test") -> dict[str, Any]:
        """Submit a command and wait for its result (RuleError etc. raised)."""
        return self.service.submit(name, args or {}, actor=actor, timeout=30)

    def game(self) -> dict[str, Any]:
        """The current game's public state (view, can_undo, outcome, ...)."""
        return self.service.snapshot()[1]["game"]

    def view(self) -> dict[str, Any]:
        """The current game's view."""
        return self.game()["view"]

    def seat(self, names: list[str]) -> list[int]:
        """Add a player per name; their ids in order (also kept in ``player_ids``)."""
        ids = [self.cmd("add_player", {"name": name})["events"][0]["data"]["id"] for name in names]
        self.player_ids += ids
        return ids


@contextmanager
def open_table(data_dir: Path, games: Mapping[str, type[Game]]) -> Iterator[Table]:
    """A started Table, closed afterwards (also when the test fails)."""
    table = Table(data_dir, games)
    try:
        yield table
    finally:
        table.close()

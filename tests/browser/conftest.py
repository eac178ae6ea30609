"""Fixtures the browser tests share (a test module may define its own of the same name)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from helpers.browser import LiveServer, serve_all_games


@pytest.fixture
def games_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A live server with the four real games and 4 simulated pads, no players yet."""
    yield from serve_all_games(tmp_path / "data")

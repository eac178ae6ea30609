"""Games without the table, for rules tests: seat players, start, and play commands by folding their events."""

from __future__ import annotations

from typing import Any

from companion.games.base import Command, Game, Player


def started(cls: type[Game], players: int, settings: dict[str, Any], seed: int = 1) -> Game:
    """A game of ``cls`` for players 1..``players`` (pad = id), its start events folded in."""
    game = cls([Player(i, f"P{i}", pad=i) for i in range(1, players + 1)], settings)
    for event in game.start(Command("start", seed=seed)):
        game.evolve(event)
    return game


def play(game: Game, name: str, args: dict[str, Any] | None = None) -> None:
    """Decide one command and fold its events (raises, changing nothing, when refused)."""
    for event in game.decide(Command(name, args or {})):
        game.evolve(event)

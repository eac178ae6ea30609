"""Pure game rules. No I/O, no threads, no clock reads, no Flask, no gpiozero.

Each game is a :class:`companion.games.base.Game` subclass registered in
:data:`GAMES` by its ``kind``. Time arrives inside hits and commands.
"""

from __future__ import annotations

from companion.games.base import Game

#: The game kit itself (companion/games/base.py and its parts): no game in them.
KIT_MODULES = ("args", "base", "outcome", "settings")
#: kind -> Game class; filled by ``register``.
GAMES: dict[str, type[Game]] = {}


def register(cls: type[Game]) -> type[Game]:
    """Class decorator: make a game available to the table under ``cls.kind``."""
    GAMES[cls.kind] = cls
    return cls


def load_games() -> dict[str, type[Game]]:
    """Import every game module so each registers itself; return the registry."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if info.name not in KIT_MODULES and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return GAMES

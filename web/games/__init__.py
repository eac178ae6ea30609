"""Optional server-side extras of each game: ``web/games/<kind>.py`` exposing a blueprint ``bp``.

Each module found here is imported and its ``bp`` registered by the app
factory, so a game adds a chart or an export without touching the web core.
A module without ``bp`` is skipped with a warning.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

from flask import Blueprint, Flask

log = logging.getLogger(__name__)


def register_game_blueprints(app: Flask) -> list[str]:
    """Register the ``bp`` of every module in this package; returns the module names."""
    registered: list[str] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        bp = getattr(module, "bp", None)
        if not isinstance(bp, Blueprint):
            log.warning("web/games/%s.py has no Flask blueprint named bp; skipped", info.name)
            continue
        app.register_blueprint(bp)
        registered.append(info.name)
    return registered

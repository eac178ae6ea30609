"""Optional server-side extras of each game: ``web/games/<kind>.py`` exposing a blueprint ``bp``.

Each module found here is imported and its ``bp`` registered by the app
factory, so a game adds a chart or an export without touching the web core.
A module without ``bp`` is skipped with a warning.

Every game's endpoints live under ``/api/games/<kind>/`` (``url_prefix`` of
its blueprint, see :func:`api_prefix`), beside the table's own JSON API. The
old ``/games/<kind>/...`` paths redirect there (308, query string kept), so
bookmarks and scripts written for them keep working.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

from flask import Blueprint, Flask, redirect, request
from flask.typing import ResponseReturnValue

from core.errors import NotFoundError

log = logging.getLogger(__name__)


def api_prefix(kind: str) -> str:
    """The URL prefix of a game's endpoints: ``/api/games/<kind>``."""
    return f"/api/games/{kind}"


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
    _register_old_paths(app, frozenset(registered))
    return registered


def _register_old_paths(app: Flask, kinds: frozenset[str]) -> None:
    """Redirect the old ``/games/<kind>/<rest>`` paths to ``/api/games/<kind>/<rest>``."""

    def old_game_path(kind: str, rest: str) -> ResponseReturnValue:
        if kind not in kinds:
            raise NotFoundError(f"no API endpoint for a game '{kind}'; game endpoints are under /api/games/<kind>/ (see docs/api.md)")
        target = f"{api_prefix(kind)}/{rest}"
        if request.query_string:
            target += "?" + request.query_string.decode("latin-1")
        return redirect(target, code=308)

    app.add_url_rule("/games/<kind>/<path:rest>", "old_game_path", old_game_path, methods=["GET", "HEAD"])

"""Taco Hat Cake Gift Pizza extras on the server: per-player statistics across games, and one game's verdicts.

Routes only read the table's log through the service's public methods and
fold it with the pure functions of ``companion.games.taco_stats``. Reading
needs no PIN, like the rest of the table's history.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify
from flask.typing import ResponseReturnValue

from core.errors import NotFoundError
from companion.games.taco_sheet import verdicts_csv
from companion.games.taco_stats import taco_stats
from web.games import api_prefix
from web.helpers import current_service

bp = Blueprint("taco", __name__, url_prefix=api_prefix("taco"))


@bp.get("/stats.json")
def stats() -> ResponseReturnValue:
    """Per player across every Taco game: reaction median/best, flinches, piles, cards taken, wins, games."""
    rows = taco_stats(current_service().game_events("taco"))
    response = jsonify(players=rows)
    response.headers["Cache-Control"] = "no-store"
    return response


def _taco_game(game_id: int) -> dict[str, Any]:
    """The summary of Taco game ``game_id``, or NotFoundError."""
    games = {g["game_id"]: g for g in current_service().past_games()}
    game = games.get(game_id)
    if game is None or game.get("kind") != "taco":
        raise NotFoundError(f"there is no Taco Hat Cake Gift Pizza game {game_id}; GET /api/games/taco/stats.json for all games")
    return game


@bp.get("/<int:game_id>/verdicts.json")
def verdicts(game_id: int) -> ResponseReturnValue:
    """Every verdict and overrule of one game (undone ones marked by the history), oldest first."""
    game = _taco_game(game_id)
    events = [e for e in current_service().history(game_id) if e["type"] in ("verdict", "overruled")]
    response = jsonify(game=game, events=events)
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/<int:game_id>/verdicts.csv")
def verdicts_csv_download(game_id: int) -> ResponseReturnValue:
    """One game's verdicts as a spreadsheet table: a row per verdict, a reaction column per player."""
    game = _taco_game(game_id)
    body = verdicts_csv(game.get("players", []), current_service().history(game_id))
    response = Response(body, mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="taco-game-{game_id}-verdicts.csv"'
    response.headers["Cache-Control"] = "no-store"
    return response

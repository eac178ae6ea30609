"""Tap 4 extras on the server: the running-totals chart (SVG), the sheet as CSV, past games and statistics.

Every route only reads the table's log through the service's public methods
and folds it with the pure functions of ``companion.games.tap4_stats``.
Reading needs no PIN, like the rest of the table's history.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify
from flask.typing import ResponseReturnValue

from core.errors import NotFoundError
from companion.games.tap4 import Tap4
from companion.games.tap4_chart import running_totals_svg
from companion.games.tap4_stats import player_stats, rebuild_from_summary, sheet_csv
from web.games import api_prefix
from web.helpers import current_service

bp = Blueprint("tap4", __name__, url_prefix=api_prefix("tap4"))


def _summary(game_id: int) -> dict[str, Any]:
    for game in current_service().past_games():
        if game.get("game_id") == game_id:
            if game.get("kind") != Tap4.kind:
                raise NotFoundError(f"game {game_id} is {game.get('title') or game.get('kind')}, not Tap 4")
            return game
    raise NotFoundError(f"there is no game {game_id}; GET /api/games/tap4/summary lists the Tap 4 games")


def _sheet(game_id: int) -> Tap4:
    return rebuild_from_summary(_summary(game_id), current_service().history(game_id))


def _no_store(response: Response) -> Response:
    # The sheet changes with every round; phones must not show a stale copy.
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/<int:game_id>/chart.svg")
def chart(game_id: int) -> ResponseReturnValue:
    """Running totals per player over the rounds of one game, as SVG sized for a phone."""
    svg = running_totals_svg(_sheet(game_id).view())
    return _no_store(Response(svg, mimetype="image/svg+xml"))


@bp.get("/<int:game_id>/sheet.csv")
def csv_export(game_id: int) -> ResponseReturnValue:
    """The score sheet as CSV: a row per round with points and running totals, then totals and places."""
    response = Response(sheet_csv(_sheet(game_id).view()), mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="tap4-game-{game_id}.csv"'
    return _no_store(response)


@bp.get("/<int:game_id>/sheet.json")
def sheet_json(game_id: int) -> ResponseReturnValue:
    """One game's sheet (the same view phones show live) and its outcome, for looking back."""
    sheet = _sheet(game_id)
    return _no_store(jsonify(game=_summary(game_id), view=sheet.view(), outcome=sheet.outcome()))


@bp.get("/summary")
def summary() -> ResponseReturnValue:
    """Past Tap 4 games (newest first) with winners' names, and per-player statistics across them."""
    service = current_service()
    games = []
    for game in service.past_games():
        if game.get("kind") != Tap4.kind:
            continue
        sheet = rebuild_from_summary(game, service.history(game["game_id"]))
        outcome = sheet.outcome()
        names = {p.id: p.name for p in sheet.players}
        games.append(
            {
                "game_id": game["game_id"],
                "started": game.get("started"),
                "ended": game.get("ended"),
                "rounds": len(sheet.view()["rounds"]),
                "winners": [names[w] for w in outcome["winners"]] if outcome else [],
                "totals": [{"name": p.name, "total": t} for p, t in zip(sheet.players, sheet.totals())],
            }
        )
    return _no_store(jsonify(games=games, stats=player_stats(service.game_events(Tap4.kind))))

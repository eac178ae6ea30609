"""The end of a game and the table's history: results, rematch, past games, records per player.

Every endpoint is documented in docs/api.md ("Results and history"). Reading
is open like the rest of the history; a rematch starts a game, so it needs
the PIN. The figures are pure functions of the log (``companion.results``);
this blueprint only reads the table through the service's public methods.
"""

from __future__ import annotations

from typing import Any, Mapping

from flask import Blueprint, jsonify, render_template
from flask.typing import ResponseReturnValue

from core.errors import InputError, NotFoundError, RuleError
from companion.results import game_results, played_game, player_records, rematch_args
from web.helpers import check_keys, current_service, json_object
from web.security import actor_label, require_pin

bp = Blueprint("results", __name__)


def _no_store(response: Any) -> Any:
    # Results change with every overrule and every new game: phones must not keep a stale copy.
    response.headers["Cache-Control"] = "no-store"
    return response


def _results_of(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The results of one past or running game (a running one is read from its live view)."""
    service = current_service()
    live = (service.snapshot()[1].get("game") or {})
    live_view = live.get("view") if live.get("game_id") == summary["game_id"] and summary.get("ended") is None else None
    events = service.history(summary["game_id"])
    return game_results(summary, events, service.games.get(str(summary.get("kind"))), live_view)


def _summary(game_id: int) -> dict[str, Any]:
    for game in current_service().past_games():
        if game.get("game_id") == game_id:
            return game
    raise NotFoundError(f"there is no game {game_id}; GET /api/history lists the games played")


def latest_finished() -> dict[str, Any] | None:
    """The newest game that has ended or been won (its summary), or None before the first."""
    for game in current_service().past_games():
        if game.get("ended") is not None or game.get("outcome") is not None:
            return game
    return None


@bp.get("/api/games/<int:game_id>/results")
def results(game_id: int) -> ResponseReturnValue:
    """Podium, standings, highlights and rematch arguments of one game."""
    return _no_store(jsonify(_results_of(_summary(game_id))))


@bp.get("/api/results/latest")
def latest() -> ResponseReturnValue:
    """The results of the newest game that has ended or been won: ``{"results": {...} | null}``."""
    summary = latest_finished()
    return _no_store(jsonify(results=_results_of(summary) if summary else None))


@bp.post("/api/rematch")
@require_pin
def rematch() -> ResponseReturnValue:
    """Start the same game again with the same players and settings (a new shuffle)."""
    body = json_object()
    check_keys(body, {"game_id"})
    game_id = body.get("game_id")
    if game_id is None:
        summary = latest_finished()
        if summary is None:
            raise RuleError("no game has been played yet, so there is nothing to play again; start one instead")
    elif isinstance(game_id, bool) or not isinstance(game_id, int):
        raise InputError(f"'game_id' must be a game number (see GET /api/history), got {game_id!r}")
    else:
        summary = _summary(game_id)
    args = rematch_args(summary)
    seated = {p["id"] for p in current_service().snapshot()[1].get("players", [])}
    gone = [p["name"] for p in summary.get("players", []) if isinstance(p, Mapping) and p.get("id") not in seated]
    if gone:
        raise RuleError(f"{', '.join(gone)} left the table since that game; start a new game with who is here")
    answer = current_service().submit("start_game", args, actor=actor_label())
    return jsonify(answer)


@bp.get("/api/history")
def history() -> ResponseReturnValue:
    """Every game played at this table, newest first, with date, duration, players and winners."""
    return _no_store(jsonify(games=[played_game(g) for g in current_service().past_games()]))


@bp.get("/api/records")
def records() -> ResponseReturnValue:
    """Per-player records across every game and night: games and wins per game, reaction times, flinches."""
    service = current_service()
    games = [(g, service.history(g["game_id"])) for g in reversed(service.past_games())]
    return _no_store(jsonify(players=player_records(games)))


@bp.get("/history")
def history_page() -> ResponseReturnValue:
    """Past games and records per player, as tables a person reads."""
    return render_template("history.html")

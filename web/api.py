"""The JSON API beside the pages: health, state, the live stream, commands, past games.

Every endpoint is documented in docs/api.md. Reading is open; ``POST
/api/command`` needs the table PIN (a trusted session) and a CSRF token.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from core.errors import InputError, NotFoundError
from companion.text import dumps_json, printable
from web.helpers import ApiError, check_keys, current_service, current_table, json_object
from web.security import actor_label, client_address, is_trusted, require_pin
from web.sse import EventStream
from web.streams import AdmittedStream, StreamRefusal, StreamSlots

bp = Blueprint("api", __name__, url_prefix="/api")

#: Command names are identifiers such as ``add_player`` or ``enter_round``.
COMMAND_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


#: /api/health's ``status`` for each kind of event-log problem (companion.store.LogProblem).
LOG_PROBLEM_STATUS = {"full": "disk full", "read_only": "log read-only", "io": "log I/O error", "locked": "log locked"}


@bp.get("/health")
def health() -> ResponseReturnValue:
    """Is the table loop alive, and what does the pad source say."""
    table = current_table()
    service = table.service
    seq, state = service.snapshot()
    source_status = service.pad_status()["status"]  # a failing source's error, never an exception
    table_status = service.status()
    running = bool(table_status.get("running", True)) and not table.stopping.is_set()
    problem = table_status.get("log_problem")
    body: dict[str, Any] = {"status": "ok" if running else "stopping"}
    if running and problem:
        # Running but recording nothing is not healthy: say why (a full disk, a read-only log).
        body = {"status": LOG_PROBLEM_STATUS.get(problem["kind"], "log error"), "error": problem["message"]}
    response = jsonify(
        **body,
        seq=seq,
        table=table_status,
        pads=source_status,
        phone_pads=service.phone_pads.status(),
        game=(state.get("game") or {}).get("kind"),
    )
    response.status_code = 200 if body["status"] == "ok" else 503
    return response


@bp.get("/state")
def state() -> ResponseReturnValue:
    """Everything a phone shows, as JSON (the same dict the SSE ``state`` message carries)."""
    _seq, snapshot = current_service().snapshot()
    return jsonify(snapshot)


def _resume_point() -> int | None:
    """Where a client resumes: the Last-Event-ID header first (browsers), else ``?after=``."""
    raw = request.headers.get("Last-Event-ID")
    source = "Last-Event-ID header"
    if raw is None or raw.strip() == "":
        raw = request.args.get("after")
        source = "'after' parameter"
    if raw is None or raw.strip() == "":
        return None
    raw = raw.strip()
    # isascii: str.isdigit() also accepts "²" and other digits int() refuses.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise ApiError(400, f"the {source} must be a log sequence number (a whole number from 0), got {raw!r}")
    return int(raw)


@bp.get("/events")
def events() -> ResponseReturnValue:
    """The live SSE stream (see web.sse for the message design)."""
    after = _resume_point()
    table = current_table()
    config = current_app.config
    slots: StreamSlots = current_app.extensions["tabletop_streams"]
    admitted = slots.admit(client_address(), is_trusted())
    if isinstance(admitted, StreamRefusal):
        # Refused at once: a thread spent for a moment, not for the evening (web.streams).
        raise ApiError(503, admitted.message, {"Retry-After": str(admitted.retry_after)})
    try:
        stream = _open_stream(table, after, config)
    except BaseException:
        admitted()
        raise
    response = Response(AdmittedStream(stream, admitted), mimetype="text/event-stream", direct_passthrough=True)
    response.headers["Cache-Control"] = "no-cache, no-transform"
    # Tell a reverse proxy (nginx) not to buffer the stream.
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _open_stream(table: Any, after: int | None, config: Any) -> EventStream:
    """The EventStream of one admitted client."""
    return EventStream(
        table.service,
        after,
        keepalive_s=float(config["SSE_KEEPALIVE_S"]),
        retry_ms=int(config["SSE_RETRY_MS"]),
        poll_s=float(config["SSE_POLL_S"]),
        page=int(config["SSE_BACKLOG_PAGE"]),
        stopping=table.stopping,
        disconnected=request.environ.get("waitress.client_disconnected"),
    )


@bp.post("/command")
@require_pin
def command() -> ResponseReturnValue:
    """Submit a command to the table loop; answers once its events are durably logged."""
    body = json_object()
    check_keys(body, {"name", "args"})
    name = body.get("name")
    if name is None:
        raise InputError("'name' is missing; send {\"name\": \"add_player\", \"args\": {...}}")
    if not isinstance(name, str) or not COMMAND_NAME.match(name):
        raise InputError(f"'name' must be a command name such as \"add_player\", got {name!r}")
    args = body.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise InputError(f"'args' must be a JSON object, got {type(args).__name__}")
    service = current_service()
    try:
        result = service.submit(name, args, actor=actor_label())
    except RuntimeError as exc:
        if service.running:
            raise  # a bug inside the table service: the 500 handler logs it
        raise ApiError(503, f"the table service is not running ({exc}); restart tabletop serve") from None
    return jsonify(result)


@bp.get("/games")
def games() -> ResponseReturnValue:
    """Every game played at this table, newest first."""
    return jsonify(games=current_service().past_games())


def _game_summary(game_id: int) -> dict[str, Any]:
    for game in current_service().past_games():
        if game.get("game_id") == game_id:
            return game
    raise NotFoundError(f"there is no game {game_id}; GET /api/games lists them")


@bp.get("/games/<int:game_id>/history")
def history(game_id: int) -> ResponseReturnValue:
    """Every event of one game, in order, undone ones marked."""
    summary = _game_summary(game_id)
    return jsonify(game=summary, events=current_service().history(game_id))


@bp.get("/games/<int:game_id>/export.json")
def export_json(game_id: int) -> ResponseReturnValue:
    """The game's summary and full history as a downloadable JSON file."""
    summary = _game_summary(game_id)
    # dumps_json: a name stored before the text rules (a lone surrogate) must not break the download.
    body = dumps_json({"game": summary, "events": current_service().history(game_id)}, indent=2)
    response = Response(body, mimetype="application/json")
    response.headers["Content-Disposition"] = f'attachment; filename="game-{game_id}.json"'
    return response


CSV_COLUMNS = ("seq", "at", "type", "actor", "undone", "data")


@bp.get("/games/<int:game_id>/export.csv")
def export_csv(game_id: int) -> ResponseReturnValue:
    """The game's history as CSV, one event per row (``data`` as JSON in one cell)."""
    _game_summary(game_id)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for event in current_service().history(game_id):
        writer.writerow(
            [
                event.get("seq"),
                event.get("at"),
                event.get("type"),
                printable(str(event.get("actor") or "")),
                "yes" if event.get("undone") else "",
                dumps_json(event.get("data", {}), separators=(",", ":")),
            ]
        )
    response = Response(out.getvalue(), mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="game-{game_id}.csv"'
    return response

"""Small things every blueprint needs: the current table, JSON bodies, error responses."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NoReturn

from flask import Response, current_app, jsonify, request

from core.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from companion.service import TableService
    from web import TableContext


class ApiError(Exception):
    """An error the web layer itself raises: becomes ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def current_table() -> "TableContext":
    """The TableContext of the app handling this request."""
    return current_app.extensions["tabletop"]


def current_service() -> "TableService":
    """The TableService of the app handling this request."""
    return current_table().service


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """The one error shape of the API: ``{"error": "..."}`` with a 4xx/5xx status."""
    response = jsonify(error=message)
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


class _NotJson(ValueError):
    """NaN or Infinity in a body: Python's json reads them, JSON itself has no such values."""


def _not_json(name: str) -> NoReturn:
    raise _NotJson(f"{name} is not a JSON number; send a finite number")


def json_object() -> dict[str, Any]:
    """The request body as a JSON object, or ApiError saying what is wrong with it."""
    if not request.is_json:
        raise ApiError(
            415,
            f"the body must be JSON sent with 'Content-Type: application/json', got {request.mimetype or 'no content type'!r}",
        )
    try:
        # Parsed here rather than by request.get_json: NaN and Infinity are not JSON (a browser's
        # JSON.parse rejects them, so one stored in the log would break every phone's live stream),
        # and a body nested thousands deep raises RecursionError, not ValueError.
        data = json.loads(request.get_data(cache=True), parse_constant=_not_json)
    except RecursionError:
        raise ApiError(400, "the body is nested too deeply; send a flat object such as {\"name\": \"...\"}") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        detail = str(exc.args[0]) if isinstance(exc, _NotJson) else "send an object such as {\"name\": \"...\"}"
        raise ApiError(400, f"the body is not valid JSON; {detail}") from None
    if data is None:
        raise ApiError(400, "the body is JSON null; send an object such as {\"name\": \"...\"}")
    if not isinstance(data, dict):
        raise ApiError(400, f"the body must be a JSON object, got {type(data).__name__}")
    return data


def check_keys(data: dict[str, Any], allowed: set[str], where: str = "the body") -> None:
    """InputError naming the first unknown key (a typo should not be silently ignored)."""
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"{where} has an unknown field {unknown[0]!r}; valid fields: {', '.join(sorted(allowed))}")


def refuse_hit_if_log_broken(service: "TableService") -> None:
    """503 with Retry-After when the event log cannot record: a hit is refused, not queued to be dropped."""
    problem = service.log_problem()
    if problem is not None:
        raise ApiError(503, f"the hit was not recorded: {problem['message']}", {"Retry-After": "2"})

"""Small things every blueprint needs: the current table, JSON bodies, error responses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import current_app, jsonify, request
from flask.typing import ResponseReturnValue

from companion.errors import InputError

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


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> ResponseReturnValue:
    """The one error shape of the API: ``{"error": "..."}`` with a 4xx/5xx status."""
    response = jsonify(error=message)
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def json_object() -> dict[str, Any]:
    """The request body as a JSON object, or ApiError saying what is wrong with it."""
    if not request.is_json:
        raise ApiError(
            415,
            f"the body must be JSON sent with 'Content-Type: application/json', got {request.mimetype or 'no content type'!r}",
        )
    data = request.get_json(silent=True)
    if data is None:
        raise ApiError(400, "the body is not valid JSON; send an object such as {\"name\": \"...\"}")
    if not isinstance(data, dict):
        raise ApiError(400, f"the body must be a JSON object, got {type(data).__name__}")
    return data


def check_keys(data: dict[str, Any], allowed: set[str], where: str = "the body") -> None:
    """InputError naming the first unknown key (a typo should not be silently ignored)."""
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"{where} has an unknown field {unknown[0]!r}; valid fields: {', '.join(sorted(allowed))}")

"""Every error becomes a status and a message that says what to fix.

Under ``/api`` every error is JSON ``{"error": "..."}``; pages get Flask's HTML
pages for 404/405 but the same JSON for errors raised by the API helpers. A
500 is a bug: it is logged with its traceback and answered with a short JSON.
"""

from __future__ import annotations

import logging

from flask import Flask, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from core.errors import (
    CompanionError,
    ConfigError,
    InputError,
    NotFoundError,
    PadSourceError,
    PermissionDeniedError,
    RuleError,
    StoreError,
)
from web.helpers import ApiError, error_response

log = logging.getLogger(__name__)

#: Status for each of the service's errors (first match wins, subclasses first).
SERVICE_ERROR_STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (InputError, 400),
    (ConfigError, 400),
    (RuleError, 409),
    (NotFoundError, 404),
    (PermissionDeniedError, 403),
    (StoreError, 503),
    (PadSourceError, 503),
)


def status_for(exc: BaseException) -> int:
    """The HTTP status for an error raised by the service."""
    for kind, status in SERVICE_ERROR_STATUS:
        if isinstance(exc, kind):
            return status
    return 500


#: Path prefixes that serve data (JSON, SVG, CSV), never pages: their errors are JSON too.
JSON_PREFIXES = ("/api/", "/games/")


def _wants_json() -> bool:
    return request.path.startswith(JSON_PREFIXES) or request.path == "/api"


def register(app: Flask) -> None:
    """Install the error handlers on ``app``."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> ResponseReturnValue:
        return error_response(exc.status, exc.message, exc.headers)

    @app.errorhandler(CompanionError)
    def _service_error(exc: CompanionError) -> ResponseReturnValue:
        status = status_for(exc)
        if status >= 500:
            log.error("%s %s: %s", request.method, request.path, exc)
        return error_response(status, str(exc))

    @app.errorhandler(TimeoutError)
    def _timeout(exc: TimeoutError) -> ResponseReturnValue:
        # The table loop did not answer in time: nothing is known to be recorded.
        log.error("%s %s timed out: %s", request.method, request.path, exc)
        return error_response(503, f"the table did not answer in time ({exc}); try again")

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(exc: RequestEntityTooLarge) -> ResponseReturnValue:
        limit = app.config.get("MAX_CONTENT_LENGTH") or 0
        return error_response(413, f"the body is too large; the limit is {limit // 1024} KiB")

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> ResponseReturnValue:
        if not _wants_json():
            return exc
        code = exc.code or 500
        if code == 404:
            message = f"there is no API endpoint {request.path}; see docs/api.md"
        elif code == 405:
            allowed = ", ".join(sorted(exc.valid_methods or [])) if hasattr(exc, "valid_methods") else ""
            message = f"{request.method} is not allowed on {request.path}; use {allowed or 'another method'}"
        else:
            message = exc.description or exc.name
        response = error_response(code, message)
        for key, value in exc.get_headers():
            if key.lower() != "content-type":
                response.headers[key] = value  # e.g. Allow on a 405
        return response

    @app.errorhandler(Exception)
    def _bug(exc: Exception) -> ResponseReturnValue:
        if isinstance(exc, HTTPException):  # pragma: no cover - handled above
            return _http_error(exc)
        log.exception("unhandled error in %s %s (a bug)", request.method, request.path)
        return error_response(500, "internal error (a bug); the server log has the details")

"""Who may change things: the table PIN, trusted phones, CSRF tokens, PIN rate limits.

* Watching is open to anyone on the table's network.
* Changing anything needs the table PIN once; the phone is then trusted for
  ``PERMANENT_SESSION_LIFETIME`` (12 h) through Flask's signed session cookie.
  The trust is bound to the PIN: a new PIN revokes every phone.
* Every state-changing request carries the session's CSRF token, as the
  ``X-CSRF-Token`` header (app.js) or a ``csrf_token`` form field.
* Wrong PINs are limited per client address (5 a minute by default), then 429.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from typing import Any, Callable, TypeVar

from flask import current_app, request, session

from web.helpers import ApiError, current_table

F = TypeVar("F", bound=Callable[..., Any])

CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"


def csrf_token() -> str:
    """This session's CSRF token, created on first use."""
    token = session.get("csrf")
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        session["csrf"] = token
        session.permanent = True
    return token


def check_csrf() -> None:
    """ApiError 403 unless the request carries this session's CSRF token."""
    expected = session.get("csrf")
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        sent = request.form.get(CSRF_FIELD)
    if not expected or not sent or not hmac.compare_digest(str(expected), str(sent)):
        raise ApiError(
            403,
            f"missing or stale CSRF token: reload the page, or GET /api/session and send its csrf_token as the {CSRF_HEADER} header",
        )


def csrf_protect(view: F) -> F:
    """Decorator: the view needs a valid CSRF token."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_csrf()
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _pin_fingerprint(pin: str) -> str:
    # Stored in the (signed, not encrypted) cookie, so never the PIN itself.
    key = str(current_app.config["SECRET_KEY"]).encode()
    return hmac.new(key, b"pin:" + pin.encode(), hashlib.sha256).hexdigest()[:24]


def is_trusted() -> bool:
    """True when this session entered the current table PIN within the trust lifetime."""
    until = session.get("trusted_until")
    fingerprint = session.get("pin_fp")
    if not isinstance(until, (int, float)) or not isinstance(fingerprint, str):
        return False
    if time.time() >= until:
        return False
    return hmac.compare_digest(fingerprint, _pin_fingerprint(current_table().pin))


def trust_session() -> float:
    """Mark this session as trusted; returns the Unix time the trust ends."""
    lifetime = current_app.permanent_session_lifetime.total_seconds()
    until = time.time() + lifetime
    session.permanent = True
    session["trusted_until"] = until
    session["pin_fp"] = _pin_fingerprint(current_table().pin)
    session.setdefault("device", secrets.token_hex(3))
    csrf_token()
    return until


def actor_label() -> str:
    """Who is asking, for the event log: a short random id per phone."""
    device = session.get("device")
    if not isinstance(device, str):
        device = secrets.token_hex(3)
        session["device"] = device
    return f"phone:{device}"


def require_pin(view: F) -> F:
    """Decorator: CSRF token and a trusted session (the table PIN) are both needed."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_csrf()
        if not is_trusted():
            raise ApiError(403, "this needs the table PIN: open /pin, or POST it to /api/pin")
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class PinLimiter:
    """Counts wrong PINs per client in a sliding window; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str, now: float, window: float) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        while failures and failures[0] <= now - window:
            failures.popleft()
        return failures

    def retry_after(self, client: str, limit: int, window: float) -> int:
        """Seconds until ``client`` may try again (0: may try now)."""
        now = time.monotonic()
        with self._lock:
            failures = self._recent(client, now, window)
            if len(failures) < limit:
                if not failures:
                    self._failures.pop(client, None)  # keep the table small
                return 0
            return max(1, int(failures[0] + window - now + 0.999))

    def fail(self, client: str, window: float) -> None:
        """Record one wrong PIN from ``client``."""
        now = time.monotonic()
        with self._lock:
            self._recent(client, now, window).append(now)

    def forget(self, client: str) -> None:
        """A right PIN clears the client's record."""
        with self._lock:
            self._failures.pop(client, None)


def client_address() -> str:
    """The address a request came from (waitress sets REMOTE_ADDR)."""
    return request.remote_addr or "unknown"


def check_pin(pin: Any) -> float:
    """Trust the session if ``pin`` is the table PIN; returns when trust ends.

    Raises ApiError 429 (with Retry-After) while the client is rate-limited,
    400 for a malformed PIN, 403 for a wrong one.
    """
    app = current_app
    limiter: PinLimiter = app.extensions["tabletop_pin_limiter"]
    limit = int(app.config["PIN_ATTEMPTS"])
    window = float(app.config["PIN_WINDOW_S"])
    client = client_address()
    wait = limiter.retry_after(client, limit, window)
    if wait:
        raise ApiError(429, f"too many wrong PINs; try again in {wait} s", {"Retry-After": str(wait)})
    if not isinstance(pin, str) or not pin.strip().isdigit():
        raise ApiError(400, "'pin' must be the table's digits as a string, such as \"4821\"")
    if not hmac.compare_digest(pin.strip().encode(), current_table().pin.encode()):
        limiter.fail(client, window)
        raise ApiError(403, "wrong PIN; it is shown on the table screen and in the terminal")
    limiter.forget(client)
    return trust_session()

"""Who may change things: the table PIN, trusted phones, CSRF tokens, PIN rate limits.

* Watching is open to anyone on the table's network.
* Changing anything needs the table PIN once; the phone is then trusted for
  ``PERMANENT_SESSION_LIFETIME`` (12 h) through Flask's signed session cookie.
  The trust is bound to the PIN and recorded on the server
  (:mod:`companion.trust`): logout, "forget all phones" and a new PIN end it,
  for every copy of the cookie.
* Every state-changing request carries the session's CSRF token, as the
  ``X-CSRF-Token`` header (app.js) or a ``csrf_token`` form field.
* Wrong PINs are limited per client address (5 a minute by default), then 429,
  and for the whole table (10 a minute from all addresses together), then PIN
  entry pauses for everyone, longer each time (see :class:`PinLimiter`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import math
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from flask import current_app, request, session

from web.helpers import ApiError, current_table

if TYPE_CHECKING:  # pragma: no cover
    from companion.trust import PhoneTrust

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger(__name__)

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


def pin_fingerprint(secret_key: str, pin: str) -> str:
    """A keyed hash of the PIN: what the cookie and the trust record hold, never the PIN itself."""
    return hmac.new(str(secret_key).encode(), b"pin:" + pin.encode(), hashlib.sha256).hexdigest()[:24]


def _pin_fingerprint(pin: str) -> str:
    # Stored in the (signed, not encrypted) cookie, so never the PIN itself.
    return pin_fingerprint(current_app.config["SECRET_KEY"], pin)


def phone_trust() -> "PhoneTrust":
    """The server-side record of trusted phones of the app handling this request."""
    return current_app.extensions["tabletop_trust"]


def is_trusted() -> bool:
    """True when this session entered the current table PIN within the trust lifetime
    and its trust was not taken back since (logout, "forget all phones", a new PIN)."""
    until = session.get("trusted_until")
    fingerprint = session.get("pin_fp")
    if not isinstance(until, (int, float)) or not isinstance(fingerprint, str):
        return False
    if time.time() >= until:
        return False
    if not hmac.compare_digest(fingerprint, _pin_fingerprint(current_table().pin)):
        return False
    return phone_trust().is_trusted(session.get("trust_id"))


def trust_session() -> float:
    """Mark this session as trusted (recorded on the server too); returns the Unix time the trust ends."""
    lifetime = current_app.permanent_session_lifetime.total_seconds()
    until = time.time() + lifetime
    old = session.get("trust_id")
    if old is not None:
        phone_trust().revoke(old)  # a phone holds one trust id at a time
    session.permanent = True
    session["trust_id"] = phone_trust().grant(until)
    session["trusted_until"] = until
    session["pin_fp"] = _pin_fingerprint(current_table().pin)
    session.setdefault("device", secrets.token_hex(3))
    csrf_token()
    return until


def forget_session() -> None:
    """End this session's trust on the server and in its cookie (logout)."""
    phone_trust().revoke(session.get("trust_id"))
    for key in ("trust_id", "trusted_until", "pin_fp"):
        session.pop(key, None)


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


@dataclass(frozen=True)
class PinPolicy:
    """How many wrong PINs are allowed, per client address and for the whole table."""

    #: Wrong PINs one address may send within ``window_s`` before it must wait.
    per_client: int = 5
    #: Wrong PINs all addresses together may send within ``window_s`` before PIN entry pauses.
    per_table: int = 10
    window_s: float = 60.0
    #: The first table-wide pause; each further one doubles, up to ``max_pause_s``.
    pause_s: float = 60.0
    max_pause_s: float = 900.0
    #: A pause starting this long after the previous one ended starts the doubling afresh.
    reset_after_s: float = 3600.0

    @classmethod
    def from_config(cls, config: Any) -> "PinPolicy":
        """The policy of a Flask app's config (``PIN_ATTEMPTS``, ``PIN_TABLE_ATTEMPTS``, ...)."""
        return cls(
            per_client=int(config["PIN_ATTEMPTS"]),
            per_table=int(config["PIN_TABLE_ATTEMPTS"]),
            window_s=float(config["PIN_WINDOW_S"]),
            pause_s=float(config["PIN_PAUSE_S"]),
            max_pause_s=float(config["PIN_MAX_PAUSE_S"]),
            reset_after_s=float(config["PIN_PAUSE_RESET_S"]),
        )


@dataclass(frozen=True)
class PinVerdict:
    """What became of one PIN attempt: ``ok``, ``wrong``, or ``wait`` (``paused``: the whole table)."""

    outcome: str
    retry_after: int = 0
    paused: bool = False


def _seconds(value: float) -> int:
    """Whole seconds to wait, rounded up, at least 1."""
    return max(1, math.ceil(value - 1e-9))


class PinLimiter:
    """Wrong PINs counted per client address and for the whole table; thread-safe.

    Per address: after ``per_client`` wrong PINs within the window, that address
    waits until the oldest is a window old. Table-wide: after ``per_table`` wrong
    PINs within the window from all addresses together, PIN entry pauses for
    everyone (a right PIN too, so a pause reveals nothing): ``pause_s`` the first
    time, doubling with each further pause up to ``max_pause_s``. A pause lasts at
    least a window, so no window ever holds more than ``per_table`` guesses,
    however many addresses an attacker rotates through. A right PIN outside a
    pause resets the doubling. ``clock`` is injectable (tests move time by hand).
    """

    #: Client records kept at most (an attacker's many addresses must not grow memory).
    MAX_CLIENTS = 1024

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}
        self._table: deque[float] = deque()
        self._paused_until = -math.inf
        self._pauses = 0
        self._last_pause_end = -math.inf

    @staticmethod
    def _prune(failures: deque[float], now: float, window: float) -> deque[float]:
        while failures and failures[0] <= now - window:
            failures.popleft()
        return failures

    def _client_wait(self, client: str, now: float, policy: PinPolicy) -> float:
        failures = self._failures.get(client)
        if failures is None:
            return 0.0
        self._prune(failures, now, policy.window_s)
        if not failures:
            del self._failures[client]  # keep the table small
            return 0.0
        if len(failures) < policy.per_client:
            return 0.0
        return failures[0] + policy.window_s - now

    def attempt(self, client: str, correct: bool, policy: PinPolicy) -> PinVerdict:
        """Decide one attempt from ``client``; ``correct`` counts only if the attempt is allowed now.

        The check and the count happen under one lock, so concurrent guesses
        cannot slip past the table-wide limit together.
        """
        with self._lock:
            now = self._clock()
            if now < self._paused_until:
                return PinVerdict("wait", _seconds(self._paused_until - now), paused=True)
            wait = self._client_wait(client, now, policy)
            if wait > 0:
                return PinVerdict("wait", _seconds(wait))
            if correct:
                self._failures.pop(client, None)
                self._pauses = 0
                return PinVerdict("ok")
            if len(self._failures) >= self.MAX_CLIENTS:
                for key in [k for k, v in self._failures.items() if not self._prune(v, now, policy.window_s)]:
                    del self._failures[key]
            self._failures.setdefault(client, deque()).append(now)
            table = self._prune(self._table, now, policy.window_s)
            table.append(now)
            if len(table) >= policy.per_table:
                self._start_pause(now, policy)
            return PinVerdict("wrong")

    def _start_pause(self, now: float, policy: PinPolicy) -> None:
        if now - self._last_pause_end >= policy.reset_after_s:
            self._pauses = 0
        self._pauses += 1
        growing = policy.pause_s * 2 ** min(self._pauses - 1, 30)
        # At least a window: the guesses that caused the pause are all out of it when it ends.
        length = max(policy.window_s, min(policy.max_pause_s, growing))
        self._paused_until = now + length
        self._last_pause_end = self._paused_until
        self._table.clear()
        log.warning("PIN entry paused for %.0f s after %d wrong PINs within %.0f s (pause %d in a row)",
                    length, policy.per_table, policy.window_s, self._pauses)

    def status(self) -> dict[str, Any]:
        """``{"paused": bool, "retry_after": seconds}`` for the table screen."""
        with self._lock:
            left = self._paused_until - self._clock()
        return {"paused": left > 0, "retry_after": _seconds(left) if left > 0 else 0}


def pin_entry_status() -> dict[str, Any]:
    """``{"paused": bool, "retry_after": seconds}``: is PIN entry paused for the whole table."""
    return current_app.extensions["tabletop_pin_limiter"].status()


def client_address() -> str:
    """The address a request came from (waitress sets REMOTE_ADDR)."""
    return request.remote_addr or "unknown"


def check_pin(pin: Any) -> float:
    """Trust the session if ``pin`` is the table PIN; returns when trust ends.

    Raises ApiError 400 for a malformed PIN (not counted as a guess), 429 (with
    Retry-After) while this client is rate-limited or PIN entry is paused for
    the whole table, 403 for a wrong one.
    """
    app = current_app
    limiter: PinLimiter = app.extensions["tabletop_pin_limiter"]
    if not isinstance(pin, str) or not pin.strip().isdigit() or not pin.strip().isascii():
        raise ApiError(400, "'pin' must be the table's digits as a string, such as \"4821\"")
    correct = hmac.compare_digest(pin.strip().encode(), current_table().pin.encode())
    verdict = limiter.attempt(client_address(), correct, PinPolicy.from_config(app.config))
    if verdict.outcome == "wait":
        wait = verdict.retry_after
        if verdict.paused:
            message = f"PIN entry paused for the whole table after too many wrong PINs; try again in {wait} s"
        else:
            message = f"too many wrong PINs from this address; try again in {wait} s"
        raise ApiError(429, message, {"Retry-After": str(wait)})
    if verdict.outcome != "ok":
        raise ApiError(403, "wrong PIN; it is shown on the table screen and in the terminal")
    return trust_session()

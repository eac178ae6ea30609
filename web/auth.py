"""Entering the table PIN: the /pin page, ``POST /api/pin`` and ``GET /api/session``."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, jsonify, redirect, render_template, request, session
from flask.typing import ResponseReturnValue

from web.helpers import ApiError, check_keys, json_object
from web.security import (
    check_csrf,
    check_pin,
    csrf_protect,
    csrf_token,
    forget_session,
    is_trusted,
    phone_trust,
    pin_entry_status,
    require_pin,
    trust_session,
)

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str:
    """Only redirect within this site (never to another host after a PIN)."""
    if not target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


@bp.get("/api/session")
def session_info() -> ResponseReturnValue:
    """This client's CSRF token and whether it is trusted (scripts call this first)."""
    token = csrf_token()
    return jsonify(csrf_token=token, trusted=is_trusted(), trusted_until=session.get("trusted_until") if is_trusted() else None)


@bp.post("/api/pin")
@csrf_protect
def enter_pin() -> ResponseReturnValue:
    """Check the PIN; on success this session is trusted for the evening."""
    body = json_object()
    check_keys(body, {"pin"})
    if "pin" not in body:
        raise ApiError(400, "'pin' is missing; send {\"pin\": \"1234\"}")
    until = check_pin(body["pin"])
    return jsonify(trusted=True, trusted_until=until, csrf_token=csrf_token())


@bp.post("/api/logout")
@csrf_protect
def logout() -> ResponseReturnValue:
    """Forget this phone's trust (hand the phone to a guest); every copy of its cookie loses it too."""
    forget_session()
    return jsonify(trusted=False)


@bp.post("/api/phones/forget")
@require_pin
def forget_phones() -> ResponseReturnValue:
    """Forget every trusted phone (a cookie was copied, a guest left with trust).

    The asking phone stays trusted under a new trust id (so copies of its own
    cookie are void too), unless the body says ``{"keep_this_phone": false}``.
    """
    keep = True
    if request.get_data(cache=True):
        body = json_object()
        check_keys(body, {"keep_this_phone"})
        keep = body.get("keep_this_phone", True)
        if not isinstance(keep, bool):
            raise ApiError(400, f"'keep_this_phone' must be true or false, got {keep!r}")
    forgotten = phone_trust().revoke_all()
    for key in ("trust_id", "trusted_until", "pin_fp"):
        session.pop(key, None)
    until = trust_session() if keep else None
    return jsonify(forgotten=max(0, forgotten - (1 if keep else 0)), trusted=keep, trusted_until=until)


@bp.get("/api/pin")
def pin_status() -> ResponseReturnValue:
    """Whether PIN entry is paused for the whole table (the table screen shows it)."""
    return jsonify(pin_entry_status())


@bp.route("/pin", methods=["GET", "POST"])
def pin_page() -> ResponseReturnValue:
    """The form a phone uses to enter the PIN (works without JavaScript)."""
    next_url = _safe_next(request.values.get("next"))
    if request.method == "GET":
        return render_template("pin.html", next_url=next_url, error=None, trusted=is_trusted())
    try:
        check_csrf()
        check_pin(request.form.get("pin", ""))
    except ApiError as exc:
        response = render_template("pin.html", next_url=next_url, error=exc.message, trusted=is_trusted())
        return response, exc.status, exc.headers
    return redirect(next_url, code=303)

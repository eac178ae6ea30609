"""Phones as pads: the /pad page and its API (``/api/pad/...``).

A phone's browser session is one phone pad: its token is kept in the
session cookie, so a phone cannot act as another (it would need that
phone's cookie). Every POST needs the session's CSRF token; assigning a
phone to a pad and listing the phones need the table PIN. The work is done
by :class:`companion.phonepads.PhonePads` (``service.phone_pads``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from flask import Blueprint, Flask, jsonify, render_template, request, session
from flask.typing import ResponseReturnValue

from companion.phonepads import PhonePads
from web.helpers import ApiError, check_keys, current_service, json_object, refuse_hit_if_log_broken
from web.security import csrf_protect, require_pin

bp = Blueprint("pad", __name__)

SESSION_KEY = "pad_device"
#: The WSGI environ key holding when a sync request reached the app, on the pad clock (stamp_sync_arrivals).
RECEIVED_KEY = "tabletop.pad_received_us"
SYNC_PATH = "/api/pad/sync"


def stamp_sync_arrivals(app: Flask, pad_now_us: Callable[[], int]) -> None:
    """Stamp each sync request's arrival (t2) on the pad clock as the app is handed it, before Flask's work.

    A round's offset is the middle of what its two stamps allow, so time the table spends between
    the request's arrival and t2 (routing, the session, the CSRF check, parsing the JSON, the lock)
    that it does not also spend between t3 and the answer leaving biases every round by half of it.
    Stamping here leaves only the server's own hand-off, which no round trip can see.
    """
    inner = app.wsgi_app

    def stamped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == SYNC_PATH:
            environ[RECEIVED_KEY] = pad_now_us()
        result: Iterable[bytes] = inner(environ, start_response)
        return result

    app.wsgi_app = stamped  # type: ignore[method-assign]


def _phones() -> PhonePads:
    return current_service().phone_pads


def _token() -> str:
    """This session's phone token, a new phone's if it has none (or one the table forgot)."""
    phones = _phones()
    token = session.get(SESSION_KEY)
    if not phones.known(token):
        token = phones.new_device()
        session[SESSION_KEY] = token
        session.permanent = True
    return str(token)


def _body(allowed: set[str]) -> dict[str, Any]:
    body = json_object()
    check_keys(body, allowed)
    return body


def _me() -> dict[str, Any]:
    """This phone's state with its player (the one whose pad it holds), for the page."""
    me = _phones().me(_token())
    _, state = current_service().snapshot()
    player = next((p for p in state.get("players", []) if me["pad"] is not None and p.get("pad") == me["pad"]), None)
    # "sim": no hardware pad to calibrate against.
    return me | {"player": player, "source": (state.get("pads") or {}).get("source")}


@bp.get("/pad")
def pad_page() -> ResponseReturnValue:
    """The whole screen is one slap area in the player's colour (static/pad.js does the work)."""
    _token()
    return render_template("pad.html")


@bp.get("/api/pad")
def pad_me() -> ResponseReturnValue:
    """This phone: its tag, pad, player, touch latency, clock sync and when to sync next."""
    return jsonify(_me())


@bp.post("/api/pad/sync")
@csrf_protect
def pad_sync() -> ResponseReturnValue:
    """One clock round trip: ``{t1_us, answered?: {id, t4_us}, restart?}`` -> ``{id, t2_us, t3_us, next_sync_ms}``."""
    body = _body({"t1_us", "answered", "restart"})
    if "t1_us" not in body:
        raise ApiError(400, "'t1_us' is missing; send the phone's clock (performance.now() in microseconds)")
    restart = body.get("restart", False)
    if not isinstance(restart, bool):
        raise ApiError(400, f"'restart' must be true or false, got {restart!r}")
    token = _token()
    if restart:
        _phones().restart_sync(token)
    received = request.environ.get(RECEIVED_KEY)
    return jsonify(_phones().sync(token, body["t1_us"], body.get("answered"),
                                  received if isinstance(received, int) else None))


@bp.post("/api/pad/hit")
@csrf_protect
def pad_hit() -> ResponseReturnValue:
    """A touch on this phone's pad, stamped on the phone: ``{at_us, kind?, sent_us?}`` -> 202 with the hit."""
    body = _body({"at_us", "kind", "sent_us"})
    if "at_us" not in body:
        raise ApiError(400, "'at_us' is missing; send the touch's PointerEvent.timeStamp in microseconds")
    refuse_hit_if_log_broken(current_service())
    hit = _phones().hit(_token(), body["at_us"], body.get("kind", "slap"), body.get("sent_us"))
    return jsonify(queued=True, hit=hit.to_dict()), 202


@bp.post("/api/pad/claim")
@csrf_protect
def pad_claim() -> ResponseReturnValue:
    """Take a free pad with the code the table screen shows for it: ``{code}``."""
    body = _body({"code"})
    if "code" not in body:
        raise ApiError(400, "'code' is missing; send the 4 digits shown on the table screen beside the pad")
    _phones().claim(_token(), body["code"])
    return jsonify(_me())


@bp.post("/api/pad/release")
@csrf_protect
def pad_release() -> ResponseReturnValue:
    """This phone gives its pad up."""
    _phones().release(_token())
    return jsonify(_me())


@bp.post("/api/pad/calibration")
@csrf_protect
def pad_calibrate() -> ResponseReturnValue:
    """Keep this phone's touch latency from a tap-along: ``{asynchronies_us: [...]}``."""
    body = _body({"asynchronies_us"})
    if "asynchronies_us" not in body:
        raise ApiError(400, "'asynchronies_us' is missing; send each tap's stamp minus its beat's, in microseconds")
    latency = _phones().calibrate(_token(), body["asynchronies_us"])
    return jsonify(latency=latency.to_dict())


@bp.post("/api/pad/calibration/pad")
@csrf_protect
def pad_calibrate_against_pad() -> ResponseReturnValue:
    """Keep this phone's touch latency from slaps of a hardware pad and the phone together: ``{pad, taps_us}``."""
    body = _body({"pad", "taps_us"})
    if "pad" not in body or "taps_us" not in body:
        raise ApiError(400, "send {\"pad\": <the hardware pad slapped>, \"taps_us\": [<the phone's stamps>]}")
    latency = _phones().calibrate_against_pad(_token(), body["taps_us"], body["pad"])
    return jsonify(latency=latency.to_dict())


@bp.delete("/api/pad/calibration")
@csrf_protect
def pad_uncalibrate() -> ResponseReturnValue:
    """Forget this phone's calibration (it plays with the wider uncalibrated uncertainty again)."""
    _phones().forget_calibration(_token())
    return jsonify(_me())


@bp.get("/api/pad/codes")
def pad_codes() -> ResponseReturnValue:
    """The claim code of every pad no phone holds, and how many phones wait for one (the table screen shows them then)."""
    phones = _phones()
    return jsonify(codes={str(pad): code for pad, code in phones.codes().items()}, waiting=phones.waiting())


@bp.get("/api/pad/phones")
@require_pin
def pad_phones() -> ResponseReturnValue:
    """(PIN) Every phone pad of the table, by tag."""
    return jsonify(phones=_phones().phones())


@bp.post("/api/pad/assign")
@require_pin
def pad_assign() -> ResponseReturnValue:
    """(PIN) Give the phone showing ``phone`` (its tag) the pad ``pad``; ``pad: null`` takes it away."""
    body = _body({"phone", "pad"})
    if "phone" not in body or "pad" not in body:
        raise ApiError(400, "send {\"phone\": \"<tag its pad page shows>\", \"pad\": <pad number or null>}")
    return jsonify(_phones().assign(body["phone"], body["pad"]))

"""Calibrating the pads from a phone: the /calibrate page and its JSON API.

The page polls ``GET /api/calibration/levels`` a few times a second for the
level meter and the last peaks; thresholds and the guided check are state
changes, so they need the table PIN and the CSRF token like every other one.
Everything goes through ``TableService.calibration`` (companion/calibration.py);
the web never talks to the pad box itself. Documented in docs/api.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Blueprint, jsonify, render_template
from flask.typing import ResponseReturnValue

from core.errors import InputError
from web.helpers import check_keys, current_service, json_object
from web.security import is_trusted, require_pin

if TYPE_CHECKING:  # pragma: no cover - imported on first use, keeping start-up light
    from companion.calibration import Calibrator

bp = Blueprint("calibrate", __name__)


def _calibrator() -> "Calibrator":
    return current_service().calibration


@bp.get("/calibrate")
def page() -> ResponseReturnValue:
    """Level meter, last peaks, threshold sliders and the guided check."""
    cal = _calibrator()
    return render_template("calibrate.html", info=cal.describe(), trusted=is_trusted())


@bp.get("/api/calibration")
def describe() -> ResponseReturnValue:
    """Whether the pads can be calibrated (with the reason if not), pads, ranges and current settings."""
    return jsonify(_calibrator().describe())


@bp.get("/api/calibration/levels")
def levels() -> ResponseReturnValue:
    """Live levels and peaks, the last contact's peak per pad, and the guided check's progress."""
    return jsonify(_calibrator().levels())


def _optional_bool(body: dict[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise InputError(f"'{key}' must be true or false, got {value!r}")
    return value


@bp.post("/api/calibration/thresholds")
@require_pin
def set_thresholds() -> ResponseReturnValue:
    """Set one pad's slap and/or touch threshold on the box at once; ``save`` keeps them in EEPROM."""
    body = json_object()
    check_keys(body, {"pad", "slap", "touch", "save"})
    if "pad" not in body:
        raise InputError("'pad' is missing; send {\"pad\": 1, \"slap\": 250}")
    save = _optional_bool(body, "save")
    settings = _calibrator().set_thresholds(body["pad"], body.get("slap"), body.get("touch"), save=save)
    return jsonify(pad=body["pad"], settings=settings, saved=save)


@bp.post("/api/calibration/save")
@require_pin
def save() -> ResponseReturnValue:
    """Keep the box's current settings in its EEPROM."""
    body = json_object()
    check_keys(body, set())
    _calibrator().save()
    return jsonify(saved=True)


@bp.post("/api/calibration/check")
@require_pin
def check() -> ResponseReturnValue:
    """The guided check: ``{"action": "start", "pad": 3}``, then ``touch``, then ``finish`` (or ``cancel``)."""
    body = json_object()
    check_keys(body, {"action", "pad"})
    action = body.get("action")
    cal = _calibrator()
    if action == "start":
        if "pad" not in body:
            raise InputError("'pad' is missing; send {\"action\": \"start\", \"pad\": 3}")
        return jsonify(check=cal.start_check(body["pad"]))
    if "pad" in body:
        raise InputError(f"'pad' goes with the start action only, not with {action!r}")
    if action == "touch":
        return jsonify(check=cal.next_phase())
    if action == "finish":
        return jsonify(result=cal.finish_check())
    if action == "cancel":
        cal.cancel_check()
        return jsonify(check=None)
    raise InputError(f"'action' must be one of start, touch, finish, cancel; got {action!r}")

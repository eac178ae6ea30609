"""Simulated pads: the /pads page and ``POST /api/sim/hit``.

A simulated hit stands in for a slap on real hardware, and anyone at the
table can slap a real pad, so hits need no PIN. They still need the session's
CSRF token, so another web site cannot slap for you.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template
from flask.typing import ResponseReturnValue

from core.checks import whole_number
from core.errors import InputError
from core.hits import HitKind
from web.helpers import ApiError, check_keys, current_service, json_object, refuse_hit_if_log_broken
from web.security import csrf_protect

bp = Blueprint("sim", __name__)


@bp.get("/pads")
def pads_page() -> ResponseReturnValue:
    """One big pad per pad of the source: tap to slap, a light-touch strip, keys 1-8."""
    pads = current_service().pad_status()
    return render_template("pads.html", simulated=pads["simulated"], source_name=pads["source"])


def _hit_args(body: dict[str, Any], pad_count: int) -> dict[str, Any]:
    """Checked arguments for TableService.inject_hit, or InputError naming the field."""
    check_keys(body, {"pad", "kind", "strength", "at_us"})
    if "pad" not in body:
        raise InputError(f"'pad' is missing; send {{\"pad\": 1}} (pads are numbered 1 to {pad_count})")
    pad = body["pad"]
    whole_number(pad, 1, pad_count, "'pad'")
    kind = body.get("kind", "slap")
    valid_kinds = [k.value for k in HitKind]
    if kind not in valid_kinds:
        raise InputError(f"'kind' must be one of {', '.join(valid_kinds)}, got {kind!r}")
    strength = body.get("strength")
    if strength is not None:
        if isinstance(strength, bool) or not isinstance(strength, (int, float)) or not 0.0 <= strength <= 1.0:
            raise InputError(f"'strength' must be a number from 0.0 to 1.0 (or null), got {strength!r}")
        strength = float(strength)
    at_us = body.get("at_us")
    if at_us is not None:
        if isinstance(at_us, bool) or not isinstance(at_us, int) or not 0 <= at_us < 2**62:
            raise InputError(f"'at_us' must be whole microseconds on the pads' clock (from 0), got {at_us!r}")
    return {"pad": pad, "kind": kind, "strength": strength, "at_us": at_us}


@bp.post("/api/sim/hit")
@csrf_protect
def sim_hit() -> ResponseReturnValue:
    """Inject one hit into the simulated pads, exactly as a slap on a pad would arrive."""
    service = current_service()
    pads = service.pad_status()
    if not pads["simulated"]:
        raise ApiError(
            409,
            f"the pads are real hardware ({pads['source']}), so hits cannot be simulated; start with --pads sim",
        )
    args = _hit_args(json_object(), pads["pads"])
    refuse_hit_if_log_broken(service)
    hit = service.inject_hit(args["pad"], args["kind"], args["strength"], args["at_us"])
    # 202: the hit is on the table loop's queue; its "hit" event follows on /api/events.
    return jsonify(queued=True, hit=hit.to_dict()), 202

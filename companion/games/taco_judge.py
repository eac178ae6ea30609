"""Taco Hat Cake Gift Pizza: turning timestamped slaps into a verdict.

Pure functions over plain data. A *hit* here is a dict
``{"player", "at_us", "pad", "kind", "resolution_us"}`` (plus
``uncertainty_us`` for a phone pad's hit) as recorded in a ``slapped`` or
``flinched`` event. Hits are ordered by onset time, then pad
number (so equal times always sort the same way), never by arrival.

The verdict dict is what the ``verdict`` event records and every screen shows:

* ``order``: every player who slapped, first to last, with ``place``,
  ``at_us``, ``after_ms`` (after the card, or after the first slapper when the
  referee did not see the card) and ``margin_ms`` (after the player before).
* ``missing``: players who never slapped, in the order the never-slapper rule
  uses; they are all last, and the first of them takes the pile.
* ``taker``; ``photo_finish``: the deciding pairs closer than their combined
  uncertainty (:func:`combined_uncertainty_us`); ``winner``: an empty-handed
  player who slapped FIRST.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def ms(us: int) -> float:
    """Microseconds as milliseconds with one decimal, for people."""
    return round(us / 1000.0, 1)


def ordered(hits: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits sorted by onset, then pad: the one true order."""
    return sorted(hits, key=lambda h: (h["at_us"], h["pad"]))


def rotation(seats: Sequence[int], after: int | None) -> list[int]:
    """Seat order starting with the player after ``after`` (clockwise, wrapping), ``after`` last.

    With ``after`` None (or not seated) the seat order is returned unchanged.
    """
    seats = list(seats)
    if after not in seats:
        return seats
    i = seats.index(after)
    return seats[i + 1 :] + seats[: i + 1]


HIT_FIELDS = ("player", "at_us", "pad", "kind", "resolution_us")


def hit_fields(event_data: dict[str, Any]) -> dict[str, Any]:
    """The hit of a ``slapped``/``flinched`` event's data (``uncertainty_us`` kept where it has one)."""
    out = {k: event_data[k] for k in HIT_FIELDS}
    if event_data.get("uncertainty_us"):
        out["uncertainty_us"] = event_data["uncertainty_us"]
    return out


def combined_uncertainty_us(a: dict[str, Any], b: dict[str, Any]) -> int:
    """How far apart two hits' true onsets may be from their stamps' gap, at most.

    Each stamp is quantised to its source's resolution (the true onset lies
    within one resolution step of it) and may be off by its own
    ``uncertainty_us`` either way (a phone's sync and touch-latency error).
    Two steps of quantisation never add to more than the coarser step, the
    uncertainties add: ``max(resolutions) + uncertainty_a + uncertainty_b``.
    """
    resolution = max(a.get("resolution_us", 1), b.get("resolution_us", 1))
    return resolution + a.get("uncertainty_us", 0) + b.get("uncertainty_us", 0)


def _photo(a: dict[str, Any], b: dict[str, Any], decides: str) -> dict[str, Any] | None:
    """A photo-finish note when ``a`` and ``b`` are closer than their combined uncertainty."""
    margin = b["at_us"] - a["at_us"]
    combined = combined_uncertainty_us(a, b)
    if margin < combined:
        note = {
            "decides": decides,
            "players": [a["player"], b["player"]],
            "margin_ms": ms(margin),
            "resolution_ms": round(max(a.get("resolution_us", 1), b.get("resolution_us", 1)) / 1000.0, 3),
            "uncertainty_ms": round(combined / 1000.0, 3),
            "text": f"photo finish: {ms(margin)} ms",
        }
        if a.get("uncertainty_us") or b.get("uncertainty_us"):
            note["text"] = (f"#{a['player']} and #{b['player']} within {ms(combined):g} ms: "
                            "too close for phones to call")
        return note
    return None


def _sure(a: dict[str, Any], b: dict[str, Any]) -> str:
    """For a clear call involving a phone pad: the gap and the uncertainty it beat ("" otherwise)."""
    if not (a.get("uncertainty_us") or b.get("uncertainty_us")):
        return ""
    return f" ({ms(b['at_us'] - a['at_us'])} ms apart, uncertain by at most {ms(combined_uncertainty_us(a, b)):g} ms)"


def _entries(hits: list[dict[str, Any]], ref_us: int) -> list[dict[str, Any]]:
    out = []
    prev: int | None = None
    for place, h in enumerate(hits, start=1):
        out.append(
            {
                "player": h["player"],
                "place": place,
                "at_us": h["at_us"],
                "after_ms": ms(h["at_us"] - ref_us),
                "margin_ms": None if prev is None else ms(h["at_us"] - prev),
                "pad": h["pad"],
                "kind": h.get("kind", "slap"),
                "uncertainty_ms": ms(h.get("uncertainty_us", 0) + h.get("resolution_us", 1)),
            }
        )
        prev = h["at_us"]
    return out


def slap_verdict(
    hits: Iterable[dict[str, Any]],
    seats: Sequence[int],
    *,
    ref_us: int | None,
    timing: str,
    rule_after: int | None,
    empty_handed: Iterable[int] = (),
) -> dict[str, Any]:
    """Judge a slap that was due: the last slapper (or a never-slapper) takes the pile.

    Args:
        hits: each player's first slap inside the window.
        seats: every player still in, in seat (chant) order.
        ref_us: the time the card appeared, or None to measure from the first slapper.
        timing: ``"card"`` or ``"first_slap"``, recorded so screens label the times.
        rule_after: the never-slapper rule starts with the player after this one
            (the flipper of the card); see docs/games/taco.md.
        empty_handed: players known to have no cards; one who slaps FIRST wins.
    """
    hits = ordered(hits)
    slapped = {h["player"] for h in hits}
    ref = ref_us if ref_us is not None else (hits[0]["at_us"] if hits else 0)
    missing = [pid for pid in rotation(seats, rule_after) if pid not in slapped]
    photos: list[dict[str, Any]] = []
    if missing:
        taker = missing[0]
        names = ", ".join(f"#{p}" for p in missing)
        reason = f"never slapped: {names}; #{taker} takes the pile (first of them after the flipper)"
    elif hits:
        taker = hits[-1]["player"]
        reason = f"#{taker} slapped last"
        if len(hits) >= 2:
            note = _photo(hits[-2], hits[-1], "last")
            if note:
                photos.append(note)
                reason += f" ({note['text']})"
            else:
                reason += _sure(hits[-2], hits[-1])
    else:  # nobody at the table: cannot happen with players, kept total
        taker = seats[0]
        reason = "nobody slapped"
    winner = None
    empty = set(empty_handed)
    if hits and hits[0]["player"] in empty:
        first_note = _photo(hits[0], hits[1], "first") if len(hits) >= 2 else None
        if first_note:
            photos.append(first_note)
            reason += f"; #{hits[0]['player']} has no cards but tied for first (photo finish), so plays on"
        else:
            winner = hits[0]["player"]
            reason = f"#{winner} has no cards left and slapped first: wins"
            if len(hits) >= 2:
                reason += _sure(hits[0], hits[1])
    return {
        "kind": "slap",
        "timing": timing if ref_us is not None else "first_slap",
        "ref_us": ref,
        "order": _entries(hits, ref),
        "missing": missing,
        "taker": taker,
        "photo_finish": photos,
        "winner": winner,
        "reason": reason,
    }


def flinch_verdict(
    flinches: Iterable[dict[str, Any]],
    seats: Sequence[int] = (),
    *,
    why: str | None = None,
    ref_us: int | None = None,
) -> dict[str, Any]:
    """Judge flinches: the earliest flincher (by onset) takes the pile.

    Each flinch dict carries a ``reason`` (e.g. "false start: 62.0 ms after the card").
    ``still`` lists the other players of ``seats``: they rightly did not slap.
    ``ref_us`` is the time the card on the table appeared (digital play knows
    it): times are then measured from the card, else from the first flinch.
    """
    hits = ordered(flinches)
    first = hits[0]
    photos: list[dict[str, Any]] = []
    reason = f"#{first['player']} flinched ({first.get('reason', 'slapped when no slap was due')})"
    if why:
        reason += f"; {why}"
    if len(hits) >= 2:
        note = _photo(hits[0], hits[1], "first")
        if note:
            photos.append(note)
            reason += f" ({note['text']})"
        else:
            reason += _sure(hits[0], hits[1])
    ref = ref_us if ref_us is not None else first["at_us"]
    entries = _entries(hits, ref)
    for entry, h in zip(entries, hits):
        entry["flinch"] = h.get("reason", "")
    return {
        "kind": "flinch",
        "timing": "card" if ref_us is not None else "first_slap",
        "ref_us": ref,
        "order": entries,
        "missing": [],
        "still": [pid for pid in seats if pid not in {h["player"] for h in hits}],
        "taker": first["player"],
        "photo_finish": photos,
        "winner": None,
        "reason": reason,
    }

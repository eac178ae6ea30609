"""The one shape of a stored event, built here for the log, the table's fold and every reader."""

from __future__ import annotations

from typing import Any


def stored_event(seq: int, at: str, game_id: int | None, type_: str, data: dict[str, Any],
                 actor: str | None) -> dict[str, Any]:
    """One event as the log keeps it and every reader gets it: the one place this shape is built.

    ``seq`` numbers it (and is the SSE id), ``at`` is the UTC time it was decided,
    ``game_id`` the seq of its game's ``game_started`` (None outside a game),
    ``actor`` the phone that asked (None for hits and timers).
    """
    return {"seq": seq, "at": at, "game_id": game_id, "type": type_, "data": data, "actor": actor}

"""What readers may see of the log while a game runs: hidden information is withheld until it ends.

The event log keeps every event whole: a digital Taco deal records the
shuffled deck and every face-down pile, because a replay after a power cut
must deal the same cards. Nobody at the table can see those, so no reader
outside the table loop may either (the live stream, a game's history and
exports, a command's answer) until the game has ended (its ``game_ended`` is
in the log). Each game says what is hidden in its events with
:meth:`companion.games.base.Game.public_data`; this module applies it.

Pure functions, no I/O: the service hands in the events and the games that
are still running.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping

from companion.games.base import Game

log = logging.getLogger(__name__)

#: Game.public_data itself: a game that does not override it hides nothing (no copy needed).
_SHOWS_ALL = Game.public_data.__func__  # type: ignore[attr-defined]
#: What a reader gets of an event whose game failed to say what is public: nothing but this.
WITHHELD_ALL = {"withheld": "this event is shown when the game ends"}


def running_games(markers: Iterable[Mapping[str, Any]]) -> dict[int, str]:
    """``{game_id: kind}`` of the games started and not ended, from ``game_started``/``game_ended`` events."""
    running: dict[int, str] = {}
    for event in markers:
        if event.get("type") == "game_started":
            data = event.get("data")
            kind = data.get("kind") if isinstance(data, Mapping) else None
            running[event["seq"]] = kind if isinstance(kind, str) else ""
        elif event.get("type") == "game_ended":
            running.pop(event.get("game_id"), None)  # type: ignore[arg-type]
    return running


def public_event(event: Mapping[str, Any], games: Mapping[str, type[Game]], running: Mapping[int, str]) -> dict[str, Any]:
    """``event`` as a reader may see it: whole unless its game is still running and hides part of it."""
    out = dict(event)
    game_id = event.get("game_id")
    if game_id is None or game_id not in running:
        return out
    cls = games.get(running[game_id])
    if cls is None or getattr(cls.public_data, "__func__", None) is _SHOWS_ALL:
        return out  # nothing hidden (or a game not installed: it cannot have recorded what this version hides)
    data = event.get("data")
    try:
        out["data"] = cls.public_data(event.get("type", ""), data if isinstance(data, Mapping) else {})
    except Exception:  # withhold everything rather than leak or fail the reader
        log.exception("game %s: public_data failed on event %s; withheld whole", running[game_id], event.get("seq"))
        out["data"] = dict(WITHHELD_ALL)
    return out


def public_events(events: Iterable[Mapping[str, Any]], games: Mapping[str, type[Game]],
                  running: Mapping[int, str]) -> list[dict[str, Any]]:
    """Every event of ``events`` as a reader may see it (see :func:`public_event`)."""
    return [public_event(e, games, running) for e in events]

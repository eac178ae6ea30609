"""The table's event plumbing: drafts, steps, undo arithmetic and the running game's record.

Pure functions and small values shared by :mod:`companion.table` (the fold)
and :mod:`companion.service` (which reads a game's history back for undo).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from core.errors import CompanionError
from companion.games.base import ArgSpec, Command, Event, Game, Player

log = logging.getLogger(__name__)

TABLE_EVENTS: frozenset[str] = frozenset(
    {"player_added", "player_updated", "player_removed", "players_seated", "game_started", "game_ended",
     "undo", "hit", "pad_source"}
)


#: ``history(game_id, before_seq)``: the stored events of one game with seq < before_seq, oldest first.
History = Callable[[int, int], Iterable[Mapping[str, Any]]]


class NewGame:
    """Marker for ``game_id`` of events decided together with the ``game_started`` they belong to."""


NEW_GAME = NewGame()
#: Key the table adds to the data of each event of a multi-event step: [position, count].
STEP_KEY = "_step"


@dataclass
class ActiveGame:
    """The running game and what the table knows about it."""

    game_id: int
    kind: str
    title: str
    settings: dict[str, Any]
    players: tuple[Player, ...]
    game: Game
    #: how many game events are in effect (not undone).
    effective: int = 0
    #: the last game event in effect: what a plain ``undo`` would remove.
    last: Mapping[str, Any] | None = None

    def can_undo(self) -> bool:
        """True when a plain ``undo`` would be accepted (there is a last event and the game allows it)."""
        if self.last is None:
            return False
        try:
            self.game.check_undo(game_event(self.last), Command("undo"))
        except CompanionError:
            return False
        except Exception:
            log.exception("game %s: check_undo failed", self.kind)
            return False
        return True


@dataclass
class Draft:
    type: str
    data: dict[str, Any]
    game_id: int | NewGame | None
    actor: str | None = None


def effective_events(events: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[int, int]]:
    """The game events in effect, and ``{undone seq: seq of the undo that undid it}``.

    ``events`` are one game's stored events in seq order. An undo is in effect
    unless a later undo undid it (a redo), so walking backwards settles each
    undo before reaching the events it targets.
    """
    undone: dict[int, int] = {}
    for event in reversed(events):
        if event["type"] == "undo" and event["seq"] not in undone:
            for target in undo_targets(event):
                undone.setdefault(target, event["seq"])
    kept = [e for e in events if e["type"] not in TABLE_EVENTS and e["seq"] not in undone]
    return kept, undone


def undo_targets(undo: Mapping[str, Any]) -> list[int]:
    """The seqs one ``undo`` event takes back: a whole step (``seqs``), or one ``seq``."""
    data = undo["data"]
    seqs = data.get("seqs")
    if isinstance(seqs, list) and all(isinstance(s, int) for s in seqs):
        return list(seqs)
    target = data.get("seq")
    return [target] if isinstance(target, int) else []


def step_of(kept: Sequence[Mapping[str, Any]], target: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The events in effect that one decision produced together with ``target``.

    A command (or a hit, or a deadline) that makes several game events makes
    one step: undo takes the step back whole, never half of it. Steps are
    marked by ``STEP_KEY`` = [position, count] in each event's data.
    """
    mark = target["data"].get(STEP_KEY)
    if not (isinstance(mark, list) and len(mark) == 2):
        return [target]
    position, count = mark
    index = next(i for i, e in enumerate(kept) if e["seq"] == target["seq"])
    start = index - (position - 1)
    step = list(kept[max(start, 0):start + count])
    if start < 0 or len(step) != count or [e["data"].get(STEP_KEY) for e in step] != [[i, count] for i in range(1, count + 1)]:
        return [target]  # parts of the step were undone on their own (logs from before steps existed)
    return step


def game_event(stored: Mapping[str, Any]) -> Event:
    data = dict(stored["data"])
    data.pop(STEP_KEY, None)  # the table's own mark; games never see it
    return Event(stored["type"], data)


#: ``start_game``'s ``seed`` ranges over what the service draws (``random.getrandbits(63)``).
MAX_SEED = 2**63 - 1

#: ``start_game``'s arguments (whether the kind is installed is the command's check, the settings the game's).
START_GAME_ARGS = (
    ArgSpec("kind", "str"),
    ArgSpec("settings", "object", optional=True, nullable=True, default={}),
    ArgSpec("players", "list", optional=True, nullable=True, hint="player ids or names; default: every player"),
    ArgSpec("seed", "int", optional=True, nullable=True, min=0, max=MAX_SEED, hint="default: a random draw"),
)





def as_stored(draft: Draft) -> dict[str, Any]:
    """The draft's data after a JSON round trip, or TypeError naming the event that cannot be stored."""
    try:
        return json.loads(json.dumps(draft.data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"event '{draft.type}' has data that cannot be stored as JSON: {exc}") from None


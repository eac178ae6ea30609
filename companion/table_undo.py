"""The table's undo: take back a game event (or a whole step), redo by undoing an undo, refold the game."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from core.errors import CompanionError, NotFoundError, RuleError
from companion.games.base import Command
from companion.table_events import TABLE_EVENTS, ActiveGame, Draft, History, effective_events, game_event, step_of


class TableUndo:
    """The ``undo`` command of :class:`~companion.table.TableState` (which owns these attributes)."""

    seq: int
    active: ActiveGame | None
    _history: History | None
    _memory: list[Mapping[str, Any]]

    def _decide_undo(self, cmd: Command) -> list[Draft]:
        """What ``undo`` records: the target (a whole step, or an undo to redo), dry-run refolded first."""
        args = cmd.args
        if self.active is None:
            raise RuleError("no game is running, so there is nothing to undo")
        a = self.active
        events = self._game_log(a.game_id, self.seq + 1)
        kept, undone = effective_events(events)
        target_seq = args.get("seq")
        if target_seq is None:
            if not kept:
                raise RuleError(f"nothing to undo in {a.title}")
            target = kept[-1]
        else:
            found = next((e for e in events if e["seq"] == target_seq), None)
            if found is None:
                raise NotFoundError(f"event {target_seq} is not part of the running game ({a.title}, game {a.game_id})")
            target = found
            if target["type"] in TABLE_EVENTS and target["type"] != "undo":
                raise RuleError(f"event {target_seq} ({target['type']}) cannot be undone; undo game events or undos")
            if target["seq"] in undone:
                raise RuleError(f"event {target_seq} is already undone (by event {undone[target['seq']]})")
        step = [target] if target["type"] == "undo" else step_of(kept, target)
        if target["type"] != "undo":
            for event in step:
                a.game.check_undo(game_event(event), cmd)
        seqs = [e["seq"] for e in step]
        data: dict[str, Any] = {"seq": seqs[0], "type": step[0]["type"]}
        if len(seqs) > 1:
            data["seqs"] = seqs
        # Dry run: the game must still fold cleanly without (or, for a redo, with) the target.
        probe = {"seq": self.seq + 1, "type": "undo", "data": data, "game_id": a.game_id}
        try:
            self._refold(a, [*events, probe])
        except CompanionError as exc:
            raise RuleError(f"cannot undo event {target['seq']}: {exc}") from None
        except Exception as exc:
            raise RuleError(f"cannot undo event {target['seq']}: the game's history would no longer add up ({exc!r})") from None
        return [Draft("undo", data, a.game_id)]


    def _game_log(self, game_id: int, before: int) -> list[Mapping[str, Any]]:
        if self._history is None:
            return [e for e in self._memory if e["seq"] < before]
        return list(self._history(game_id, before))

    def _refold(self, a: ActiveGame, events: Sequence[Mapping[str, Any]], install: bool = False) -> None:
        """Rebuild the game from its start without the undone events (the same for every game)."""
        kept, _ = effective_events(events)
        game = type(a.game)(a.players, a.settings)
        for e in kept:
            game.evolve(game_event(e))
        if install:
            a.game = game
            a.effective = len(kept)
            a.last = kept[-1] if kept else None



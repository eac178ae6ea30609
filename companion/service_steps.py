"""How the table loop decides each inbox item: a command, a notice, the game's deadlines.

A mixin of :class:`companion.service.TableService` (which owns these
attributes and the loop). A refused command gets its error and changes
nothing; a bug in a game costs only the item it happened on, and a state
left half-updated is rebuilt from the log plus the batch's accepted events.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from companion.games.base import Command
from companion.reply import Reply
from companion.store import EventStore
from companion.table import TableState
from core.errors import CompanionError
from hardware.source import SourceNotice

log = logging.getLogger("companion.service")

#: Most deadlines fired back to back for a game that is behind (a stalled loop catching up).
DEADLINE_CATCH_UP = 64


@dataclass(frozen=True, slots=True)
class CommandItem:
    """A command on the inbox, with the slot its answer goes to."""

    command: Command
    reply: Reply


class BatchSteps:
    """The loop's per-item steps (loop thread only)."""

    store: EventStore
    stats: dict[str, int]
    _state: TableState | None
    _pending: list[dict[str, Any]]
    _stuck_deadline: int | None

    def _replay(self, extra: list[dict[str, Any]] | None = None) -> TableState:  # pragma: no cover - TableService's
        raise NotImplementedError

    def _deadline(self) -> int | None:
        assert self._state is not None
        try:
            deadline = self._state.next_deadline_us()
        except Exception:
            log.exception("game: next_deadline_us() failed; ignoring its deadline")
            return None
        if deadline is not None and deadline == self._stuck_deadline:
            return None
        self._stuck_deadline = None
        return deadline

    def _command(self, item: CommandItem, at: str) -> list[dict[str, Any]] | None:
        """The command's events, or None after answering its error (nothing changed)."""
        assert self._state is not None
        try:
            return self._state.execute(item.command, at)
        except CompanionError as exc:
            self.stats["refused"] += 1
            item.reply.set_error(exc)
        except Exception as exc:
            self.stats["bugs"] += 1
            log.exception("table loop: command %s %r failed", item.command.name, dict(item.command.args))
            item.reply.set_error(RuntimeError(f"'{item.command.name}' failed inside the table service: {exc!r}"))
            self._recover()
        return None

    def _notice(self, notice: SourceNotice, at: str) -> None:
        """Add the ``pad_source`` event of a notice the gate let through (or a summary) to this batch."""
        assert self._state is not None
        state = self._state
        self._pending += self._guarded(lambda: state.execute_notice(notice, at), "source notice %s", notice)

    def _guarded(self, step: Callable[[], list[dict[str, Any]]], what: str, *args: Any) -> list[dict[str, Any]]:
        """Run one hit's or notice's step; a bug is logged and costs only that item."""
        try:
            return step()
        except Exception:
            self.stats["bugs"] += 1
            log.exception("table loop: " + what + " failed", *args)  # formatted only on failure
            self._recover()
            return []

    def _recover(self) -> None:
        """After a failure while folding, rebuild the state from the log plus this batch's accepted events."""
        assert self._state is not None
        expected = self._pending[-1]["seq"] if self._pending else self.store.last_seq
        if self._state.dirty or self._state.seq != expected:
            log.warning("table loop: state was half-updated; rebuilding it from the log")
            self._state = self._replay(extra=self._pending)

    def _fire_deadlines(self, upto_us: int, at: str, logical: bool) -> None:
        """Let the game act on every deadline up to ``upto_us``.

        Before a hit or command (``logical``) the game is told the deadline's
        own time, so a window closes before a later-stamped hit; when the loop
        woke for the deadline it is told the current time.
        """
        assert self._state is not None
        for _ in range(DEADLINE_CATCH_UP):
            deadline = self._deadline()
            if deadline is None or deadline > upto_us:
                return
            now = deadline if logical else upto_us
            try:
                self._pending += self._state.execute_deadline(now, at)
            except Exception:
                self.stats["bugs"] += 1
                log.exception("game: decide_deadline(%d) failed; ignoring this deadline", now)
                self._recover()
                self._stuck_deadline = deadline
                return
            if self._deadline() == deadline:
                log.warning("game: deadline %d did not move after decide_deadline; ignoring it", deadline)
                self._stuck_deadline = deadline
                return

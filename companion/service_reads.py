"""What any thread may read from the table service, and the one door to its pad source.

The web app reaches the pads only through these methods (``pad_status``,
``inject_hit``, ``calibration``): it never imports hardware/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from companion.broadcast import Broadcaster, Subscription, Update
from companion.disclosure import public_events, running_games
from companion.games.base import Game
from companion.store import EventStore
from companion.table import TableState, effective_events
from core.errors import NotFoundError, RuleError
from core.hits import HitKind, PadHit
from hardware.sim import SimulatedPads
from hardware.source import PadSource

if TYPE_CHECKING:
    import queue
    import threading

    from companion.calibration import Calibrator
    from companion.config import Config
    from companion.phonepads import PhonePads


class ServiceReads:
    """The reading half of :class:`~companion.service.TableService` (which owns these attributes)."""

    store: EventStore
    source: PadSource
    games: dict[str, type[Game]]
    broadcaster: Broadcaster
    _snapshot: tuple[int, dict[str, Any]]
    _last_notice: dict[str, Any] | None
    _state: TableState | None
    inbox: queue.Queue[Any]
    config: Config
    _lifecycle: threading.Lock
    _phone_pads: PhonePads | None

    @property
    def calibration(self) -> Calibrator:
        """Pad calibration (levels, thresholds, the guided check) on this table's source."""
        from companion.calibration import calibrator_for  # lazy: only the page needs it

        return calibrator_for(self.source)

    @property
    def phone_pads(self) -> PhonePads:
        """Phones as pads on this table (the /pad page): made on first use, hits into this loop's inbox."""
        with self._lifecycle:
            if self._phone_pads is None:
                from companion.phonepads import PhonePads

                self._phone_pads = PhonePads(self.source.now_us, self.inbox.put, self.source.pad_count,
                                             self.config.data_dir,
                                             recent_hits=lambda: list(self.snapshot()[1].get("recent_hits", [])))
            return self._phone_pads

    def pad_status(self) -> dict[str, Any]:
        """The pad source as the pages show it: ``source`` (name), ``pads``, ``simulated`` and its own status.

        A failing source's status becomes ``{"error": ...}``: it must not hide a health page.
        """
        try:
            status = dict(self.source.status())
        except Exception as exc:
            status = {"error": str(exc)}
        return {"source": self.source.name, "pads": self.source.pad_count,
                "simulated": isinstance(self.source, SimulatedPads), "status": status}

    def inject_hit(self, pad: int, kind: HitKind | str = HitKind.SLAP, strength: float | None = None,
                   at_us: int | None = None) -> PadHit:
        """Slap a simulated pad, exactly as a hit on a real pad would arrive; RuleError on real hardware."""
        source = self.source
        if not isinstance(source, SimulatedPads):
            raise RuleError(f"the pads are real hardware ({source.name}), so hits cannot be simulated; start with --pads sim")
        return source.inject(pad, kind, strength, at_us)

    def snapshot(self) -> tuple[int, dict[str, Any]]:
        """(last seq, full public state) as of the last commit. Nested values are shared: read only."""
        seq, state = self._snapshot
        return seq, dict(state)

    def subscribe(self) -> Subscription:
        """Live updates, one per committed batch, from now on."""
        return self.broadcaster.subscribe()

    def events_after(self, seq: int, limit: int = 1000) -> list[dict[str, Any]]:
        """Committed events with seq > ``seq``, oldest first (SSE resume), as readers may see them:
        what a running game hides is withheld (companion.disclosure)."""
        events = self.store.events_after(seq, limit)
        if not any(e["game_id"] is not None for e in events):
            return events
        # Read after the events: every game they belong to has its start here, and an end
        # read here is real (a reader never sees more than the log says).
        return public_events(events, self.games, running_games(self.store.game_markers()))

    def history(self, game_id: int) -> list[dict[str, Any]]:
        """Every event of one game, oldest first, each with ``undone`` (bool) and ``undone_by`` (seq or None).

        While the game runs, what it hides (a digital deal's cards) is withheld; whole once it ended.
        """
        events = self.store.events_of_game(game_id)
        if not events or events[0]["type"] != "game_started":
            raise NotFoundError(f"no game {game_id!r}; see past_games() for the games played")
        events = public_events(events, self.games, running_games(events))
        _, undone = effective_events(events)
        for e in events:
            e["undone"] = e["seq"] in undone
            e["undone_by"] = undone.get(e["seq"])
        return events

    def past_games(self) -> list[dict[str, Any]]:
        """Every game played at this table, newest first: game_id, kind, title, started, ended, players, outcome.

        A game still running has ``ended`` None and its current outcome (usually None).
        """
        games = self.store.games()
        _, state = self._snapshot
        live = state.get("game") if state else None
        out = []
        for g in reversed(games):
            if live and g["game_id"] == live["game_id"] and g["ended"] is None:
                g["outcome"] = live["outcome"]
            out.append(g)
        return out

    def game_events(self, kind: str) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """For each game of ``kind`` (oldest first): its summary and its effective game events.

        Effective: undone events and table events (hits, undos, start/end) left out.
        """
        for summary in self.store.games():
            if summary["kind"] != kind:
                continue
            kept, _ = effective_events(self.store.events_of_game(summary["game_id"]))
            running = {} if summary["ended"] is not None else {summary["game_id"]: kind}
            yield summary, public_events(kept, self.games, running)

    def log_problem(self) -> dict[str, str] | None:
        """Why the event log cannot be written now (``{"kind", "message", "since"}``), or None."""
        problem = self.store.problem
        return problem.to_dict() if problem is not None else None

    def _pads(self) -> dict[str, Any]:
        try:
            status = dict(self.source.status())
        except Exception as exc:
            status = {"error": repr(exc)}
        status["notice"] = self._last_notice
        return {"source": self.source.name, "count": self.source.pad_count,
                "resolution_us": self.source.resolution_us, "status": status}

    # ----- publishing the snapshot (loop thread) -----
    def _running(self) -> dict[int, str]:
        """The game still running after the last batch (loop thread): its events stay partly hidden."""
        active = self._state.active if self._state is not None else None
        return {active.game_id: active.kind} if active is not None else {}

    def _view(self) -> dict[str, Any]:
        assert self._state is not None
        return self._state.view(self._pads(), self.log_problem())

    def _publish_state(self) -> None:
        """Publish the state alone (no events): the log's health changed."""
        state = self._view()
        self._snapshot = (state["seq"], state)
        self.broadcaster.publish(Update(state["seq"], [], state))

    def _publish(self, events: list[dict[str, Any]]) -> None:
        state = self._view()
        self._snapshot = (state["seq"], state)
        if events:
            self.broadcaster.publish(Update(state["seq"], events, state))

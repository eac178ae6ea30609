"""The table service: one loop thread that owns the table, the event log and the pad source.

Everything that changes the table reaches the loop through ONE inbox queue
(the pad source's queue): pad hits, the source's notices and commands from
the web, each command with a reply slot. The loop

1. waits for the next inbox item, or for the active game's deadline
   (``game.next_deadline_us()`` on the pad source's clock);
2. drains what is waiting (up to ``batch_limit`` items) and decides the
   events of each item in order against the evolving state; a refused
   command gets its error and changes nothing, the others go on;
3. appends the whole batch to the log in ONE transaction (group commit);
4. only then answers the commands and publishes one :class:`Update`.

So nothing is acknowledged before it is on disk, and a restart that replays
the log comes back to exactly the acknowledged state.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from companion.broadcast import Broadcaster, Subscription, Update
from companion.config import Config
from companion.disclosure import public_events, running_games
from companion.errors import CompanionError, ConfigError, InputError, NotFoundError, StoreError
from companion.games.base import Command, Game
from companion.notices import NoticeGate
from companion.store import EventStore, NewEvent, utc_now
from companion.table import TableState, effective_events
from hardware.hits import PadHit
from hardware.source import PadSource, SourceNotice

if TYPE_CHECKING:  # pragma: no cover
    from companion.calibration import Calibrator
    from companion.phonepads import PhonePads

__all__ = ["TableService", "Update", "Subscription", "Reply"]

log = logging.getLogger(__name__)

#: Most inbox items folded into one batch (one transaction, one update).
BATCH_LIMIT = 256
#: Most deadlines fired back to back for a game that is behind (a stalled loop catching up).
DEADLINE_CATCH_UP = 64
#: Seconds between checks of an event log that could not be written (a full disk, a read-only
#: file): the table reports itself healthy again within this long after the cause is fixed.
LOG_RETRY_S = 2.0


class Reply:
    """A small future: the loop sets the result (or the error) of one command after the commit."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._result: dict[str, Any] | None = None
        self._error: BaseException | None = None

    def set_result(self, result: dict[str, Any]) -> None:
        self._result = result
        self._done.set()

    def set_error(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    def done(self) -> bool:
        """True once the loop has answered."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """The result; raises the command's error, or TimeoutError if the loop has not answered in time."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"the table did not answer within {timeout} s; the command may still be applied")
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


@dataclass(frozen=True, slots=True)
class _CommandItem:
    command: Command
    reply: Reply


class _Stop:
    """The inbox item that ends the loop."""


_STOP = _Stop()


class TableService:
    """Owns the table: one loop thread, the event log, the pad source.

    Args:
        store: the event log (the service does not close it).
        source: the pad source; its queue becomes the loop's inbox.
        config: game defaults (``[games.<kind>]``) and players for a fresh table.
        games: kind -> Game class; default: every registered game.
    """

    def __init__(
        self,
        store: EventStore,
        source: PadSource,
        config: Config | None = None,
        games: Mapping[str, type[Game]] | None = None,
    ) -> None:
        if games is None:
            from companion.games import load_games

            games = load_games()
        self.store = store
        self.source = source
        self.config = config or Config()
        self.games: dict[str, type[Game]] = dict(games)
        self.game_defaults = self._check_game_config()
        # One inbox for everything: the source already puts its hits and notices here.
        self.inbox: "queue.Queue[Any]" = source.queue
        self.broadcaster = Broadcaster()
        self.batch_limit = BATCH_LIMIT
        self._state: TableState | None = None
        self._pending: list[dict[str, Any]] = []
        self._snapshot: tuple[int, dict[str, Any]] = (0, {})
        self._thread: threading.Thread | None = None
        self._lifecycle = threading.Lock()
        self._started = False
        self._stopped = False
        self._stuck_deadline: int | None = None
        self._phone_pads: "PhonePads | None" = None
        self._last_notice: dict[str, Any] | None = None
        #: Which source notices become events: a kind at most once per window (companion.notices).
        self.notices = NoticeGate()
        self.log_retry_s = LOG_RETRY_S
        self._next_log_probe = 0.0
        #: counters for /api/health and the benchmarks; ``lost_hits``/``lost_notices``: pad hits and
        #: source notices the log could not store (a full disk), so nobody could be told "accepted".
        self.stats = {"batches": 0, "events": 0, "hits": 0, "commands": 0, "refused": 0, "bugs": 0,
                      "failed_commits": 0, "lost_hits": 0, "lost_notices": 0}

    def _check_game_config(self) -> dict[str, dict[str, Any]]:
        defaults: dict[str, dict[str, Any]] = {}
        for kind, settings in self.config.games.items():
            cls = self.games.get(kind)
            if cls is None:
                raise ConfigError(f"config table [games.{kind}]: no such game; valid: {', '.join(sorted(self.games))}")
            try:
                cls.validate_settings(settings)
            except (InputError, ValueError) as exc:
                raise ConfigError(f"config table [games.{kind}]: {exc}") from None
            defaults[kind] = dict(settings)
        return defaults

    # ======================================================================
    # lifecycle
    # ======================================================================
    def start(self) -> None:
        """Replay the log, seat configured players on a fresh table, let the game resume, start the loop."""
        with self._lifecycle:
            if self._started:
                raise RuntimeError("this TableService was already started; make a new one")
            self._started = True
            self._state = self._replay()
            at = utc_now()
            fresh: list[dict[str, Any]] = []
            if self._state.seq == 0:
                fresh += self._seat_configured_players(at)
            try:
                fresh += self._state.execute_resume(self.source.now_us(), at)
            except Exception:
                log.exception("the game's resume() failed; going on without its events")
                self._state = self._replay(extra=fresh)
            if fresh:
                fresh = self.store.append(self._to_new(fresh))
            self._publish(public_events(fresh, self.games, self._running()))
            self.source.start()
            self._thread = threading.Thread(target=self._run, name="table-loop", daemon=True)
            self._thread.start()
            log.info("table service started at seq %d", self._state.seq)

    def _seat_configured_players(self, at: str) -> list[dict[str, Any]]:
        assert self._state is not None
        out: list[dict[str, Any]] = []
        for i, pc in enumerate(self.config.players, start=1):
            args: dict[str, Any] = {"name": pc.name, "pad": pc.pad}
            if pc.colour is not None:
                args["colour"] = pc.colour
            try:
                out += self._state.execute(Command("add_player", args, actor="config"), at)
            except CompanionError as exc:
                raise ConfigError(f"config key 'players[{i}]': {exc}") from None
        return out

    def stop(self) -> None:
        """Stop the loop and the pad source; answer any waiting command with an error. Idempotent."""
        with self._lifecycle:
            if self._stopped:
                return
            self._stopped = True
            try:
                self.source.stop()
            except Exception:
                log.exception("the pad source failed to stop")
            if self._thread is not None:
                self.inbox.put(_STOP)
                self._thread.join(timeout=30)
                if self._thread.is_alive():
                    log.error("the table loop did not stop within 30 s")
            self._fail_waiting(RuntimeError("the table service stopped"))
            self.broadcaster.close()
            log.info("table service stopped")

    def _fail_waiting(self, error: BaseException) -> None:
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, _CommandItem):
                item.reply.set_error(error)

    @property
    def running(self) -> bool:
        """True between start() and stop() while the loop thread lives."""
        return self._thread is not None and self._thread.is_alive() and not self._stopped

    @property
    def calibration(self) -> "Calibrator":
        """Pad calibration (levels, thresholds, the guided check) on this table's source."""
        from companion.calibration import Calibrator, calibrator_for  # noqa: F401  (lazy: only the page needs it)

        return calibrator_for(self.source)

    @property
    def phone_pads(self) -> "PhonePads":
        """Phones as pads on this table (the /pad page): made on first use, hits into this loop's inbox."""
        with self._lifecycle:
            if self._phone_pads is None:
                from companion.phonepads import PhonePads

                self._phone_pads = PhonePads(self.source.now_us, self.inbox.put, self.source.pad_count,
                                             self.config.data_dir,
                                             recent_hits=lambda: list(self.snapshot()[1].get("recent_hits", [])))
            return self._phone_pads

    def __enter__(self) -> "TableService":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ======================================================================
    # public API (any thread)
    # ======================================================================
    def submit(self, name: str, args: Mapping[str, Any] | None = None, actor: str | None = None,
               timeout: float = 10.0) -> dict[str, Any]:
        """Run a command; block until its events are durably committed.

        Returns ``{"seq": <last seq>, "events": [<stored event dict>, ...]}``.
        Raises InputError / RuleError / NotFoundError with the reason (state unchanged).
        """
        return self.submit_nowait(name, args, actor).wait(timeout)

    def submit_nowait(self, name: str, args: Mapping[str, Any] | None = None,
                      actor: str | None = None) -> Reply:
        """Queue a command and return its :class:`Reply` at once (scripts, benchmarks)."""
        if not isinstance(name, str) or not name:
            raise InputError(f"a command needs a name (a string), got {name!r}")
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise InputError(f"'args' must be an object, got {args!r}")
        if actor is not None and not isinstance(actor, str):
            raise InputError(f"'actor' must be a string, got {actor!r}")
        if not self.running:
            raise RuntimeError("the table service is not running")
        command = Command(name, dict(args), at_us=self.source.now_us(), seed=random.getrandbits(63), actor=actor)
        reply = Reply()
        self.inbox.put(_CommandItem(command, reply))
        return reply

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

    def status(self) -> dict[str, Any]:
        """Health figures: running, last seq, subscribers, inbox length, the log's problem and loop counters."""
        return {
            "running": self.running,
            "seq": self._snapshot[0],
            "subscribers": self.broadcaster.subscriber_count,
            "inbox": self.inbox.qsize(),
            "log_problem": self.log_problem(),
            **self.stats,
            "coalesced_notices": self.notices.coalesced,
        }

    # ======================================================================
    # the loop (loop thread only from here on)
    # ======================================================================
    def _history(self, game_id: int, before: int) -> list[dict[str, Any]]:
        """One game's events before ``before``: committed ones from the log plus this batch's."""
        committed = self.store.events_of_game(game_id, before)
        return committed + [e for e in self._pending if e["game_id"] == game_id and e["seq"] < before]

    def _replay(self, extra: list[dict[str, Any]] | None = None) -> TableState:
        """A fresh state folded from the whole log (plus accepted but uncommitted events)."""
        self._pending = list(extra or [])
        state = TableState(self.games, pad_count=self.source.pad_count, game_defaults=self.game_defaults,
                           history=self._history)
        for event in self.store.iter_events():
            state.apply(event, strict=False)
        for event in self._pending:
            state.apply(event, strict=False)
        return state

    def _run(self) -> None:
        while True:
            items: list[Any] = []
            try:
                items = self._next_items()
                stop = any(item is _STOP for item in items)
                if stop:
                    cut = next(i for i, item in enumerate(items) if item is _STOP)
                    for late in items[cut + 1:]:
                        if isinstance(late, _CommandItem):
                            late.reply.set_error(RuntimeError("the table service stopped"))
                    items = items[:cut]
                self._process(items, final=stop)
                if stop:
                    return
                self._retry_log()
            except Exception:
                # Never die: a bug here would stop the whole table.
                self.stats["bugs"] += 1
                log.exception("table loop: unexpected error; rebuilding the state from the log")
                for item in items:
                    if isinstance(item, _CommandItem) and not item.reply.done():
                        item.reply.set_error(RuntimeError(
                            "the table service hit an internal error; check the history before repeating this"))
                try:
                    self._state = self._replay()
                except Exception:
                    log.exception("table loop: rebuilding the state failed")
                    time.sleep(0.5)

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

    def _next_items(self) -> list[Any]:
        deadline = self._deadline()
        timeout = None if deadline is None else max(0.0, self.source.host_seconds_until(deadline))
        # Wake to check whether the log can be written again, and when a notice summary is due.
        wakes = [self._next_log_probe] if self.store.problem is not None else []
        due = self.notices.next_due()
        if due is not None:
            wakes.append(due)
        if wakes:
            wait = max(0.0, min(wakes) - time.monotonic())
            timeout = wait if timeout is None else min(timeout, wait)
        items: list[Any] = []
        try:
            items.append(self.inbox.get(timeout=timeout))
        except queue.Empty:
            return items
        while len(items) < self.batch_limit:
            try:
                items.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        return items

    def _process(self, items: list[Any], final: bool = False) -> None:
        """Decide every item in order, commit the batch once, then answer and publish.

        ``final``: the loop is stopping; every notice summary still held is stored too.
        """
        assert self._state is not None
        self._pending = []
        answers: list[tuple[Reply, list[dict[str, Any]]]] = []
        for item in items:
            at = utc_now()
            if isinstance(item, PadHit):
                self.stats["hits"] += 1
                self._fire_deadlines(min(item.at_us, self.source.now_us()), at, logical=True)
                self._pending += self._guarded(lambda: self._state.execute_hit(item, at), "hit %s", item)
            elif isinstance(item, SourceNotice):
                self._last_notice = {"kind": item.kind, "message": item.message}  # shown at once, stored or not
                passed = self.notices.offer(item, time.monotonic())
                if passed is not None:
                    self._notice(passed, at)
            elif isinstance(item, _CommandItem):
                self.stats["commands"] += 1
                self._fire_deadlines(min(item.command.at_us, self.source.now_us()), at, logical=True)
                events = self._command(item, at)
                if events is not None:
                    self._pending += events
                    answers.append((item.reply, events))
            else:
                log.warning("table loop: ignored an unknown inbox item %r", item)
        for summary in self.notices.flush() if final else self.notices.due(time.monotonic()):
            self._notice(summary, utc_now())
        self._fire_deadlines(self.source.now_us(), utc_now(), logical=False)

        stored: list[dict[str, Any]] = []
        if self._pending:
            try:
                stored = self.store.append(self._to_new(self._pending))
            except StoreError as exc:
                log.error("table loop: commit failed, %d events not stored: %s", len(self._pending), exc)
                self.stats["failed_commits"] += 1
                self.stats["lost_hits"] += sum(isinstance(item, PadHit) for item in items)
                self.stats["lost_notices"] += sum(e["type"] == "pad_source" for e in self._pending)
                self._state = self._replay()
                self._pending = []
                self._next_log_probe = time.monotonic() + self.log_retry_s
                # Every screen shows why nothing is recorded, before anyone is told their command failed.
                self._publish_state()
                for reply, _ in answers:
                    reply.set_error(exc)
                return
        self._pending = []
        # Answers and live updates carry what readers may see (a running game's deal withheld).
        stored = public_events(stored, self.games, self._running())
        by_seq = {e["seq"]: e for e in stored}
        last = self._state.seq
        for reply, events in answers:
            mine = [by_seq[e["seq"]] for e in events]
            reply.set_result({"seq": mine[-1]["seq"] if mine else last, "events": mine})
        self.stats["batches"] += 1
        self.stats["events"] += len(stored)
        if stored:
            self._publish(stored)
        # After publishing, never before: the checkpoint is not needed for durability.
        try:
            self.store.checkpoint_if_due()
        except StoreError as exc:
            log.warning("table loop: %s", exc)

    def _command(self, item: _CommandItem, at: str) -> list[dict[str, Any]] | None:
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

    @staticmethod
    def _to_new(events: list[dict[str, Any]]) -> list[NewEvent]:
        return [NewEvent(e["type"], e["data"], e["game_id"], e["actor"], e["at"], e["seq"]) for e in events]

    def _pads(self) -> dict[str, Any]:
        try:
            status = dict(self.source.status())
        except Exception as exc:
            status = {"error": repr(exc)}
        status["notice"] = self._last_notice
        return {"source": self.source.name, "count": self.source.pad_count,
                "resolution_us": self.source.resolution_us, "status": status}

    def _retry_log(self) -> None:
        """While the log cannot be written, check it again every ``log_retry_s``; say so when it recovers."""
        if self.store.problem is None or time.monotonic() < self._next_log_probe:
            return
        self._next_log_probe = time.monotonic() + self.log_retry_s
        if self.store.probe() is None:
            log.warning("table loop: the event log can be written again")
            self._publish_state()

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

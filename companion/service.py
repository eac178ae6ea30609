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
from functools import partial
from typing import TYPE_CHECKING, Any, Mapping

from companion.broadcast import Broadcaster, Subscription, Update
from companion.reply import Reply
from companion.service_reads import ServiceReads
from companion.service_steps import BatchSteps, CommandItem
from companion.config import Config
from companion.disclosure import public_events
from core.errors import CompanionError, ConfigError, InputError, StoreError
from companion.games.base import Command, Game
from companion.notices import NoticeGate
from companion.store import EventStore, NewEvent, utc_now
from companion.table import TableState
from core.hits import PadHit
from hardware.source import PadSource, SourceNotice

if TYPE_CHECKING:
    from companion.phonepads import PhonePads

__all__ = ["TableService", "Update", "Subscription", "Reply"]

log = logging.getLogger(__name__)

#: Most inbox items folded into one batch (one transaction, one update).
BATCH_LIMIT = 256
#: Seconds between checks of an event log that could not be written (a full disk, a read-only
#: file): the table reports itself healthy again within this long after the cause is fixed.
LOG_RETRY_S = 2.0


class _Stop:
    """The inbox item that ends the loop."""


_STOP = _Stop()


class TableService(BatchSteps, ServiceReads):
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
        self._phone_pads: PhonePads | None = None  # made on first use (ServiceReads.phone_pads)
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
            if isinstance(item, CommandItem):
                item.reply.set_error(error)

    @property
    def running(self) -> bool:
        """True between start() and stop() while the loop thread lives."""
        return self._thread is not None and self._thread.is_alive() and not self._stopped

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
        self.inbox.put(CommandItem(command, reply))
        return reply

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
                        if isinstance(late, CommandItem):
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
                    if isinstance(item, CommandItem) and not item.reply.done():
                        item.reply.set_error(RuntimeError(
                            "the table service hit an internal error; check the history before repeating this"))
                try:
                    self._state = self._replay()
                except Exception:
                    log.exception("table loop: rebuilding the state failed")
                    time.sleep(0.5)

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
                self._pending += self._guarded(partial(self._state.execute_hit, item, at), "hit %s", item)
            elif isinstance(item, SourceNotice):
                self._last_notice = {"kind": item.kind, "message": item.message}  # shown at once, stored or not
                passed = self.notices.offer(item, time.monotonic())
                if passed is not None:
                    self._notice(passed, at)
            elif isinstance(item, CommandItem):
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

    @staticmethod
    def _to_new(events: list[dict[str, Any]]) -> list[NewEvent]:
        return [NewEvent(e["type"], e["data"], e["game_id"], e["actor"], e["at"], e["seq"]) for e in events]

    def _retry_log(self) -> None:
        """While the log cannot be written, check it again every ``log_retry_s``; say so when it recovers."""
        if self.store.problem is None or time.monotonic() < self._next_log_probe:
            return
        self._next_log_probe = time.monotonic() + self.log_retry_s
        if self.store.probe() is None:
            log.warning("table loop: the event log can be written again")
            self._publish_state()

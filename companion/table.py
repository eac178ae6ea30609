"""The table's state as a pure fold of stored events: players, seats, the active game, undo.

No I/O and no threads: the table loop (:mod:`companion.service`) owns one
:class:`TableState`, feeds it commands, hits and deadlines, stores the events
it produces and publishes its :meth:`TableState.view`. Replaying the stored
events through :meth:`TableState.apply` rebuilds exactly the same state.

Event types the table itself records (everything else belongs to the active
game and is folded by its ``evolve``):

=================  ==========================================================
``player_added``   ``{"id", "name", "colour", "pad"}``
``player_updated`` ``{"id", <changed fields>}``
``player_removed`` ``{"id"}``
``players_seated`` ``{"order": [ids]}``
``game_started``   ``{"kind", "title", "settings", "players": [player dicts]}``; its seq is the game_id
``game_ended``     ``{"outcome", "reason": "ended" | "finished"}``
``undo``           ``{"seq": target, "type": target's type}``; undoing an undo is a redo
``hit``            ``PadHit.to_dict()`` + ``{"player": id | None}``
``pad_source``     ``{"kind", "message", "details"}`` (the pad source connected, failed, ...)
=================  ==========================================================
"""
from __future__ import annotations

import logging
from collections import deque
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from core.errors import InputError, RuleError
from companion.games.base import ArgSpec, Command, Event, Game, Player, command, command_table
from companion.table_events import (
    NEW_GAME,
    NewGame,
    STEP_KEY,
    TABLE_EVENTS,
    ActiveGame,
    Draft,
    START_GAME_ARGS,
    History,
    as_stored,
    effective_events,
    game_event,
)
from companion.stored import stored_event
from companion.table_players import PALETTE, TablePlayers
from companion.table_undo import TableUndo
from companion.text import check_text_tree
from core.hits import PadHit
from hardware.source import SourceNotice

log = logging.getLogger(__name__)

__all__ = ["PALETTE", "RECENT_HITS", "TABLE_COMMANDS", "TABLE_EVENTS", "TableState", "effective_events", "fold"]

#: How many recent hits the public view shows (and the state keeps: memory stays flat).
RECENT_HITS = 16


class TableState(TablePlayers, TableUndo):
    """Players, seats and the active game, folded from events.

    Args:
        games: kind -> Game class (the registry, or a test's own).
        pad_count: pads the source has; a player's pad must be within it.
        game_defaults: per kind, settings from the config file overlaid on the game's defaults.
        history: where to read one game's earlier events when undo needs to refold
            it. Default: an in-memory list of the active game's events.
    """

    def __init__(
        self,
        games: Mapping[str, type[Game]],
        pad_count: int = 8,
        game_defaults: Mapping[str, Mapping[str, Any]] | None = None,
        history: History | None = None,
    ) -> None:
        self.games = dict(games)
        self.pad_count = pad_count
        self.game_defaults = {k: dict(v) for k, v in (game_defaults or {}).items()}
        self._history = history
        self._memory: list[Mapping[str, Any]] = []  # the active game's events, when history is None
        self.seq = 0
        self.players: list[Player] = []
        self.next_player_id = 1
        self.active: ActiveGame | None = None
        self.recent_hits: deque[dict[str, Any]] = deque(maxlen=RECENT_HITS)
        self.last_notice: dict[str, Any] | None = None
        #: True while events are being folded: if an exception escapes then, the state may be half-updated.
        self.dirty = False
        self._games_available = [self._describe(cls) for cls in self.games.values()]

    # ======================================================================
    # reading
    # ======================================================================
    def _describe(self, cls: type[Game]) -> dict[str, Any]:
        return {
            "kind": cls.kind,
            "title": cls.title,
            "min_players": cls.min_players,
            "max_players": cls.max_players,
            "uses_pads": cls.uses_pads,
            "commands": [s.to_dict() for s in cls.command_specs],
            "settings": {**cls.default_settings(), **self.game_defaults.get(cls.kind, {})},
            "setting_specs": [spec.to_dict() for spec in cls.setting_specs],
        }

    def command_names(self) -> list[str]:
        """Every command valid now: the table's, then the active game's."""
        names = list(TABLE_COMMANDS)
        if self.active is not None:
            names += [s.name for s in self.active.game.command_specs if s.name not in TABLE_COMMANDS]
        return names

    def view(self, pads: Mapping[str, Any] | None = None,
             log_problem: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The public state every phone shows (``pads`` and ``log_problem``, why the log cannot be
        written now, are filled in by the service)."""
        game: dict[str, Any] | None = None
        if self.active is not None:
            a = self.active
            try:
                game_view, outcome = a.game.view(), a.game.outcome()
            except Exception as exc:  # a bug in a game must not take the table down
                log.exception("game %s: view() failed", a.kind)
                game_view, outcome = {"error": f"this game's view failed: {exc!r}"}, None
            game = {
                "game_id": a.game_id,
                "kind": a.kind,
                "title": a.title,
                "settings": a.settings,
                "players": [p.id for p in a.players],
                "view": game_view,
                "outcome": outcome,
                "can_undo": a.can_undo(),
            }
        return {
            "seq": self.seq,
            "players": [p.to_dict() for p in self.players],
            "pads": dict(pads) if pads is not None else {"source": None, "count": self.pad_count},
            "recent_hits": list(self.recent_hits),
            "game": game,
            "games_available": self._games_available,
            "log_problem": dict(log_problem) if log_problem is not None else None,
        }

    # ======================================================================
    # deciding: each returns stored-to-be events already folded into the state
    # ======================================================================
    def execute(self, command: Command, at: str) -> list[dict[str, Any]]:
        """Decide ``command``, fold its events, return them numbered (not yet stored).

        Raises InputError/RuleError/NotFoundError with nothing changed when refused.
        """
        return self._commit(self.decide(command), at)

    def execute_hit(self, hit: PadHit, at: str) -> list[dict[str, Any]]:
        """Record a pad hit, then offer it to the active game."""
        player = self.player_for_pad(hit.pad)
        game_id = self.active.game_id if self.active else None
        out = self._commit([Draft("hit", {**hit.to_dict(), "player": player.id if player else None}, game_id)], at)
        if self.active is not None:
            in_game = player if player is not None and any(p.id == player.id for p in self.active.players) else None
            try:
                drafts = self._game_drafts(self.active.game.decide_hit(hit, in_game), None)
                for d in drafts:
                    as_stored(d)  # checked here so a bad event costs only the game's reaction
            except (InputError, RuleError) as exc:
                log.debug("game ignored hit %s: %s", hit, exc)
                drafts = []
            except Exception:
                # The hit itself stays recorded; a bug in the game must not lose it.
                log.exception("game %s: decide_hit(%s) failed", self.active.kind, hit)
                drafts = []
            out += self._commit(drafts, at)
        return out

    def execute_deadline(self, now_us: int, at: str) -> list[dict[str, Any]]:
        """Let the active game act on its deadline (a window closing, the next beat)."""
        if self.active is None:
            return []
        return self._commit(self._game_drafts(self.active.game.decide_deadline(now_us), None), at)

    def execute_resume(self, now_us: int, at: str) -> list[dict[str, Any]]:
        """After a replay: what the active game records about the restart (e.g. a voided window)."""
        if self.active is None:
            return []
        return self._commit(self._game_drafts(self.active.game.resume(now_us), None), at)

    def execute_notice(self, notice: SourceNotice, at: str) -> list[dict[str, Any]]:
        """Record something the pad source said about itself."""
        data = {"kind": notice.kind, "message": notice.message, "details": dict(notice.details)}
        return self._commit([Draft("pad_source", data, None)], at)

    def next_deadline_us(self) -> int | None:
        """The active game's next deadline on the pad source's clock, if any."""
        return self.active.game.next_deadline_us() if self.active is not None else None

    def decide(self, command: Command) -> list[Draft]:
        """The events ``command`` causes (not folded yet); raises with the reason if refused."""
        if not isinstance(command.name, str) or not command.name:
            raise InputError(f"a command needs a name; valid commands: {', '.join(self.command_names())}")
        if not isinstance(command.args, Mapping):
            raise InputError(f"'args' must be an object, got {command.args!r}")
        try:
            # No text a command carries may hold what UTF-8 cannot write or what misleads on screen.
            check_text_tree(dict(command.args), "the arguments")
        except ValueError as exc:
            raise InputError(f"{command.name}: {exc}") from None
        if command.name in TABLE_COMMANDS:
            drafts: list[Draft] = TABLE_COMMAND_TABLE.route(self, command)
        elif self.active is not None and command.name in self.active.game.command_names():
            drafts = self._game_drafts(self.active.game.decide(command), command.actor)
        else:
            raise InputError(f"unknown command '{command.name}'; valid commands: {', '.join(self.command_names())}")
        for d in drafts:
            d.actor = command.actor
        return drafts

    def _game_drafts(self, events: Iterable[Event], actor: str | None,
                     game_id: int | NewGame | None = None) -> list[Draft]:
        if game_id is None:
            assert self.active is not None
            game_id = self.active.game_id
        drafts = []
        for e in events:
            if not isinstance(e, Event) or not isinstance(e.type, str) or not isinstance(e.data, dict):
                raise TypeError(f"a game returned {e!r}, not an Event(type: str, data: dict)")
            if e.type in TABLE_EVENTS:
                raise TypeError(f"a game returned an event of type '{e.type}', which the table reserves")
            if STEP_KEY in e.data:
                raise TypeError(f"a game returned event data with the key '{STEP_KEY}', which the table reserves")
            drafts.append(Draft(e.type, dict(e.data), game_id, actor))
        if len(drafts) > 1:
            for position, draft in enumerate(drafts, start=1):
                draft.data[STEP_KEY] = [position, len(drafts)]
        return drafts

    def _commit(self, drafts: list[Draft], at: str) -> list[dict[str, Any]]:
        """Number the drafts after ``seq`` and fold them in order.

        Each event's data is folded as it will come back from the log (a JSON
        round trip), so the live state and a replay can never differ (tuples,
        integer keys) and the game never shares objects with stored events.
        """
        # All checked before anything is folded. A hit's data is built here from a PadHit: JSON already.
        datas = [d.data if d.type == "hit" else as_stored(d) for d in drafts]
        out: list[dict[str, Any]] = []
        new_game: int | None = None
        self.dirty = True
        for d, data in zip(drafts, datas):
            seq = self.seq + 1
            if d.type == "game_started":
                new_game = seq
            game_id = seq if d.type == "game_started" else (new_game if isinstance(d.game_id, NewGame) else d.game_id)
            stored = stored_event(seq, at, game_id, d.type, data, d.actor)
            self.apply(stored)
            out.append(stored)
        self.dirty = False
        return out

    @command("start_game", "Start a game {kind, settings?, players?, seed?}", START_GAME_ARGS)
    def _cmd_start_game(self, cmd: Command) -> list[Draft]:
        args = cmd.args
        kind = args["kind"]
        if kind not in self.games:
            raise InputError(f"no game '{kind}'; valid kinds: {', '.join(sorted(self.games)) or 'none installed'}")
        seed = cmd.seed if args.get("seed") is None else args["seed"]  # given: replays, tests
        settings = args.get("settings") or {}
        if args.get("players") is None:
            players = list(self.players)
        else:
            refs = args["players"]
            chosen = [self.player(ref).id for ref in refs]
            if len(set(chosen)) != len(chosen):
                raise InputError(f"'players' names a player twice: {refs!r}")
            # Seat order decides turn order, whatever order the list came in.
            players = [p for p in self.players if p.id in chosen]
        drafts: list[Draft] = []
        if self.active is not None:
            if self.active.game.outcome() is None:
                raise RuleError(f"{self.active.title} is still running; end it first (end_game)")
            drafts.append(self._ended("finished"))
        cls = self.games[kind]
        game = cls(players, {**self.game_defaults.get(kind, {}), **settings})  # validates players and settings
        data = {
            "kind": kind,
            "title": cls.title,
            "settings": game.settings,
            "players": [p.to_dict() for p in players],
        }
        drafts.append(Draft("game_started", data, NEW_GAME))
        drafts += self._game_drafts(game.start(replace(cmd, seed=seed)), cmd.actor, NEW_GAME)
        return drafts

    @command("end_game", "End the running game")
    def _cmd_end_game(self, cmd: Command) -> list[Draft]:
        if self.active is None:
            raise RuleError("no game is running")
        return [self._ended("ended" if self.active.game.outcome() is None else "finished")]

    def _ended(self, reason: str) -> Draft:
        assert self.active is not None
        return Draft("game_ended", {"outcome": self.active.game.outcome(), "reason": reason}, self.active.game_id)

    @command("undo", "Take back the last game event, or event {seq?}; undoing an undo is a redo", (
        ArgSpec("seq", "int", optional=True, nullable=True, message="'seq' must be an event number, got {value}",
                hint="default: the last game event"),
    ))
    def _cmd_undo(self, cmd: Command) -> list[Draft]:
        return self._decide_undo(cmd)

    # ======================================================================
    # folding
    # ======================================================================
    def apply(self, event: Mapping[str, Any], strict: bool = True) -> None:
        """Fold one stored event. ``strict=False`` (replay) logs a failing game event and goes on."""
        seq, type_, data = event["seq"], event["type"], event["data"]
        self.seq = max(self.seq, seq)
        a = self.active
        if a is not None and event.get("game_id") == a.game_id and self._history is None:
            self._memory.append(event)
        if type_ == "player_added":
            self.players.append(Player(data["id"], data["name"], data["colour"], data.get("pad")))
            self.next_player_id = max(self.next_player_id, data["id"] + 1)
        elif type_ == "player_updated":
            self.players = [
                Player(p.id, data.get("name", p.name), data.get("colour", p.colour), data["pad"] if "pad" in data else p.pad)
                if p.id == data["id"] else p
                for p in self.players
            ]
        elif type_ == "player_removed":
            self.players = [p for p in self.players if p.id != data["id"]]
        elif type_ == "players_seated":
            by_id = {p.id: p for p in self.players}
            seated = [by_id[i] for i in data["order"] if i in by_id]
            self.players = seated + [p for p in self.players if p.id not in data["order"]]
        elif type_ == "game_started":
            self._start(event, strict)
        elif type_ == "game_ended":
            if a is not None and event.get("game_id") == a.game_id:
                self.active = None
                self._memory = []
        elif type_ == "hit":
            self.recent_hits.append({k: data.get(k) for k in ("pad", "at_us", "kind", "strength", "player")})
        elif type_ == "pad_source":
            self.last_notice = {"kind": data.get("kind"), "message": data.get("message"), "at": event.get("at")}
        elif type_ == "undo":
            if a is not None and event.get("game_id") == a.game_id:
                events = [*self._game_log(a.game_id, seq), event]
                self._guard(strict, event, lambda: self._refold(a, events, install=True))
        elif a is not None and event.get("game_id") == a.game_id:
            self._guard(strict, event, lambda: a.game.evolve(game_event(event)))
            a.effective += 1
            a.last = event
        else:
            log.debug("event %s (%s) belongs to no running game; ignored", seq, type_)

    @staticmethod
    def _guard(strict: bool, event: Mapping[str, Any], fold: Callable[[], None]) -> None:
        if strict:
            fold()
            return
        try:
            fold()
        except Exception:
            log.exception("replay: event %s (%s) could not be folded; skipped", event["seq"], event["type"])

    def _start(self, event: Mapping[str, Any], strict: bool) -> None:
        data = event["data"]
        cls = self.games.get(data["kind"])
        self._memory = []
        if cls is None:
            if strict:
                raise InputError(f"no game '{data['kind']}' installed")
            log.error("replay: game %s of kind '%s' is not installed; its events are ignored", event["seq"], data["kind"])
            self.active = None
            return
        players = tuple(Player(p["id"], p["name"], p.get("colour", "#888888"), p.get("pad")) for p in data["players"])
        self.active = ActiveGame(event["seq"], data["kind"], data.get("title", cls.title), dict(data["settings"]),
                                 players, cls(players, data["settings"]))
        if self._history is None:
            self._memory.append(event)

def fold(events: Iterable[Mapping[str, Any]], games: Mapping[str, type[Game]], **kwargs: Any) -> TableState:
    """A fresh TableState with every event folded in (the reference replay for tests)."""
    state = TableState(games, **kwargs)
    for e in events:
        state.apply(e, strict=False)
    return state



#: The table's own commands, declared with @command on TableState and its PlayerCommands.
TABLE_COMMAND_TABLE = command_table(TableState, "the table")
TABLE_COMMANDS: tuple[str, ...] = tuple(spec.name for spec in TABLE_COMMAND_TABLE.specs)

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

import json
import logging
import re
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from companion.errors import CompanionError, InputError, NotFoundError, RuleError
from companion.games.base import Command, Event, Game, Player, refuse_unknown_args, require
from companion.text import check_text_tree, clean_name
from hardware.hits import PadHit
from hardware.source import SourceNotice

log = logging.getLogger(__name__)

TABLE_COMMANDS: tuple[str, ...] = (
    "add_player",
    "update_player",
    "remove_player",
    "seat_players",
    "start_game",
    "end_game",
    "undo",
)
TABLE_EVENTS: frozenset[str] = frozenset(
    {"player_added", "player_updated", "player_removed", "players_seated", "game_started", "game_ended",
     "undo", "hit", "pad_source"}
)
#: How many recent hits the public view shows (and the state keeps: memory stays flat).
RECENT_HITS = 16
NAME_MAX = 24
#: Used with fullmatch: ``$`` would also match before a trailing newline.
COLOUR_RE = re.compile(r"#[0-9a-fA-F]{6}")
#: Default colours, handed out in order to players added without one (distinct on a dark screen).
PALETTE = ("#e4572e", "#29a3d6", "#f3c623", "#6ab04c", "#a55eea", "#ff7f50", "#20c997", "#f368e0")

#: ``history(game_id, before_seq)``: the stored events of one game with seq < before_seq, oldest first.
History = Callable[[int, int], Iterable[Mapping[str, Any]]]


class _NewGame:
    """Marker for ``game_id`` of events decided together with the ``game_started`` they belong to."""


NEW_GAME = _NewGame()
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
            self.game.check_undo(_event(self.last), Command("undo"))
        except CompanionError:
            return False
        except Exception:
            log.exception("game %s: check_undo failed", self.kind)
            return False
        return True


@dataclass
class _Draft:
    type: str
    data: dict[str, Any]
    game_id: int | _NewGame | None
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


def _event(stored: Mapping[str, Any]) -> Event:
    data = dict(stored["data"])
    data.pop(STEP_KEY, None)  # the table's own mark; games never see it
    return Event(stored["type"], data)


#: ``start_game``'s ``seed`` ranges over what the service draws (``random.getrandbits(63)``).
MAX_SEED = 2**63 - 1


def _start_seed(args: Mapping[str, Any], drawn: int) -> int:
    """The seed a game starts with: ``args["seed"]`` when given (replays, tests), else the table's random draw."""
    seed = args.get("seed")
    if seed is None:
        return drawn
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(f"'seed' must be a whole number from 0 to {MAX_SEED}, got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise InputError(f"'seed' must be a whole number from 0 to {MAX_SEED}, got {seed}")
    return seed


class TableState:
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
            "commands": [{"name": s.name, "summary": s.summary, "args": list(s.args)} for s in cls.command_specs],
            "settings": {**cls.default_settings(), **self.game_defaults.get(cls.kind, {})},
            "setting_specs": [spec.to_dict() for spec in cls.setting_specs],
        }

    def player(self, ref: Any) -> Player:
        """The player named by id (int) or name (str, any case); NotFoundError if none."""
        if isinstance(ref, bool) or not isinstance(ref, (int, str)):
            raise InputError(f"'player' must be a player id or name, got {ref!r}")
        for p in self.players:
            if p.id == ref or (isinstance(ref, str) and p.name.casefold() == ref.strip().casefold()):
                return p
        known = ", ".join(f"{p.id} {p.name}" for p in self.players) or "none yet"
        raise NotFoundError(f"no player {ref!r} at the table; players: {known}")

    def player_for_pad(self, pad: int) -> Player | None:
        """The table player whose pad this is, if any."""
        for p in self.players:
            if p.pad == pad:
                return p
        return None

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
        out = self._commit([_Draft("hit", {**hit.to_dict(), "player": player.id if player else None}, game_id)], at)
        if self.active is not None:
            in_game = player if player is not None and any(p.id == player.id for p in self.active.players) else None
            try:
                drafts = self._game_drafts(self.active.game.decide_hit(hit, in_game), None)
                for d in drafts:
                    _as_stored(d)  # checked here so a bad event costs only the game's reaction
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
        return self._commit([_Draft("pad_source", data, None)], at)

    def next_deadline_us(self) -> int | None:
        """The active game's next deadline on the pad source's clock, if any."""
        return self.active.game.next_deadline_us() if self.active is not None else None

    def decide(self, command: Command) -> list[_Draft]:
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
        handler = getattr(self, f"_cmd_{command.name}", None) if command.name in TABLE_COMMANDS else None
        if handler is not None:
            drafts: list[_Draft] = handler(command)
        elif self.active is not None and command.name in self.active.game.command_names():
            drafts = self._game_drafts(self.active.game.decide(command), command.actor)
        else:
            raise InputError(f"unknown command '{command.name}'; valid commands: {', '.join(self.command_names())}")
        for d in drafts:
            d.actor = command.actor
        return drafts

    def _game_drafts(self, events: Iterable[Event], actor: str | None,
                     game_id: int | _NewGame | None = None) -> list[_Draft]:
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
            drafts.append(_Draft(e.type, dict(e.data), game_id, actor))
        if len(drafts) > 1:
            for position, draft in enumerate(drafts, start=1):
                draft.data[STEP_KEY] = [position, len(drafts)]
        return drafts

    def _commit(self, drafts: list[_Draft], at: str) -> list[dict[str, Any]]:
        """Number the drafts after ``seq`` and fold them in order.

        Each event's data is folded as it will come back from the log (a JSON
        round trip), so the live state and a replay can never differ (tuples,
        integer keys) and the game never shares objects with stored events.
        """
        # All checked before anything is folded. A hit's data is built here from a PadHit: JSON already.
        datas = [d.data if d.type == "hit" else _as_stored(d) for d in drafts]
        out: list[dict[str, Any]] = []
        new_game: int | None = None
        self.dirty = True
        for d, data in zip(drafts, datas):
            seq = self.seq + 1
            if d.type == "game_started":
                new_game = seq
            game_id = seq if d.type == "game_started" else (new_game if d.game_id is NEW_GAME else d.game_id)
            stored = {"seq": seq, "at": at, "game_id": game_id, "type": d.type, "data": data, "actor": d.actor}
            self.apply(stored)
            out.append(stored)
        self.dirty = False
        return out

    # ----- table commands ----------------------------------------------------
    def _cmd_add_player(self, cmd: Command) -> list[_Draft]:
        args = self._only(cmd, {"name", "colour", "pad"})
        name = self._name(args)
        colour = self._colour(args["colour"]) if args.get("colour") is not None else self._free_colour()
        pad = self._pad(args.get("pad"), None)
        data = {"id": self.next_player_id, "name": name, "colour": colour, "pad": pad}
        return [_Draft("player_added", data, None)]

    def _cmd_update_player(self, cmd: Command) -> list[_Draft]:
        args = self._only(cmd, {"player", "name", "colour", "pad"})
        player = self.player(require_present(args, "player"))
        changes: dict[str, Any] = {}
        if "name" in args:
            changes["name"] = self._name(args, player.id)
        if "colour" in args:
            changes["colour"] = self._colour(args["colour"])
        if "pad" in args:
            changes["pad"] = self._pad(args["pad"], player.id)
        if not changes:
            raise InputError("update_player needs at least one of 'name', 'colour', 'pad'")
        return [_Draft("player_updated", {"id": player.id, **changes}, None)]

    def _cmd_remove_player(self, cmd: Command) -> list[_Draft]:
        args = self._only(cmd, {"player"})
        player = self.player(require_present(args, "player"))
        if self.active is not None and self.active.game.outcome() is None and any(
            p.id == player.id for p in self.active.players
        ):
            raise RuleError(f"{player.name} is playing {self.active.title}; end the game first")
        return [_Draft("player_removed", {"id": player.id}, None)]

    def _cmd_seat_players(self, cmd: Command) -> list[_Draft]:
        args = self._only(cmd, {"order"})
        order = require(args, "order", list)
        ids = [self.player(ref).id for ref in order]
        if len(set(ids)) != len(ids):
            raise InputError(f"'order' names a player twice: {order!r}")
        missing = [p.name for p in self.players if p.id not in ids]
        if missing:
            raise InputError(f"'order' must list every player once; missing: {', '.join(missing)}")
        return [_Draft("players_seated", {"order": ids}, None)]

    def _cmd_start_game(self, cmd: Command) -> list[_Draft]:
        args = self._only(cmd, {"kind", "settings", "players", "seed"})
        kind = require(args, "kind", str)
        if kind not in self.games:
            raise InputError(f"no game '{kind}'; valid kinds: {', '.join(sorted(self.games)) or 'none installed'}")
        seed = _start_seed(args, cmd.seed)
        settings = args.get("settings") or {}
        if not isinstance(settings, Mapping):
            raise InputError(f"'settings' must be an object, got {settings!r}")
        if args.get("players") is None:
            players = list(self.players)
        else:
            refs = require(args, "players", list)
            chosen = [self.player(ref).id for ref in refs]
            if len(set(chosen)) != len(chosen):
                raise InputError(f"'players' names a player twice: {refs!r}")
            # Seat order decides turn order, whatever order the list came in.
            players = [p for p in self.players if p.id in chosen]
        drafts: list[_Draft] = []
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
        drafts.append(_Draft("game_started", data, NEW_GAME))
        drafts += self._game_drafts(game.start(replace(cmd, seed=seed)), cmd.actor, NEW_GAME)
        return drafts

    def _cmd_end_game(self, cmd: Command) -> list[_Draft]:
        self._only(cmd, set())
        if self.active is None:
            raise RuleError("no game is running")
        return [self._ended("ended" if self.active.game.outcome() is None else "finished")]

    def _ended(self, reason: str) -> _Draft:
        assert self.active is not None
        return _Draft("game_ended", {"outcome": self.active.game.outcome(), "reason": reason}, self.active.game_id)

    def _cmd_undo(self, cmd: Command) -> list[_Draft]:
        args = self._only(cmd, {"seq"})
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
            if isinstance(target_seq, bool) or not isinstance(target_seq, int):
                raise InputError(f"'seq' must be an event number, got {target_seq!r}")
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
                a.game.check_undo(_event(event), cmd)
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
        return [_Draft("undo", data, a.game_id)]

    # ----- argument checks ----------------------------------------------------
    @staticmethod
    def _only(cmd: Command, allowed: set[str]) -> Mapping[str, Any]:
        refuse_unknown_args(cmd.name, cmd.args, allowed)
        return cmd.args

    def _name(self, args: Mapping[str, Any], own_id: int | None = None) -> str:
        raw = require(args, "name", str)
        try:
            name = clean_name(raw, NAME_MAX)  # the rules are in docs/api.md, "Names and text"
        except ValueError as exc:
            raise InputError(str(exc)) from None
        for p in self.players:
            if p.id != own_id and p.name.casefold() == name.casefold():
                raise RuleError(f"there is already a player called {p.name}; choose another name")
        return name

    @staticmethod
    def _colour(value: Any) -> str:
        if not isinstance(value, str) or not COLOUR_RE.fullmatch(value):
            raise InputError(f"'colour' must be a colour like '#e4572e', got {value!r}")
        return value.lower()

    def _free_colour(self) -> str:
        used = {p.colour for p in self.players}
        return next((c for c in PALETTE if c not in used), PALETTE[len(self.players) % len(PALETTE)])

    def _pad(self, value: Any, own_id: int | None) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= self.pad_count:
            raise InputError(f"'pad' must be a pad number from 1 to {self.pad_count} (or null), got {value!r}")
        holder = self.player_for_pad(value)
        if holder is not None and holder.id != own_id:
            raise RuleError(f"pad {value} is {holder.name}'s; give {holder.name} another pad (or none) first")
        return value

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
            self._guard(strict, event, lambda: a.game.evolve(_event(event)))
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

    def _game_log(self, game_id: int, before: int) -> list[Mapping[str, Any]]:
        if self._history is None:
            return [e for e in self._memory if e["seq"] < before]
        return list(self._history(game_id, before))

    def _refold(self, a: ActiveGame, events: Sequence[Mapping[str, Any]], install: bool = False) -> None:
        """Rebuild the game from its start without the undone events (the same for every game)."""
        kept, _ = effective_events(events)
        game = type(a.game)(a.players, a.settings)
        for e in kept:
            game.evolve(_event(e))
        if install:
            a.game = game
            a.effective = len(kept)
            a.last = kept[-1] if kept else None


def _as_stored(draft: _Draft) -> dict[str, Any]:
    """The draft's data after a JSON round trip, or TypeError naming the event that cannot be stored."""
    try:
        return json.loads(json.dumps(draft.data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"event '{draft.type}' has data that cannot be stored as JSON: {exc}") from None


def require_present(args: Mapping[str, Any], key: str) -> Any:
    """``args[key]``, or InputError saying it is missing."""
    if key not in args or args[key] is None:
        raise InputError(f"'{key}' is missing")
    return args[key]


def fold(events: Iterable[Mapping[str, Any]], games: Mapping[str, type[Game]], **kwargs: Any) -> TableState:
    """A fresh TableState with every event folded in (the reference replay for tests)."""
    state = TableState(games, **kwargs)
    for e in events:
        state.apply(e, strict=False)
    return state

"""The small interface every game implements so it plugs into the table loop.

The shape is "decide, then evolve" (event sourcing):

* ``decide(command)`` / ``decide_hit(hit)`` / ``decide_deadline(now_us)`` look
  at the current state and return the events that should happen, or raise
  :class:`~core.errors.RuleError` with the reason. They never mutate.
* ``evolve(event)`` folds one recorded event into the state. It must accept
  every event ``decide*`` ever produced, so a replay of the log rebuilds the
  exact state after a restart.
* ``view()`` is the public, JSON-ready state every phone shows.

Randomness (shuffles) comes from ``Command.seed`` and the result goes into the
event, so replay never depends on a random generator. Time comes from
``Command.at_us`` and ``PadHit.at_us`` (both on the pad source's clock).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

from companion.games.args import ARG_TYPES, ArgSpec, Bound, arg_specs, setting
from companion.games.outcome import Outcome, Termination
from companion.games.settings import SETTING_TYPES, SettingSpec
from core.checks import whole_number
from core.errors import CompanionError, InputError, RuleError
from core.hits import PadHit


#: The game kit: everything a game module needs, importable from here.
__all__ = [
    "ARG_TYPES", "SETTING_TYPES", "ArgSpec", "Bound",
    "Command", "CommandSpec", "CommandTable", "Event", "Game", "Handler", "Outcome", "Player",
    "SettingSpec", "Termination", "command", "command_table", "player_on_pad", "refuse_unknown_args", "require",
    "require_int", "setting",
]


@dataclass(frozen=True, slots=True)
class Player:
    """A person at the table. ``id`` is stable for the table's life; seat order is list order."""

    id: int
    name: str
    colour: str = "#888888"
    pad: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "colour": self.colour, "pad": self.pad}


@dataclass(frozen=True, slots=True)
class Command:
    """Something a person (or script) asked for, as the table loop received it.

    Attributes:
        name: the command's name, e.g. ``"enter_round"``.
        args: its arguments, straight from JSON: validate every one.
        at_us: when the loop received it, on the pad source's clock.
        seed: randomness for this command (shuffles); put results in the events.
        actor: who asked (a phone's label), for the history.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    at_us: int = 0
    seed: int = 0
    actor: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """A fact to record in the log: ``type`` and JSON-ready ``data``."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """What the web and docs need to know about one command (a game's or the table's).

    ``args`` names every argument the command takes: :meth:`CommandTable.check`
    refuses any other by name, so a script's typo is a clear 400 instead of a
    silently ignored argument. ``arg_specs`` declares each one's type and range
    (:class:`ArgSpec`), checked once before the command's method runs; a name
    without a spec is an optional argument its method checks itself.
    """

    name: str
    summary: str
    args: tuple[str, ...] = ()
    arg_specs: tuple[ArgSpec, ...] = ()

    def specs(self) -> tuple[ArgSpec, ...]:
        """A spec for every argument, in declaration order."""
        declared = {a.name: a for a in self.arg_specs}
        return tuple(declared.get(name) or ArgSpec(name, optional=True) for name in self.args)

    def check_args(self, args: Mapping[str, Any], owner: Any) -> None:
        """InputError naming an argument the command does not take, or the first missing or bad one."""
        refuse_unknown_args(self.name, args, self.args)
        for spec in self.specs():
            spec.check(args, owner)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready for clients: ``args`` the names, ``arg_specs`` each one's type and range
        (left out when the command declares none: a game that lists only names checks them itself)."""
        out: dict[str, Any] = {"name": self.name, "summary": self.summary, "args": list(self.args)}
        if self.arg_specs:
            out["arg_specs"] = [a.to_dict() for a in self.specs()]
        return out


#: A command handler: a method taking the command, returning what it decided.
Handler = Callable[[Any, Command], Any]


def command(name: str, summary: str, args: Iterable[ArgSpec | str] = ()) -> Callable[[Handler], Handler]:
    """Method decorator: declare the command ``name`` with its arguments; the method decides it.

    Each argument is an :class:`ArgSpec` (or a bare name: optional, checked by the method).

    Every game and the table itself declare their commands this way; the
    class's :class:`CommandTable` (built by :func:`command_table`) validates a
    command's name and arguments once and routes it to its method. Stacked on
    one method, several commands share it (it reads ``command.name``); they are
    listed top to bottom.
    """
    specs = arg_specs(list(args))
    spec = CommandSpec(name, summary, tuple(a.name for a in specs), specs)

    def mark(method: Handler) -> Handler:
        # Decorators apply bottom-up: put this one first so the list reads as written.
        method.__command_specs__ = (spec, *getattr(method, "__command_specs__", ()))  # type: ignore[attr-defined]
        return method

    return mark


@dataclass(frozen=True)
class CommandTable:
    """The commands one class declares with :func:`command`, in declaration order, and their methods."""

    owner: str
    specs: tuple[CommandSpec, ...]
    handlers: Mapping[str, Handler]

    def names(self) -> frozenset[str]:
        """The name of every declared command."""
        return frozenset(spec.name for spec in self.specs)

    def check(self, cmd: Command, target: Any = None) -> CommandSpec:
        """The spec of ``cmd``, or InputError naming an unknown command, an argument it does not take,
        or a missing or bad argument (its :class:`ArgSpec`; a :class:`Bound` is read from ``target``)."""
        spec = next((s for s in self.specs if s.name == cmd.name), None)
        if spec is None:
            raise InputError(f"{self.owner} has no command '{cmd.name}'; commands: {', '.join(sorted(self.names()))}")
        if target is None:
            refuse_unknown_args(cmd.name, cmd.args, spec.args)
        else:
            spec.check_args(cmd.args, target)
        return spec

    def route(self, target: Any, cmd: Command) -> Any:
        """Check ``cmd`` and its arguments once, then hand it to the method that declared it."""
        spec = self.check(cmd, target)
        return self.handlers[spec.name](target, cmd)


def command_table(cls: type, owner: str) -> CommandTable:
    """Every :func:`command` method of ``cls`` and its bases (a subclass's own win), in declaration order."""
    specs: dict[str, CommandSpec] = {}
    handlers: dict[str, Handler] = {}
    for klass in reversed(cls.__mro__):
        for value in vars(klass).values():
            for spec in getattr(value, "__command_specs__", ()):
                specs[spec.name] = spec
                handlers[spec.name] = value
    return CommandTable(owner, tuple(specs.values()), handlers)


class Game(ABC):
    """Pure rules of one game. Subclasses set the class attributes and implement the abstract methods."""

    kind: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 8
    #: True when pad hits matter to this game (Taco Hat Cake Gift Pizza; TacTile's optional end-turn pad).
    uses_pads: ClassVar[bool] = False
    #: The commands ``decide`` accepts, for the API docs and for routing.
    command_specs: ClassVar[tuple[CommandSpec, ...]] = ()
    #: Every setting, declared once (defaults, labels, ranges): see :class:`SettingSpec`.
    setting_specs: ClassVar[tuple[SettingSpec, ...]] = ()

    def __init__(self, players: Sequence[Player], settings: Mapping[str, Any]) -> None:
        if not self.min_players <= len(players) <= self.max_players:
            raise RuleError(
                f"{self.title} needs {self.min_players} to {self.max_players} players, the table has {len(players)}"
            )
        self.players: tuple[Player, ...] = tuple(players)
        self.settings: dict[str, Any] = self.validate_settings(settings)

    # ----- settings -------------------------------------------------------
    @classmethod
    def default_settings(cls) -> dict[str, Any]:
        """Every setting with its default, from :attr:`setting_specs`."""
        return {spec.key: spec.fresh_default() for spec in cls.setting_specs}

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with ``settings``; raise InputError naming a bad key or value.

        Subclasses extend this to check each value; the base checks the keys.
        """
        defaults = cls.default_settings()
        unknown = sorted(set(settings) - set(defaults))
        if unknown:
            valid = ", ".join(sorted(defaults)) or "none"
            raise InputError(f"{cls.title} has no setting '{unknown[0]}'; valid settings: {valid}")
        return {**defaults, **settings}

    # ----- decide ---------------------------------------------------------
    def start(self, command: Command) -> list[Event]:
        """Events that begin the game (a deal, a board layout). Default: none."""
        return []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table = command_table(cls, getattr(cls, "title", cls.__name__))
        if table.specs:
            # Declared with @command: the specs the API lists come from the methods themselves.
            cls.command_specs = table.specs
        cls._commands = table

    #: Built for each subclass from its @command methods.
    _commands: ClassVar[CommandTable]

    @classmethod
    def command_names(cls) -> frozenset[str]:
        """The names of every command ``decide`` accepts."""
        return frozenset(spec.name for spec in cls.command_specs)

    def decide(self, command: Command) -> list[Event]:
        """Events caused by ``command``, or RuleError/InputError with the reason. Never mutates.

        Checks the command's name and argument names against its :func:`command`
        declaration, asks :meth:`before_command` (may any command, or this one, run now), checks
        the arguments once against their :class:`ArgSpec` (a :class:`Bound` read from this game),
        then hands the command to the method that declared it.
        """
        spec = self._commands.check(command)
        self.before_command(command)
        spec.check_args(command.args, self)
        result: list[Event] = self._commands.handlers[spec.name](self, command)
        return result

    def before_command(self, command: Command) -> None:
        """Raise RuleError when no command (or not this one) may run now: the cards are not dealt, there
        is no round to edit yet. Runs before the arguments are checked, so a range bound to the state
        (:class:`Bound`) is never empty. Default: always may."""

    # ----- legal moves as data ---------------------------------------------
    def candidate_commands(self) -> Iterable[Command]:
        """The commands worth asking :meth:`legal_commands` about now, their arguments listed where the
        rules allow (a score a person types in cannot be listed). Default: each command without arguments."""
        return [Command(spec.name) for spec in self.command_specs if not spec.args]

    def legal_commands(self) -> list[Command]:
        """Every candidate command ``decide`` accepts now, in order: the game's legal moves as values.

        ``decide`` never mutates, so asking changes nothing; a refused candidate
        (RuleError, InputError) is simply not legal now.
        """
        legal = []
        for candidate in self.candidate_commands():
            try:
                self.decide(candidate)
            except CompanionError:
                continue
            legal.append(candidate)
        return legal

    def decide_hit(self, hit: PadHit, player: Player | None) -> list[Event]:
        """Events caused by a pad hit (``player`` is None for an unassigned pad). Default: none."""
        return []

    def next_deadline_us(self) -> int | None:
        """The next time (source clock) at which ``decide_deadline`` must be called, or None."""
        return None

    def decide_deadline(self, now_us: int) -> list[Event]:
        """Events due at ``now_us`` (a slap window closing, the next beat). Default: none."""
        return []

    def resume(self, now_us: int) -> list[Event]:
        """Events to record after a restart replayed the log (e.g. void an open window).

        The pad source's clock may have restarted, so stored deadlines may be
        meaningless; a game with timers decides here what a careful referee does.
        """
        return []

    def check_undo(self, event: Event, command: Command) -> None:
        """Raise RuleError if ``event`` (the one an ``undo`` would remove) may not be undone."""

    # ----- evolve ---------------------------------------------------------
    @abstractmethod
    def evolve(self, event: Event) -> None:
        """Fold one recorded event into the state."""

    # ----- read -----------------------------------------------------------
    @abstractmethod
    def view(self) -> dict[str, Any]:
        """The public state every phone shows, JSON-ready."""

    def result(self) -> Outcome | None:
        """None while the game goes on; else how it ended (:class:`Outcome`). Games override this."""
        return None

    def outcome(self) -> dict[str, Any] | None:
        """The JSON form of :meth:`result`: None while the game goes on, else ``{"winners", "reason", ...}``."""
        result = self.result()
        return None if result is None else result.to_dict()

    @classmethod
    def public_data(cls, event_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` of one of this game's events as anyone at the table may see it while the game runs.

        The log keeps every event whole (a replay needs the deck); every reader outside the
        table loop (the live stream, history, exports, a command's answer) gets this instead
        until the game has ended. A game that records something the players could not see at
        the table (the order of a shuffled deck, a face-down pile) withholds it here. The
        default: everything this game records is public. Must not mutate ``data``.
        """
        return dict(data)

    # ----- helpers for subclasses ------------------------------------------
    def player(self, player_id: Any) -> Player:
        """The player with this id, or InputError naming the bad id."""
        for p in self.players:
            if p.id == player_id and not isinstance(player_id, bool):
                return p
        raise InputError(f"no player with id {player_id!r} in this game; players: {[p.id for p in self.players]}")

    def player_for_pad(self, pad: int) -> Player | None:
        """The player whose pad this is, if any."""
        return player_on_pad(self.players, pad)


def player_on_pad(players: Iterable[Player], pad: int) -> Player | None:
    """The one of ``players`` whose pad is ``pad``, if any (the table's and a game's lookup)."""
    return next((p for p in players if p.pad == pad), None)


def refuse_unknown_args(name: str, args: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """InputError naming the first argument in ``args`` that command ``name`` does not take."""
    allowed = set(allowed)
    unknown = sorted(set(args) - allowed)
    if unknown:
        valid = ", ".join(sorted(allowed)) or "none"
        raise InputError(f"{name} has no argument '{unknown[0]}'; valid arguments: {valid}")


def require(args: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """``args[key]`` checked against ``kind``, or InputError saying what is missing or wrong."""
    if key not in args:
        raise InputError(f"'{key}' is missing")
    value = args[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise InputError(f"'{key}' must be a number, got {value!r}")
    if not isinstance(value, kind):
        name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(f"'{key}' must be {name}, got {value!r}")
    return value


def require_int(args: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    """A whole number in ``lo..hi`` from ``args[key]``, or InputError naming the key and range."""
    value = args.get(key)
    if key not in args:
        raise InputError(f"'{key}' is missing")
    return whole_number(value, lo, hi, f"'{key}'")

"""The small interface every game implements so it plugs into the table loop.

The shape is "decide, then evolve" (event sourcing):

* ``decide(command)`` / ``decide_hit(hit)`` / ``decide_deadline(now_us)`` look
  at the current state and return the events that should happen, or raise
  :class:`~companion.errors.RuleError` with the reason. They never mutate.
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
from typing import Any, ClassVar, Iterable, Mapping, Sequence

from companion.errors import InputError, RuleError
from hardware.hits import PadHit


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
    """What the web and docs need to know about one game command.

    ``args`` names every argument the command takes: a game that checks its
    commands with :meth:`Game.check_command` refuses any other by name, so a
    script's typo is a clear 400 instead of a silently ignored argument.
    """

    name: str
    summary: str
    args: tuple[str, ...] = ()


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
        """Every setting with its default."""
        return {}

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

    @classmethod
    def command_names(cls) -> frozenset[str]:
        """The names of every command ``decide`` accepts."""
        return frozenset(spec.name for spec in cls.command_specs)

    @classmethod
    def check_command(cls, command: Command) -> CommandSpec:
        """The spec of ``command``, or InputError naming an unknown command or an argument it does not take."""
        spec = next((s for s in cls.command_specs if s.name == command.name), None)
        if spec is None:
            raise InputError(f"{cls.title} has no command '{command.name}'; commands: {', '.join(sorted(cls.command_names()))}")
        refuse_unknown_args(command.name, command.args, spec.args)
        return spec

    @abstractmethod
    def decide(self, command: Command) -> list[Event]:
        """Events caused by ``command``, or RuleError/InputError with the reason. Never mutates."""

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

    def outcome(self) -> dict[str, Any] | None:
        """None while the game goes on; else ``{"winners": [player ids], "reason": str}``."""
        return None

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
        for p in self.players:
            if p.pad == pad:
                return p
        return None


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
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InputError(f"'{key}' must be a whole number from {lo} to {hi}, got {value!r}")
    return value

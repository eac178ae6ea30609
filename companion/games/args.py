"""A command's arguments, declared once as :class:`ArgSpec` values and checked once before routing.

Every game and the table declare each command's arguments with
:func:`~companion.games.base.command`; the :class:`~companion.games.base.CommandTable`
checks a command against them before its method runs, so a handler reads
arguments that already have the declared type and range. What only the
current state can answer (is there such a player, is that slot waiting for a
card) stays in the handler; a limit the state sets (the number of verdicts so
far, a game's own setting) is a :class:`Bound`, read from the game or table
when the command arrives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NoReturn

from core.errors import InputError


#: What an argument's value must be (``any``: the handler checks it; ``player``: a player id or name).
ARG_TYPES = ("any", "int", "bool", "str", "choice", "list", "object", "player")

#: How the common message names each type ("'<name>' must be <this>, got <value>").
_TYPE_WORDS = {"int": "int", "bool": "true or false", "str": "str", "list": "list", "object": "an object",
               "player": "a player id or name"}


@dataclass(frozen=True, slots=True)
class Bound:
    """A limit known only when the command arrives: ``read(owner)`` on the game (or table) that checks it.

    ``label`` says what it is for clients and docs ("the number of verdicts so far").
    """

    read: Callable[[Any], Any]
    label: str


def setting(key: str) -> Bound:
    """A limit that is the game's own setting ``key`` (e.g. a deck size chosen at the start)."""
    return Bound(lambda game: game.settings[key], f"setting '{key}'")


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """One argument of a command, declared once: its type, range, and the message for a bad value.

    Attributes:
        name: the key in the command's ``args``.
        type: one of :data:`ARG_TYPES`.
        optional: may be left out (the handler chooses the default, see ``default``).
        nullable: ``null`` counts as leaving it out.
        min, max: the whole-number range of an ``int`` (an int, or a :class:`Bound`).
        choices: the values a ``choice`` (or a ``str``) may take (a tuple, or a :class:`Bound`).
        also: values accepted besides the type (a card id, or ``"basic"``).
        pattern: a ``str`` must match this regular expression whole.
        default: what leaving it out means, for clients and docs only.
        message: replaces the common message for a missing or bad value; formatted with
            ``{name}``, ``{lo}``, ``{hi}`` and ``{value}`` (the value's repr), so the
            message a caller knows stays word for word.
        hint: a short note for clients ("a card id or \"basic\"").
    """

    name: str
    type: str = "any"
    optional: bool = False
    nullable: bool = False
    min: int | Bound | None = None
    max: int | Bound | None = None
    choices: tuple[Any, ...] | Bound = ()
    also: tuple[Any, ...] = ()
    pattern: str | None = None
    default: Any = None
    message: str | None = None
    hint: str | None = None

    def __post_init__(self) -> None:
        if self.type not in ARG_TYPES:
            raise ValueError(f"argument '{self.name}': type must be one of {', '.join(ARG_TYPES)}, got {self.type!r}")

    def check(self, args: Mapping[str, Any], owner: Any) -> None:
        """InputError when ``args`` lacks this argument (and it is required) or holds a bad value for it."""
        if self.name not in args or (self.nullable and args[self.name] is None):
            if not self.optional:
                self.refuse(None, owner, missing=True)
            return
        value = args[self.name]
        if _among(value, self.also):
            return
        if not self._type_ok(value):
            self.refuse(value, owner)
        lo, hi = _read(self.min, owner), _read(self.max, owner)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            self.refuse(value, owner)
        choices = _read(self.choices, owner)
        if choices and not _among(value, choices):
            self.refuse(value, owner)
        if self.pattern is not None and not re.fullmatch(self.pattern, value):
            self.refuse(value, owner)

    def _type_ok(self, value: Any) -> bool:
        if self.type == "int":
            return isinstance(value, int) and not isinstance(value, bool)
        if self.type == "player":
            return isinstance(value, (int, str)) and not isinstance(value, bool)
        kinds: dict[str, type | tuple[type, ...]] = {"bool": bool, "str": str, "list": list, "object": Mapping}
        return self.type not in kinds or isinstance(value, kinds[self.type])

    def refuse(self, value: Any, owner: Any, missing: bool = False) -> NoReturn:
        """Raise InputError with this argument's message for ``value`` (the handler's own cross-argument checks use it too)."""
        lo, hi = _read(self.min, owner), _read(self.max, owner)
        if self.message is not None:
            raise InputError(self.message.format(name=self.name, lo=lo, hi=hi, value=repr(value)))
        what = f"'{self.name}'"
        if missing:
            raise InputError(f"{what} is missing")
        choices = _read(self.choices, owner)
        if self.type == "int" and lo is not None and hi is not None:
            # The one whole-number message every layer gives (core.checks.whole_number).
            raise InputError(f"{what} must be a whole number from {lo} to {hi}, got {value!r}")
        if self.type == "int" and isinstance(value, bool):
            raise InputError(f"{what} must be a number, got {value!r}")
        if self.type in _TYPE_WORDS and not self._type_ok(value):
            raise InputError(f"{what} must be {_TYPE_WORDS[self.type]}, got {value!r}")
        if choices:
            raise InputError(f"{what} must be one of {', '.join(map(str, choices))}, got {value!r}")
        raise InputError(f"{what} must match {self.pattern}, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready for clients, without the empty fields; a run-time limit is given by its label (``max_from``)."""
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.optional:
            out["optional"] = True
        if self.nullable:
            out["nullable"] = True
        for key in ("min", "max", "choices"):
            value = getattr(self, key)
            if isinstance(value, Bound):
                out[f"{key}_from"] = value.label
            elif value not in (None, ()):
                out[key] = list(value) if key == "choices" else value
        if self.also:
            out["also"] = list(self.also)
        for key in ("pattern", "default", "hint"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def _among(value: Any, values: tuple[Any, ...]) -> bool:
    # Type and value: True is not 1, and 1 is not True.
    return any(type(value) is type(v) and value == v for v in values)


def _read(limit: Any, owner: Any) -> Any:
    return limit.read(owner) if isinstance(limit, Bound) else limit


def arg_specs(args: tuple[ArgSpec | str, ...] | list[ArgSpec | str]) -> tuple[ArgSpec, ...]:
    """``args`` as specs: a bare name is an optional argument the handler checks itself (type ``any``)."""
    return tuple(ArgSpec(a, optional=True) if isinstance(a, str) else a for a in args)

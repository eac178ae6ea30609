"""A game's settings, declared once as :class:`SettingSpec` values (the start form is drawn from them)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any


#: What kind of input a setting takes (the start form draws one input per kind).
SETTING_TYPES = ("number", "bool", "choice", "player", "counts", "string")


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One game setting, declared once: its default and how a person sets it.

    The table sends every spec in ``games_available[].setting_specs`` and the
    start form is drawn from them, so nothing in the browser repeats a label,
    unit or range. The game's ``validate_settings`` still has the last word.

    Attributes:
        key: the setting's name in ``start_game``'s ``settings``.
        default: its value when not given (a copy is handed out each time).
        label: what the start form calls it.
        type: one of :data:`SETTING_TYPES`.
        unit: shown after the input (``ms``, ``points``, ``cards``).
        min, max: the whole-number range a ``number`` (or each ``counts`` entry) may take.
        hint: what an empty value means, or a short note.
        choices: for ``choice``: (value, label) pairs.
        empty: for ``player``: what no player means ("first seat", "random").
        random: for ``player``: "random" is also allowed.
        advanced: folded away under "Advanced" on the start form.
    """

    key: str
    default: Any
    label: str
    type: str = "number"
    unit: str | None = None
    min: int | None = None
    max: int | None = None
    hint: str | None = None
    choices: tuple[tuple[str, str], ...] = ()
    empty: str | None = None
    random: bool = False
    advanced: bool = False

    def __post_init__(self) -> None:
        if self.type not in SETTING_TYPES:
            raise ValueError(f"setting '{self.key}': type must be one of {', '.join(SETTING_TYPES)}, got {self.type!r}")

    def fresh_default(self) -> Any:
        """The default, copied so no game shares a mutable default with another."""
        return copy.deepcopy(self.default)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the empty fields."""
        out: dict[str, Any] = {"key": self.key, "label": self.label, "type": self.type, "default": self.fresh_default()}
        for name in ("unit", "min", "max", "hint", "empty"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.choices:
            out["choices"] = [list(c) for c in self.choices]
        if self.random:
            out["random"] = True
        if self.advanced:
            out["advanced"] = True
        return out

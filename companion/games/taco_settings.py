"""Taco Hat Cake Gift Pizza: every setting with its default, and their checks.

Times are milliseconds (people type them); the referee converts to
microseconds. docs/games/taco.md explains each one.
"""

from __future__ import annotations

from typing import Any, Mapping

from core.errors import InputError
from companion.games.base import SettingSpec
from companion.games.taco_cards import DEFAULT_DECK, validate_deck

MODES = ("digital", "physical")

#: (default, lowest, highest) for every whole-millisecond setting.
TIMES_MS: dict[str, tuple[int, int, int]] = {
    "tempo_ms": (1200, 200, 10_000),  # digital: time between two flips
    "speedup_ms": (0, 0, 1000),  # digital: each flip of a round comes this much sooner
    "min_tempo_ms": (500, 200, 10_000),  # digital: the speed-up never goes below this
    "lead_in_ms": (3000, 0, 60_000),  # digital: from the deal (or resume) to the first flip
    "after_verdict_ms": (3000, 0, 60_000),  # digital: from a verdict to the next round's first flip
    "timeout_ms": (3000, 200, 30_000),  # a slap window closes this long after the card / first slap
    "grace_ms": (250, 0, 5000),  # extra wait for hits delivered late, stamped inside the window
    "false_start_ms": (100, 0, 1000),  # a slap sooner than this after the card is a flinch
    "mask_ms": (150, 0, 2000),  # a second hit on the same pad this soon is a bounce
    "follow_ms": (1000, 100, 10_000),  # physical: a slap nobody follows within this is a flinch
    "settle_ms": (1000, 0, 10_000),  # physical: hits this soon after a verdict are ignored
}


#: What the start form calls each timing setting, and whether it is folded away.
TIME_LABELS: dict[str, tuple[str, bool]] = {
    "tempo_ms": ("Time between flips", False),
    "speedup_ms": ("Speed-up per flip", False),
    "min_tempo_ms": ("Fastest flip", True),
    "lead_in_ms": ("Lead-in before the first flip", True),
    "after_verdict_ms": ("Pause after a verdict", True),
    "timeout_ms": ("Slap window", True),
    "grace_ms": ("Grace for late hits", True),
    "false_start_ms": ("Too soon (flinch) under", True),
    "mask_ms": ("Bounce mask", True),
    "follow_ms": ("Follow time (physical)", True),
    "settle_ms": ("Settle after a verdict (physical)", True),
}

#: Every setting, in the order the start form shows them.
SETTING_SPECS: tuple[SettingSpec, ...] = (
    SettingSpec("mode", "digital", "Cards", type="choice", choices=(("digital", "digital cards"), ("physical", "real cards"))),
    SettingSpec("deck", dict(DEFAULT_DECK), "Deck", type="counts", unit="cards", min=0, advanced=True),
    SettingSpec("cards_each", None, "Cards each", hint="auto: 12, 10 or 8 by table size", min=1, max=64),
    SettingSpec("dealer", None, "Dealer", type="player", empty="first seat", random=True),
    SettingSpec("quorum", None, "Slaps that close a pile (physical)", hint="auto: more than half the table",
                min=1, max=8, advanced=True),
    *(SettingSpec(key, default, TIME_LABELS[key][0], unit="ms", min=lo, max=hi, advanced=TIME_LABELS[key][1])
      for key, (default, lo, hi) in TIMES_MS.items()),
)


def default_settings() -> dict[str, Any]:
    """Every setting with its default value."""
    return {spec.key: spec.fresh_default() for spec in SETTING_SPECS}


def check_settings(settings: Mapping[str, Any], player_ids: list[int] | None = None) -> dict[str, Any]:
    """Validated settings (defaults already overlaid), or InputError naming the key and what is valid.

    ``player_ids`` (when known) is used to check the ``dealer`` setting.
    """
    out = dict(settings)
    if out["mode"] not in MODES:
        raise InputError(f"setting 'mode' must be one of {', '.join(MODES)}, got {out['mode']!r}")
    out["deck"] = validate_deck(out["deck"])
    each = out["cards_each"]
    if each is not None and (isinstance(each, bool) or not isinstance(each, int) or not 1 <= each <= 64):
        raise InputError(f"setting 'cards_each' must be empty (rulebook: 12/10/8) or a whole number from 1 to 64, got {each!r}")
    dealer = out["dealer"]
    bad_dealer = isinstance(dealer, bool) or not isinstance(dealer, int)
    if player_ids is not None and not bad_dealer:
        bad_dealer = dealer not in player_ids
    if dealer is not None and dealer != "random" and bad_dealer:
        raise InputError(
            f"setting 'dealer' must be empty (first seat), \"random\" or a player id of this game {player_ids or ''}, got {dealer!r}"
        )
    quorum = out["quorum"]
    if quorum is not None and (isinstance(quorum, bool) or not isinstance(quorum, int) or not 1 <= quorum <= 8):
        raise InputError(f"setting 'quorum' must be empty (more than half the table) or a whole number from 1 to 8, got {quorum!r}")
    for key, (_, lo, hi) in TIMES_MS.items():
        value = out[key]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise InputError(f"setting '{key}' must be a whole number of milliseconds from {lo} to {hi}, got {value!r}")
    return out

"""TacTile: every setting, declared once, and its checks (docs/games/tactile.md explains each)."""

from __future__ import annotations

from typing import Any, Mapping

from companion.games.base import SettingSpec
from companion.games.tactile_board import COLOURS, check_tile_counts
from companion.games.tactile_cards import MARKET_SIZE
from core.checks import whole_number
from core.errors import InputError

#: Every setting, in the order the start form shows them.
SETTING_SPECS: tuple[SettingSpec, ...] = (
    SettingSpec("layout", "shuffle", "Board tiles", type="choice", choices=(("shuffle", "shuffled"), ("enter", "entered by hand"))),
    SettingSpec("tiles", dict.fromkeys(COLOURS, 8), "Tiles", type="counts", unit="each", min=0, advanced=True),
    SettingSpec("resources", dict.fromkeys(COLOURS, 16), "Resources", type="counts", unit="each", min=0, max=99, advanced=True),
    SettingSpec("deck_size", 120, "Deck", unit="cards", min=MARKET_SIZE, max=1000, advanced=True),
    SettingSpec("first_player", None, "First player", type="player", empty="first seat"),
    SettingSpec("push_needs_contact", False, "Push needs contact", type="bool"),
    SettingSpec("pad_ends_turn", True, "A pad slap ends the turn", type="bool"),
    SettingSpec("brawl_one_disc_per_tile", False, "House rule: one disc on each Brawl score tile (3 players)",
                type="bool", advanced=True),
)


def check_settings(out: dict[str, Any]) -> dict[str, Any]:
    """Validated settings (defaults already overlaid), or InputError naming the key and what is valid."""
    if out["layout"] not in ("shuffle", "enter"):
        raise InputError(f"'layout' must be \"shuffle\" or \"enter\", got {out['layout']!r}")
    out["tiles"] = check_tile_counts(out["tiles"])
    res = out["resources"]
    if isinstance(res, int) and not isinstance(res, bool):
        res = {c: res for c in COLOURS}
    if not isinstance(res, Mapping) or set(res) != set(COLOURS):
        raise InputError(f"'resources' must be a count per colour ({', '.join(COLOURS)}) or one count for all, "
                         f"got {out['resources']!r}")
    for colour, n in res.items():
        whole_number(n, 0, 99, f"'resources.{colour}'")
    out["resources"] = {c: res[c] for c in COLOURS}
    size = out["deck_size"]
    whole_number(size, MARKET_SIZE, 1000, "'deck_size'")
    first = out["first_player"]
    if first is not None and (isinstance(first, bool) or not isinstance(first, int)):
        raise InputError(f"'first_player' must be a player id or null, got {first!r}")
    for key in ("push_needs_contact", "pad_ends_turn", "brawl_one_disc_per_tile"):
        if not isinstance(out[key], bool):
            raise InputError(f"'{key}' must be true or false, got {out[key]!r}")
    return out

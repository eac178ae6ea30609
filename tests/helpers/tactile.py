"""A TacTile board both table and browser tests set up: a known layout and market, entered by hand."""

from __future__ import annotations

from typing import Any, Callable

LAYOUT = ["hrygbh", "rygbry", "gbrygb", "brygbr", "ygbryg", "hbrygh"]
MARKET = [
    {"colour": "blue", "type": "move", "cost": {"red": 1}},
    {"colour": "green", "type": "push", "cost": {"red": 1}},
    {"colour": "red", "type": "gain", "cost": {"red": 1}},
    {"colour": "yellow", "type": "gain", "cost": {"blue": 2}},
    {"colour": "yellow", "type": "push", "cost": {"green": 2}},
    {"colour": "red", "type": "move", "cost": {"yellow": 3}},
]


def start_entered_game(submit: Callable[[str, dict[str, Any]], Any]) -> None:
    """Start TacTile with the layout entered by hand, then enter LAYOUT and the six MARKET cards."""
    submit("start_game", {"kind": "tactile", "settings": {"layout": "enter"}})
    submit("set_layout", {"rows": LAYOUT})
    for slot, face in enumerate(MARKET, start=1):
        submit("enter_card", {"slot": slot, **face})

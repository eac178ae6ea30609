"""A tiny table script for TacTile scenario files, shared by the TacTile tests.

A scenario drives a real :class:`~companion.games.tactile.TacTile` through
decide -> evolve, keeping the event log the way the table service does, so a
generic ``undo`` is check_undo + replay without the last event.

Short play lines (one command each)::

    move 1a b1 [basic|<card id>]    push 2a f4 [<card id>]
    gain red [basic|<card id>]      buy 2      swap red blue      swap 3 7
    reset      end      undo      undo_turn
    enter <slot> <colour> <type> [red:1 blue:2 ...]     enter <slot> #<card id>
    tile c3 red
"""

from __future__ import annotations

from typing import Any

from companion.games.base import Command, Event, Player
from companion.games.tactile import TacTile
from core.hits import HitKind, PadHit


def parse_line(line: str) -> tuple[str, dict[str, Any]]:
    """A play line -> (command name, args)."""
    word, *rest = line.split()

    def card(token: str) -> int | str:
        return token if token == "basic" else int(token)

    if word in ("move", "push"):
        args: dict[str, Any] = {"disc": rest[0], "to": rest[1]}
        if len(rest) > 2:
            args["card"] = card(rest[2])
        return word, args
    if word == "gain":
        return "gain", {"colour": rest[0], **({"card": card(rest[1])} if len(rest) > 1 else {})}
    if word == "buy":
        return "buy", {"slot": int(rest[0])}
    if word == "swap":
        if rest[0].isdigit():
            return "swap", {"card": int(rest[0]), "ally_card": int(rest[1])}
        return "swap", {"give": rest[0], "take": rest[1]}
    if word == "reset":
        return "reset_market", {}
    if word == "end":
        return "end_turn", {}
    if word == "enter":
        if rest[1].startswith("#"):
            return "enter_card", {"slot": int(rest[0]), "card": int(rest[1][1:])}
        cost = {c: int(n) for c, n in (t.split(":") for t in rest[3:])}
        return "enter_card", {"slot": int(rest[0]), "colour": rest[1], "type": rest[2], "cost": cost}
    if word == "tile":
        return "place_tile", {"tile": rest[0], "colour": rest[1]}
    return word, {}


class Table:
    """One game plus its event log, as the table service would keep them."""

    def __init__(self, players: int, settings: dict[str, Any] | None = None, seed: int = 0) -> None:
        self.players = [Player(i, f"P{i}", pad=i) for i in range(1, players + 1)]
        self.settings = settings or {}
        self.game = TacTile(self.players, self.settings)
        self.events: list[Event] = list(self.game.start(Command("start", seed=seed)))
        for event in self.events:
            self.game.evolve(event)

    def replayed(self, events: list[Event]) -> TacTile:
        """A fresh game rebuilt from ``events`` (what a restart does)."""
        game = TacTile(self.players, self.settings)
        for event in events:
            game.evolve(event)
        return game

    def do(self, name: str, args: dict[str, Any] | None = None, at_us: int = 0) -> list[Event]:
        """Submit one command; on success its events are logged and folded in."""
        if name == "undo":
            self.game.check_undo(self.events[-1], Command("undo"))
            self.events.pop()
            self.game = self.replayed(self.events)
            return []
        return self._fold(self.game.decide(Command(name, args or {}, at_us=at_us)))

    def hit(self, pad: int, kind: str = "slap", at_us: int = 0) -> list[Event]:
        """A pad hit, offered to the game as the table does (with the pad's player)."""
        player = self.game.player_for_pad(pad)
        return self._fold(self.game.decide_hit(PadHit(pad, at_us, HitKind(kind)), player))

    def _fold(self, events: list[Event]) -> list[Event]:
        for event in events:
            self.game.evolve(event)
        self.events.extend(events)
        return events

    def play(self, line: str, at_us: int = 0) -> list[Event]:
        return self.do(*parse_line(line), at_us=at_us)

    def fill_market(self, faces: list[str]) -> None:
        """Enter cards into the pending slots, in slot order: each face like ``"red move blue:2"``."""
        for slot, face in zip(list(self.game.state.market.pending()), faces):
            self.play(f"enter {slot} {face}")


# ----- the script's own tests ------------------------------------------------------


def test_play_lines_parse_to_commands() -> None:
    assert parse_line("move 1a b1") == ("move", {"disc": "1a", "to": "b1"})
    assert parse_line("move 1a b1 basic") == ("move", {"disc": "1a", "to": "b1", "card": "basic"})
    assert parse_line("push 2a f4 3") == ("push", {"disc": "2a", "to": "f4", "card": 3})
    assert parse_line("swap 3 7") == ("swap", {"card": 3, "ally_card": 7})
    assert parse_line("swap red blue") == ("swap", {"give": "red", "take": "blue"})
    assert parse_line("enter 2 blue move red:1 green:2") == (
        "enter_card",
        {"slot": 2, "colour": "blue", "type": "move", "cost": {"red": 1, "green": 2}},
    )
    assert parse_line("enter 4 #9") == ("enter_card", {"slot": 4, "card": 9})
    assert parse_line("end") == ("end_turn", {})


def test_undo_replays_without_the_last_event() -> None:
    table = Table(2, {"layout": "enter"})
    table.play("tile b1 red")
    table.play("tile c1 blue")
    table.play("undo")
    assert table.game.view()["board"]["rows"][0] == "hr...h"

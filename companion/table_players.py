"""The table's player commands: add, update, remove and seat players, and the checks of their fields."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

from core.errors import InputError, NotFoundError, RuleError
from companion.games.base import ArgSpec, Bound, Command, Player, command, player_on_pad
from companion.table_events import ActiveGame, Draft
from companion.text import clean_name

NAME_MAX = 24
#: Used with fullmatch: ``$`` would also match before a trailing newline.
COLOUR_RE = re.compile(r"#[0-9a-fA-F]{6}")
#: Default colours, handed out in order to players added without one (distinct on a dark screen).
PALETTE = ("#e4572e", "#29a3d6", "#f3c623", "#6ab04c", "#a55eea", "#ff7f50", "#20c997", "#f368e0")

# The arguments the player commands share, declared once.
NAME = ArgSpec("name", "str", hint=f"1 to {NAME_MAX} characters, unique at the table")
#: A player named by id or name: the ``player`` argument, and each entry of ``order`` and ``players``.
PLAYER_REF = ArgSpec("player", "player")
PLAYER = replace(PLAYER_REF, nullable=True)


def _colour_arg(nullable: bool) -> ArgSpec:
    return ArgSpec("colour", "str", optional=True, nullable=nullable, pattern=COLOUR_RE.pattern,
                   message="'colour' must be a colour like '#e4572e', got {value}")


def _pad_arg(nullable: bool) -> ArgSpec:
    # The range is the table's pad count, known when the command arrives; a pad held by someone else stays the handler's.
    return ArgSpec("pad", "int", optional=True, nullable=nullable, min=1, max=Bound(lambda table: table.pad_count, "pad_count"),
                   message="'pad' must be a pad number from 1 to {hi} (or null), got {value}")


class TablePlayers:
    """The players of :class:`~companion.table.TableState` (which owns these attributes): reads and commands."""

    players: list[Player]
    next_player_id: int
    pad_count: int
    active: ActiveGame | None

    def player(self, ref: Any) -> Player:
        """The player named by id (int) or name (str, any case); NotFoundError if none."""
        PLAYER_REF.check({"player": ref}, self)
        for p in self.players:
            if p.id == ref or (isinstance(ref, str) and p.name.casefold() == ref.strip().casefold()):
                return p
        known = ", ".join(f"{p.id} {p.name}" for p in self.players) or "none yet"
        raise NotFoundError(f"no player {ref!r} at the table; players: {known}")

    def player_for_pad(self, pad: int) -> Player | None:
        """The table player whose pad this is, if any."""
        return player_on_pad(self.players, pad)


    # ----- table commands ----------------------------------------------------
    @command("add_player", "Add a player {name, colour?, pad?}", (NAME, _colour_arg(True), _pad_arg(True)))
    def _cmd_add_player(self, cmd: Command) -> list[Draft]:
        args = cmd.args
        name = self._name(args)
        colour = self._colour(args["colour"]) if args.get("colour") is not None else self._free_colour()
        pad = self._pad(args.get("pad"), None)
        data = {"id": self.next_player_id, "name": name, "colour": colour, "pad": pad}
        return [Draft("player_added", data, None)]

    @command("update_player", "Change a player's name, colour or pad {player, name?, colour?, pad?}",
             (PLAYER, ArgSpec("name", "str", optional=True), _colour_arg(False), _pad_arg(True)))
    def _cmd_update_player(self, cmd: Command) -> list[Draft]:
        args = cmd.args
        player = self.player(args["player"])
        changes: dict[str, Any] = {}
        if "name" in args:
            changes["name"] = self._name(args, player.id)
        if "colour" in args:
            changes["colour"] = self._colour(args["colour"])
        if "pad" in args:
            changes["pad"] = self._pad(args["pad"], player.id)
        if not changes:
            raise InputError("update_player needs at least one of 'name', 'colour', 'pad'")
        return [Draft("player_updated", {"id": player.id, **changes}, None)]

    @command("remove_player", "Remove a player who is not in a running game {player}", (PLAYER,))
    def _cmd_remove_player(self, cmd: Command) -> list[Draft]:
        args = cmd.args
        player = self.player(args["player"])
        if self.active is not None and self.active.game.outcome() is None and any(
            p.id == player.id for p in self.active.players
        ):
            raise RuleError(f"{player.name} is playing {self.active.title}; end the game first")
        return [Draft("player_removed", {"id": player.id}, None)]

    @command("seat_players", "Seat every player in a new order {order}", (ArgSpec("order", "list", hint="every player's id or name"),))
    def _cmd_seat_players(self, cmd: Command) -> list[Draft]:
        args = cmd.args
        order = args["order"]
        ids = [self.player(ref).id for ref in order]
        if len(set(ids)) != len(ids):
            raise InputError(f"'order' names a player twice: {order!r}")
        missing = [p.name for p in self.players if p.id not in ids]
        if missing:
            raise InputError(f"'order' must list every player once; missing: {', '.join(missing)}")
        return [Draft("players_seated", {"order": ids}, None)]



    def _name(self, args: Mapping[str, Any], own_id: int | None = None) -> str:
        try:
            name = clean_name(args["name"], NAME_MAX)  # the rules are in docs/api.md, "Names and text"
        except ValueError as exc:
            raise InputError(str(exc)) from None
        for p in self.players:
            if p.id != own_id and p.name.casefold() == name.casefold():
                raise RuleError(f"there is already a player called {p.name}; choose another name")
        return name

    @staticmethod
    def _colour(value: Any) -> str:
        """The stored form (lower case) of a colour like '#e4572e'; the one check its commands' spec makes, for any caller."""
        _colour_arg(False).check({"colour": value}, None)
        return str(value).lower()

    def _free_colour(self) -> str:
        used = {p.colour for p in self.players}
        return next((c for c in PALETTE if c not in used), PALETTE[len(self.players) % len(PALETTE)])

    def _pad(self, value: Any, own_id: int | None) -> int | None:
        if value is None:
            return None
        holder = self.player_for_pad(value)
        if holder is not None and holder.id != own_id:
            raise RuleError(f"pad {value} is {holder.name}'s; give {holder.name} another pad (or none) first")
        return value

    # ======================================================================

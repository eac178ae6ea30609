"""TacTile's actions as value objects, their legality with reasons, and the legal-action view.

As python-chess lists legal moves, :class:`LegalActions` lists every basic
action and every use of an active card the current player may take now. The
same :func:`why_illegal` refuses a command and filters the list, so what the
list offers is exactly what ``decide`` accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from core.errors import InputError
from companion.games.args import ArgSpec, Bound
from companion.games.tactile_board import COLOURS, adjacent, neighbours, parse_tile, tile_name, Tile, is_corner
from companion.games.tactile_cards import MARKET_SIZE, cost_text
from companion.games.tactile_state import ACTIVE, INACTIVE, USED, TactileState

#: Action kind -> the basic action it spends (card uses and ending the turn spend none).
BASIC_OF: dict[str, str] = {"move": "move", "gain": "gain", "buy": "buy", "swap": "swap", "swap_card": "swap", "reset": "reset"}
CARD_KINDS: dict[str, str] = {"card_move": "move", "card_gain": "gain", "push": "push"}
BASIC_NAMES: tuple[str, ...] = ("move", "gain", "buy", "swap", "reset")
MAX_BASICS = 2


@dataclass(frozen=True, slots=True)
class Action:
    """One thing the current player may do: a basic action, a card use, or ending the turn."""

    kind: str
    disc: str | None = None
    to: Tile | None = None
    card: int | None = None
    colour: str | None = None
    slot: int | None = None
    give: str | None = None
    take: str | None = None
    ally_card: int | None = None

    def command(self) -> tuple[str, dict[str, Any]]:
        """The command (name, args) that takes exactly this action."""
        k = self.kind
        if k in ("move", "card_move", "push"):
            args: dict[str, Any] = {"disc": self.disc, "to": tile_name(self.to), "card": self.card or "basic"}  # type: ignore[arg-type]
            return ("push" if k == "push" else "move"), args
        if k in ("gain", "card_gain"):
            return "gain", {"colour": self.colour, "card": self.card or "basic"}
        if k == "buy":
            return "buy", {"slot": self.slot}
        if k == "swap":
            return "swap", {"give": self.give, "take": self.take}
        if k == "swap_card":
            return "swap", {"card": self.card, "ally_card": self.ally_card}
        if k == "reset":
            return "reset_market", {}
        return "end_turn", {}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the kind, its fields, and the command that takes it."""
        out: dict[str, Any] = {"kind": self.kind}
        for key in ("disc", "card", "colour", "slot", "give", "take", "ally_card"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.to is not None:
            out["to"] = tile_name(self.to)
        name, args = self.command()
        out["command"] = {"name": name, "args": args}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Action":
        """Inverse of ``to_dict`` (for events on replay)."""
        fields = {k: data[k] for k in ("disc", "card", "colour", "slot", "give", "take", "ally_card") if k in data}
        if "to" in data:
            fields["to"] = parse_tile(data["to"])
        return cls(kind=data["kind"], **fields)


# ----- the actions' arguments, declared once (the command table checks them before routing) -----

#: ``card`` of a move, push or gain: an id, ``"basic"`` to force the basic action, or absent for "a free card first".
ACTION_CARD = ArgSpec("card", "int", optional=True, nullable=True, also=("basic",),
                      message="'card' must be a card id (a whole number) or \"basic\", got {value}")
#: ``card`` / ``ally_card`` of a card swap (and ``card`` of a card entered again): a card id.
CARD_ID = "'{name}' must be a card id (a whole number), got {value}"
SWAP_CARD = ArgSpec("card", "int", optional=True, message=CARD_ID)
ALLY_CARD = ArgSpec("ally_card", "int", optional=True, message=CARD_ID)
#: The discs are the game's own (two per player), read when the command arrives.
DISC = ArgSpec("disc", "choice", choices=Bound(lambda game: tuple(sorted(game.state.discs)), "the discs on the board"))
#: A tile: ``"c4"`` or ``[row, col]``, parsed by ``parse_tile``.
TO = ArgSpec("to", hint="a tile like \"c4\" or [row, col]")
COLOUR = ArgSpec("colour", "choice", choices=COLOURS)
GIVE = ArgSpec("give", "choice", optional=True, choices=COLOURS, hint="with take, unless card and ally_card are given")
TAKE = ArgSpec("take", "choice", optional=True, choices=COLOURS, hint="with give")
SLOT = ArgSpec("slot", "int", min=1, max=MARKET_SIZE, message="'slot' must be a market slot from {lo} to {hi}, got {value}")


# ----- parsing commands into candidate actions ---------------------------------


def candidates_for(state: TactileState, name: str, args: Mapping[str, Any]) -> list[Action]:
    """The actions a command may mean, in order of preference (a free active card before a basic action).

    ``args`` were checked against the command's specs above (types, ranges, discs); what a
    tile names is parsed here, and InputError says which argument a swap is missing.
    Legality is checked afterwards.
    """
    if name in ("move", "push"):
        disc = args["disc"]
        to = parse_tile(args["to"], "to")
        card = args.get("card")
        mine = state.discs[disc].player == state.current
        if name == "push" or not mine:
            if card == "basic":  # there is no basic push: the reason will say so
                return [Action("push", disc, to, None)]
            if isinstance(card, int):
                return [Action("push", disc, to, card)]
            pushes = [c for c in state.cards_of(state.current) if state.cards[c].type == "push"]
            ready = [c for c in pushes if state.card_state[c] == ACTIVE]
            return [Action("push", disc, to, c) for c in (ready or pushes)] or [Action("push", disc, to, None)]
        if isinstance(card, int):
            return [Action("card_move", disc, to, card)]
        basic = [Action("move", disc, to)]
        if card == "basic":
            return basic
        free = [Action("card_move", disc, to, c) for c in _ready(state, "move")]
        return free + basic
    if name == "gain":
        colour = args["colour"]
        card = args.get("card")
        if isinstance(card, int):
            return [Action("card_gain", colour=colour, card=card)]
        basic = [Action("gain", colour=colour)]
        return basic if card == "basic" else [Action("card_gain", colour=colour, card=c) for c in _ready(state, "gain")] + basic
    if name == "buy":
        return [Action("buy", slot=args["slot"])]
    if name == "swap":
        # Which arguments a swap needs depends on which kind it is: the types were checked before routing.
        needed = (SWAP_CARD, ALLY_CARD) if "card" in args or "ally_card" in args else (GIVE, TAKE)
        for spec in needed:
            if spec.name not in args:
                spec.refuse(None, state)
        if needed[0] is SWAP_CARD:
            return [Action("swap_card", card=args["card"], ally_card=args["ally_card"])]
        return [Action("swap", give=args["give"], take=args["take"])]
    if name == "reset_market":
        return [Action("reset")]
    if name == "end_turn":
        return [Action("end_turn")]
    raise InputError(f"unknown TacTile action {name!r}")


def _ready(state: TactileState, kind: str) -> list[int]:
    return [c for c in state.cards_of(state.current) if state.cards[c].type == kind and state.card_state[c] == ACTIVE]


# ----- legality -------------------------------------------------------------------


def why_illegal(state: TactileState, action: Action, push_contact: bool = False) -> str | None:
    """The reason ``action`` is not legal now, or None when it is."""
    if state.phase == "setup":
        return f"the board is not laid yet: {len(state.unplaced())} tiles still to place"
    if state.phase == "over":
        return f"the game is over: {state.reason}"
    me = state.current
    basic = BASIC_OF.get(action.kind)
    if basic is not None:
        if basic in state.basics_used:
            return f"you already took the basic action {basic.capitalize()} this turn: no basic action twice"
        if len(state.basics_used) >= MAX_BASICS:
            return f"you already took two basic actions this turn ({', '.join(state.basics_used)})"
    if action.kind in CARD_KINDS:
        reason = _card_reason(state, action.card, CARD_KINDS[action.kind])
        if reason:
            return reason
    check = _CHECKS.get(action.kind)
    return check(state, action, me, push_contact) if check else None


def _card_reason(state: TactileState, card: int | None, kind: str) -> str | None:
    if card is None:
        return f"a {kind} needs an active {kind} card and you have none"
    if card not in state.owner or state.owner[card] != state.current:
        return f"card {card} is not one of your cards"
    face = state.cards[card]
    if face.type != kind:
        return f"{face.label()} is a {face.type} card, not a {kind} card"
    status = state.card_state[card]
    if status == INACTIVE:
        return f"{face.label()} is not active: move onto a {face.colour} tile to activate it"
    if status == USED:
        return f"{face.label()} has already acted this turn"
    return None


def _check_move(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    disc = state.discs[a.disc]  # type: ignore[index]
    if disc.player != me:
        return f"disc {disc.id} is {state.who(disc.player)}'s: move your own discs, or push with an active push card"
    if disc.tile is None:
        return f"disc {disc.id} has scored and left the board"
    if not adjacent(disc.tile, a.to):  # type: ignore[arg-type]
        return f"{tile_name(a.to)} is not next to {tile_name(disc.tile)}: a disc moves one tile up, down, left or right"  # type: ignore[arg-type]
    return state.move_block(disc, a.to)  # type: ignore[arg-type]


def _check_push(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    disc = state.discs[a.disc]  # type: ignore[index]
    if disc.player == me:
        return f"disc {disc.id} is your own: a push moves another player's disc"
    if disc.tile is None:
        return f"disc {disc.id} has scored and left the board"
    if not adjacent(disc.tile, a.to):  # type: ignore[arg-type]
        return f"{tile_name(a.to)} is not next to {tile_name(disc.tile)}: a push goes one tile up, down, left or right"  # type: ignore[arg-type]
    if is_corner(a.to):  # type: ignore[arg-type]
        return f"{tile_name(a.to)} is a home tile: discs cannot be pushed onto home or score tiles"  # type: ignore[arg-type]
    taken = state.occupant(a.to)  # type: ignore[arg-type]
    if taken is not None:
        return f"{tile_name(a.to)} is taken by disc {taken.id}: discs never share a tile"  # type: ignore[arg-type]
    if push_contact and not any(d.tile is not None and adjacent(d.tile, disc.tile) for d in state.discs_of(me)):
        return f"none of your discs is next to {disc.id}: this table pushes only from an adjacent tile"
    return None


def _check_gain(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    colours = {state.colour_at(d.tile) for d in state.discs_of(me) if d.tile is not None}
    if a.colour not in colours:
        return f"none of your discs stands on a {a.colour} tile (home tiles give nothing)"
    if state.stockpile[a.colour] < 1:  # type: ignore[index]
        return f"the stockpile has no {a.colour} resource left"
    return None


def _check_buy(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    pending = state.market.pending()
    if pending:
        return f"enter the new card in market slot {', '.join(map(str, pending))} first"
    card_id = state.market.slots[a.slot - 1]  # type: ignore[operator]
    if not isinstance(card_id, int):
        return f"market slot {a.slot} is empty: the deck and discard pile ran out"
    card = state.cards[card_id]
    have = state.resources[me]
    if any(have[c] < n for c, n in card.cost):
        mine = {c: have[c] for c, _ in card.cost}
        return f"{card.label()} costs {cost_text(card.cost_dict)}; you have {cost_text(mine) if any(mine.values()) else 'none of that'}"
    return None


def _check_swap(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    if a.give == a.take:
        return "swap a resource for a stockpile resource of another colour"
    if state.resources[me][a.give] < 1:  # type: ignore[index]
        return f"you have no {a.give} resource to swap"
    if state.stockpile[a.take] < 1:  # type: ignore[index]
        return f"the stockpile has no {a.take} resource left"
    return None


def _check_swap_card(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    ally = state.allies.get(me)
    if ally is None:
        return "action cards can be swapped only with your ally, in a four-player game"
    if state.owner.get(a.card) != me:  # type: ignore[arg-type]
        return f"card {a.card} is not one of your cards"
    if state.owner.get(a.ally_card) != ally:  # type: ignore[arg-type]
        return f"card {a.ally_card} is not one of your ally {state.who(ally)}'s cards"
    return None


def _check_reset(state: TactileState, a: Action, me: int, push_contact: bool) -> str | None:
    pending = state.market.pending()
    if pending:
        return f"enter the new card in market slot {', '.join(map(str, pending))} first"
    return None


_CHECKS = {
    "move": _check_move,
    "card_move": _check_move,
    "push": _check_push,
    "gain": _check_gain,
    "card_gain": _check_gain,
    "buy": _check_buy,
    "swap": _check_swap,
    "swap_card": _check_swap_card,
    "reset": _check_reset,
}


# ----- the legal-action view -------------------------------------------------------


class LegalActions:
    """Every legal action in ``state``, generated lazily and queryable like python-chess's legal moves."""

    def __init__(self, state: TactileState, push_contact: bool = False) -> None:
        self.state = state
        self.push_contact = push_contact

    def _candidates(self) -> Iterator[Action]:
        s, me = self.state, self.state.current
        mine = s.cards_of(me)
        by_type = {t: [c for c in mine if s.cards[c].type == t] for t in ("move", "gain", "push")}
        for disc in s.discs_of(me):
            if disc.tile is None:
                continue
            for to in neighbours(disc.tile):
                yield Action("move", disc.id, to)
                for card in by_type["move"]:
                    yield Action("card_move", disc.id, to, card)
        for colour in COLOURS:
            yield Action("gain", colour=colour)
            for card in by_type["gain"]:
                yield Action("card_gain", colour=colour, card=card)
        for disc in s.discs.values():
            if disc.player != me and disc.tile is not None:
                for to in neighbours(disc.tile):
                    for card in by_type["push"]:
                        yield Action("push", disc.id, to, card)
        for slot in range(1, len(s.market.slots) + 1):
            yield Action("buy", slot=slot)
        for give in COLOURS:
            for take in COLOURS:
                if give != take:
                    yield Action("swap", give=give, take=take)
        ally = s.allies.get(me)
        if ally is not None:
            for card in mine:
                for other in s.cards_of(ally):
                    yield Action("swap_card", card=card, ally_card=other)
        yield Action("reset")
        yield Action("end_turn")

    def __iter__(self) -> Iterator[Action]:
        return (a for a in self._candidates() if why_illegal(self.state, a, self.push_contact) is None)

    def __contains__(self, action: object) -> bool:
        return isinstance(action, Action) and why_illegal(self.state, action, self.push_contact) is None

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def of_kind(self, *kinds: str) -> Iterator[Action]:
        """Only actions of these kinds (e.g. ``"move", "card_move"``)."""
        return (a for a in self if a.kind in kinds)

    def for_disc(self, disc: str) -> Iterator[Action]:
        """Moves and pushes of one disc: where a tap on it may lead."""
        return (a for a in self if a.disc == disc)

    def basics_left(self) -> list[str]:
        """The basic actions the player may still take this turn (legal now or not)."""
        if self.state.phase != "play" or len(self.state.basics_used) >= MAX_BASICS:
            return []
        return [b for b in BASIC_NAMES if b not in self.state.basics_used]


def apply(state: TactileState, action: Action) -> list[str]:
    """Carry out a (legal) action on ``state``; return the log notes."""
    k = action.kind
    if k in ("move", "card_move"):
        return state.move(action.disc, action.to, action.card)  # type: ignore[arg-type]
    if k == "push":
        return state.push(action.disc, action.to, action.card)  # type: ignore[arg-type]
    if k in ("gain", "card_gain"):
        return state.gain(action.colour, action.card)  # type: ignore[arg-type]
    if k == "buy":
        return state.buy(action.slot)  # type: ignore[arg-type]
    if k == "swap":
        return state.swap_resource(action.give, action.take)  # type: ignore[arg-type]
    if k == "swap_card":
        return state.swap_cards(action.card, action.ally_card)  # type: ignore[arg-type]
    if k == "reset":
        return state.reset_market()
    return state.end_turn()

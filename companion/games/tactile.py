"""TacTile turn tracking: the companion mirrors the wooden board, move by move.

The physical board is the truth; this game keeps what people forget: whose
turn it is, which basic actions are left, which cards are live, the market,
the resources, and who has won. Every command becomes exactly one event, so
the generic undo takes back exactly one step. See ``docs/games/tactile.md``
for the decisions taken where the rulebook is silent.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Iterable, Mapping, Sequence

from core.errors import InputError, RuleError
from companion.games import register
from companion.games.base import ArgSpec, Command, Event, Game, Outcome, Player, Termination, command
from companion.games.tactile_actions import (
    ACTION_CARD, ALLY_CARD, CARD_ID, COLOUR, DISC, GIVE, SLOT, SWAP_CARD, TAKE, TO, Action, LegalActions, apply, candidates_for,
    why_illegal,
)
from companion.games.tactile_board import (
    COLOURS,
    MODES,
    ally_seat,
    layout_rows,
    parse_layout,
    parse_tile,
    score_corners,
    seat_corners,
    shuffled_layout,
    tile_name,
    is_corner,
)
from companion.games.tactile_cards import MARKET_SIZE, Card, Market, parse_face, PENDING_KNOWN
from companion.games.tactile_settings import SETTING_SPECS, check_settings
from companion.games.tactile_state import Disc, TactileState, empty_layout
from companion.games.tactile_steps import describe_step
from core.hits import HitKind, PadHit

#: Action kind -> the event type that records it.
EVENT_OF: dict[str, str] = {
    "move": "disc_moved",
    "card_move": "disc_moved",
    "push": "disc_pushed",
    "gain": "resource_gained",
    "card_gain": "resource_gained",
    "buy": "card_bought",
    "swap": "resource_swapped",
    "swap_card": "cards_swapped",
    "reset": "market_reset",
    "end_turn": "turn_ended",
}
LOG_LINES = 40
#: The steps the generic undo may take back, so the view names them as ``last_step``
#: (not the shuffle that starts the game, a turn's end or a whole-turn undo).
NAMED_STEPS = frozenset(set(EVENT_OF.values()) - {"turn_ended"} | {"card_entered", "layout_set", "tile_placed"})


@register
class TacTile(Game):
    """TacTile for 2 (Showdown), 3 (Brawl) or 4 (Team Battle) players."""

    kind: ClassVar[str] = "tactile"
    title: ClassVar[str] = "TacTile"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    uses_pads: ClassVar[bool] = True  # optional: a slap on your own pad ends your turn

    def __init__(self, players: Sequence[Player], settings: Mapping[str, Any]) -> None:
        super().__init__(players, settings)
        ids = [p.id for p in self.players]
        first = self.settings["first_player"]
        if first is not None and first not in ids:
            raise InputError(f"'first_player' must be one of the players {ids}, got {first!r}")
        start = ids.index(first) if first is not None else 0
        count = len(ids)
        corners = seat_corners(count)
        resources = self.settings["resources"]
        self.push_contact: bool = self.settings["push_needs_contact"]
        self.state = TactileState(
            mode=MODES[count],
            order=ids[start:] + ids[:start],
            names={p.id: p.name for p in self.players},
            homes={pid: corners[i] for i, pid in enumerate(ids)},
            score_tiles={pid: score_corners(count, i) for i, pid in enumerate(ids)},
            allies={pid: (ids[a] if (a := ally_seat(count, i)) is not None else None) for i, pid in enumerate(ids)},
            tiles=empty_layout(),
            discs={
                f"{pid}{n}": Disc(f"{pid}{n}", pid, corners[i]) for i, pid in enumerate(ids) for n in ("a", "b")
            },
            resources={pid: {c: 0 for c in COLOURS} for pid in ids},
            stockpile=dict(resources),
            market=Market(unseen=self.settings["deck_size"], slots=[None] * MARKET_SIZE),
            one_disc_per_tile=self.settings["brawl_one_disc_per_tile"],
        )
        for i in range(MARKET_SIZE):  # the first six cards are dealt face up at setup
            self.state.market.draw_into(i)
        self.state.current = self.state.order[0]
        #: The state at the start of each turn so far, for ``undo_turn``.
        self._turn_starts: list[TactileState] = []
        #: (turn, step) of the latest event a generic undo may take back.
        self._last_step: tuple[int, int] | None = None
        #: That event in the view's words: ``{"event", "player", "text"}`` (see ``last_step`` in the docs).
        self._last_step_said: dict[str, Any] | None = None

    # ----- settings -------------------------------------------------------------
    setting_specs = SETTING_SPECS

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        return check_settings(super().validate_settings(settings))

    # ----- queries ----------------------------------------------------------------
    def legal_actions(self) -> LegalActions:
        """Every legal basic action and card use for the current player, lazily."""
        return LegalActions(self.state, self.push_contact)

    def candidate_commands(self) -> Iterable[Command]:
        """The commands of every legal action (a card entered by hand or a layout is typed, not listed)."""
        return [Command(*action.command()) for action in self.legal_actions()] + [Command("undo_turn")]

    def why_illegal(self, action: Action) -> str | None:
        """The reason ``action`` is refused now, or None when it is legal."""
        return why_illegal(self.state, action, self.push_contact)

    # ----- decide -------------------------------------------------------------------
    def start(self, command: Command) -> list[Event]:
        if self.settings["layout"] != "shuffle":
            return []
        rows = layout_rows(shuffled_layout(self.settings["tiles"], command.seed))
        return [Event("layout_shuffled", {"rows": rows, "seed": command.seed, "at_us": command.at_us})]

    def _stamp(self, data: dict[str, Any], at_us: int) -> dict[str, Any]:
        """Every step carries its turn and step number (so undo knows what it takes back) and its time."""
        return {"turn": self.state.turn, "step": self.state.steps + 1, "player": self.state.current, "at_us": at_us, **data}

    @command("move", "Move a disc: {disc, to, card?}; card = an active move card's id or \"basic\"; another player's disc is pushed",
             (DISC, TO, ACTION_CARD))
    @command("push", "Push another player's disc with an active push card: {disc, to, card?}", (DISC, TO, ACTION_CARD))
    @command("gain", "Gain a resource of a tile colour under one of your discs: {colour, card?}", (COLOUR, ACTION_CARD))
    @command("buy", "Buy the card in a market slot (1-6), paying its cost: {slot}", (SLOT,))
    @command("swap", "Swap a resource with the stockpile {give, take}, or a card with your ally {card, ally_card}",
             (GIVE, TAKE, SWAP_CARD, ALLY_CARD))
    @command("reset_market", "Replace the six cards of the market (a basic action)")
    @command("end_turn", "End the current player's turn")
    def _on_action(self, command: Command) -> list[Event]:
        return [self._decide_action(command.name, command.args, command.at_us)]

    @command("undo_turn", "Take back the whole previous turn and anything since (PIN holder)")
    def _on_undo_turn(self, command: Command) -> list[Event]:
        return [self._decide_undo_turn(command.at_us)]

    @command("enter_card", "Enter the card now showing in a market slot: {slot, colour, type, cost} or {slot, card}", (
        SLOT,
        # The face is parsed by parse_face when no card id is given.
        ArgSpec("colour", optional=True, hint="unless card is given"),
        ArgSpec("type", optional=True, hint="unless card is given"),
        ArgSpec("cost", optional=True, hint="colours to counts, unless card is given"),
        ArgSpec("card", "int", optional=True, message=CARD_ID, hint="a card coming back from the reshuffled deck"),
    ))
    def _on_enter_card(self, command: Command) -> list[Event]:
        return [self._decide_enter_card(command.args, command.at_us)]

    @command("place_tile", "Enter one tile of a dealt layout: {tile, colour}", (ArgSpec("tile", hint="a tile like \"c4\""), COLOUR))
    @command("set_layout", "Enter a whole dealt layout: {rows: six strings like \"hrygbh\"}",
             (ArgSpec("rows", hint="six strings like \"hrygbh\""),))
    def _on_layout(self, command: Command) -> list[Event]:
        return [self._decide_layout(command.name, command.args, command.at_us)]

    def decide_hit(self, hit: PadHit, player: Player | None) -> list[Event]:
        """With ``pad_ends_turn``, a slap on the current player's own pad ends their turn."""
        s = self.state
        if not self.settings["pad_ends_turn"] or player is None or hit.kind != HitKind.SLAP:
            return []
        if s.phase != "play" or player.id != s.current:
            return []
        event = self._decide_action("end_turn", {}, hit.at_us)
        return [Event(event.type, {**event.data, "by": f"pad {hit.pad}"})]

    def _decide_action(self, name: str, args: Mapping[str, Any], at_us: int) -> Event:
        options = candidates_for(self.state, name, args)
        reasons = [self.why_illegal(a) for a in options]
        chosen = next((a for a, r in zip(options, reasons) if r is None), None)
        if chosen is None:
            raise RuleError(reasons[-1])
        trial = copy.deepcopy(self.state)
        notes = apply(trial, chosen)
        action = chosen.to_dict()
        action.pop("command")
        return Event(EVENT_OF[chosen.kind], self._stamp({"action": action, "notes": notes}, at_us))

    def _decide_enter_card(self, args: Mapping[str, Any], at_us: int) -> Event:
        if self.state.phase == "over":
            raise RuleError(f"the game is over: {self.state.reason}")
        slot = args["slot"]
        pending = self.state.market.pending()
        if slot not in pending:
            waiting = ", ".join(map(str, pending)) or "none"
            raise RuleError(f"market slot {slot} already shows its card; slots waiting for a card: {waiting}")
        market, cards = self.state.market, self.state.cards
        from_known = market.slots[slot - 1] == PENDING_KNOWN
        if "card" in args:
            card_id = args["card"]
            if not from_known:
                raise InputError("'card' (an id) is only for cards coming back from the reshuffled deck; enter colour, type and cost")
            if card_id not in market.known:
                raise RuleError(f"card {card_id!r} is not in the reshuffled deck; it holds cards {sorted(market.known)}")
            card = cards[card_id]
        else:
            face = parse_face(args)
            if from_known:
                card = cards[market.match_known(face, cards)]
            else:
                card = Card(max(cards, default=0) + 1, *face)
        trial = copy.deepcopy(self.state)
        notes = trial.enter_card(slot, card)
        return Event("card_entered", self._stamp({"slot": slot, "card": card.to_dict(), "notes": notes}, at_us))

    def _decide_layout(self, name: str, args: Mapping[str, Any], at_us: int) -> Event:
        if self.state.phase != "setup":
            raise RuleError("the board is already laid; tiles cannot change during the game")
        if name == "set_layout":
            rows = layout_rows(parse_layout(args.get("rows"), self.settings["tiles"]))
            return Event("layout_set", self._stamp({"rows": rows}, at_us))
        tile = parse_tile(args["tile"], "tile")
        colour = args["colour"]
        if is_corner(tile):
            raise RuleError(f"{tile_name(tile)} is a home corner, not a coloured tile")
        if self.state.tiles[tile[0]][tile[1]] is not None:
            raise RuleError(f"{tile_name(tile)} is already {self.state.tiles[tile[0]][tile[1]]}; undo it to change it")
        placed = sum(row.count(colour) for row in self.state.tiles)
        if placed >= self.settings["tiles"][colour]:
            raise RuleError(f"all {self.settings['tiles'][colour]} {colour} tiles are already placed")
        return Event("tile_placed", self._stamp({"tile": tile_name(tile), "colour": colour}, at_us))

    def _decide_undo_turn(self, at_us: int) -> Event:
        if len(self._turn_starts) < 2:
            raise RuleError("there is no finished turn to take back; use undo to take back single steps")
        back = self._turn_starts[-2]
        return Event("turn_undone", {"to_turn": back.turn, "player": back.current, "from_turn": self.state.turn, "at_us": at_us})

    def check_undo(self, event: Event, command: Command) -> None:
        if event.type == "layout_shuffled":
            raise RuleError("the shuffled layout starts the game; end the game to start over")
        if event.type == "turn_ended":
            raise RuleError("that turn is over: a PIN holder can take the whole turn back with undo_turn")
        if event.type == "turn_undone":
            raise RuleError("a whole-turn undo cannot itself be undone")
        if (event.data.get("turn"), event.data.get("step")) != self._last_step:
            raise RuleError("only the latest step of the current turn can be undone")

    # ----- evolve --------------------------------------------------------------------
    def evolve(self, event: Event) -> None:
        s, data = self.state, event.data
        was_playing = s.phase == "play" or s.phase == "over"
        player_before = s.current
        # Said against the state before the step (a bought card is still in its slot).
        said = None if event.type not in NAMED_STEPS else {
            "event": event.type,
            "player": data.get("player") if was_playing else None,
            "text": describe_step(s, event.type, data),
        }
        if event.type in EVENT_OF.values():
            action = Action.from_dict(data["action"])
            # A replayed step must still be legal where it now lands (an undo's redo
            # can move history around): the table refuses an undo that breaks this.
            reason = self.why_illegal(action)
            if reason is not None:
                raise RuleError(f"{event.type} no longer fits the game: {reason}")
            apply(s, action)
        elif event.type == "card_entered":
            if data["slot"] not in s.market.pending():
                raise RuleError(f"market slot {data['slot']} is not waiting for a card any more")
            face = data["card"]
            cost = tuple((c, face["cost"][c]) for c in COLOURS if face["cost"].get(c))
            card = Card(face["id"], face["colour"], face["type"], cost)
            start = self._turn_starts[-1] if self._turn_starts else None
            if start is not None and start.market == s.market:
                # The card lay on the table when the turn began (e.g. the first six):
                # a whole-turn undo must not forget it.
                start.enter_card(data["slot"], card)
            s.enter_card(data["slot"], card)
        elif event.type in ("layout_shuffled", "layout_set"):
            s.set_layout(parse_layout(data["rows"], self.settings["tiles"]))
        elif event.type == "tile_placed":
            tile = parse_tile(data["tile"], "tile")
            if s.phase != "setup" or s.tiles[tile[0]][tile[1]] is not None:
                raise RuleError(f"{data['tile']} cannot be placed again")
            s.place_tile(tile, data["colour"])
        elif event.type == "turn_undone":
            if len(self._turn_starts) < 2:
                raise RuleError("there is no finished turn to take back")
            self._turn_starts.pop()
            self.state = copy.deepcopy(self._turn_starts[-1])
            self.state.log = s.log  # the log keeps what happened, then says it was taken back
            self.state.note(f"turns {data['to_turn']}-{data['from_turn']} taken back: turn {data['to_turn']} again, "
                            f"{self.state.who(self.state.current)} to play")
            self._clock(None, data.get("at_us"))  # the replayed turn is timed afresh
            self._last_step = self._last_step_said = None
            return
        else:
            raise InputError(f"TacTile cannot replay an event of type {event.type!r}")
        began = not was_playing and s.phase != "setup"
        if event.type == "layout_shuffled" or event.type == "turn_ended":
            self._last_step = self._last_step_said = None
        else:
            if not began:  # the first turn starts at step 0
                s.steps += 1
            self._last_step = (data.get("turn", 0), data.get("step", 0))
            self._last_step_said = said
        if event.type == "turn_ended" or began:
            self._clock(player_before if event.type == "turn_ended" else None, data.get("at_us"))
            self._turn_starts.append(copy.deepcopy(s))

    def _clock(self, ended: int | None, at_us: Any) -> None:
        """Add the finished turn to its player's clock; start timing the new one.

        The pad source's clock may restart with the service: a turn that seems
        to end before it began adds nothing.
        """
        s = self.state
        at = at_us if isinstance(at_us, int) and not isinstance(at_us, bool) else None
        if ended is not None and at is not None and s.turn_started_us is not None and at >= s.turn_started_us:
            s.clock_us[ended] = s.clock_us.get(ended, 0) + at - s.turn_started_us
        s.turn_started_us = at

    # ----- read ------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        s = self.state
        legal = self.legal_actions()
        players = []
        for pid in (p.id for p in self.players):
            discs = s.discs_of(pid)
            players.append(
                {
                    "id": pid,
                    "name": s.who(pid),
                    "home": tile_name(s.homes[pid]),
                    "score_tiles": [tile_name(t) for t in s.score_tiles[pid]],
                    "ally": s.allies[pid],
                    "resources": dict(s.resources[pid]),
                    "cards": [{**s.cards[c].to_dict(), "state": s.card_state[c]} for c in s.cards_of(pid)],
                    "scored": sum(1 for d in discs if d.scored_on is not None),
                    "eliminated": pid in s.eliminated,
                    "turn_time_s": round(s.clock_us.get(pid, 0) / 1e6, 1),
                }
            )
        slots = []
        for i, slot in enumerate(s.market.slots, start=1):
            card = s.cards[slot].to_dict() if isinstance(slot, int) else None
            slots.append({"slot": i, "card": card, "pending": isinstance(slot, str), "empty": slot is None})
        return {
            "mode": s.mode,
            "phase": s.phase,
            "turn": {
                "number": s.turn,
                "player": s.current if s.phase != "setup" else None,
                "basics_used": list(s.basics_used),
                "basics_left": legal.basics_left(),
                "steps": s.steps,
                "started_us": s.turn_started_us,
            },
            "order": list(s.order),
            "board": {
                "rows": layout_rows(s.tiles),
                "tiles": [[s.colour_at((r, c)) for c in range(6)] for r in range(6)],
                "homes": {str(pid): tile_name(t) for pid, t in s.homes.items()},
                "unplaced": [tile_name(t) for t in s.unplaced()],
            },
            "discs": {
                d.id: {
                    "player": d.player,
                    "tile": tile_name(d.tile) if d.tile else None,
                    "scored_on": tile_name(d.scored_on) if d.scored_on else None,
                }
                for d in s.discs.values()
            },
            "players": players,
            "stockpile": dict(s.stockpile),
            "market": {
                "slots": slots,
                "pending": s.market.pending(),
                "deck": s.market.deck_count(),
                "deck_reshuffled": bool(s.market.known),
                "discard": len(s.market.discard),
            },
            "legal": [a.to_dict() for a in legal] if s.phase == "play" else [],
            "last_step": self._last_step_view(),
            "can_undo_turn": len(self._turn_starts) >= 2,
            "undo_turn_to": self._undo_turn_view(),
            "winners": list(s.winners),
            "reason": s.reason,
            "log": s.log[-LOG_LINES:],
        }

    def _last_step_view(self) -> dict[str, Any] | None:
        """What the table's generic ``undo`` takes back now, or None when it takes back nothing here."""
        if self._last_step is None or self._last_step_said is None:
            return None
        turn, step = self._last_step
        return {"turn": turn, "step": step, **self._last_step_said}

    def _undo_turn_view(self) -> dict[str, Any] | None:
        """Where ``undo_turn`` goes back to: that turn's number and player, or None when it cannot."""
        if len(self._turn_starts) < 2:
            return None
        back = self._turn_starts[-2]
        return {"turn": back.turn, "player": back.current}

    def result(self) -> Outcome | None:
        if self.state.phase != "over":
            return None
        termination = Termination.WIN if self.state.winners else Termination.NO_WINNER
        return Outcome(termination, tuple(self.state.winners), self.state.reason)

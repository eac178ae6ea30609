"""Tapeworm: turns, hand counts, card effects and the winner, mirrored from real cards.

The cards lie on the real table; the companion only counts them. It knows how
many cards each player holds, how many are in the deck, the discard pile and
the worm on the table, whose turn it is and whether they have drawn yet.
Every count is conserved: hands + deck + discard + worm == deck size, always.

Decisions the rulebook leaves open are in docs/games/tapeworm.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Mapping, Sequence

from core.errors import InputError, RuleError
from companion.games import register
from companion.games.base import (
    ArgSpec, Command, Event, Game, Outcome, Player, SettingSpec, Termination, command, require_int, setting,
)

#: Cards each player is dealt.
HAND_SIZE = 5
#: Whose turn a Hatch or Swap targets: a player id (whether it is one, and another player, is the handler's check).
TARGET = ArgSpec("target", "any", hint="another player's id")


@dataclass
class TapewormState:
    """The counts the companion keeps. Mutated only by ``Tapeworm.evolve``."""

    hands: dict[int, int] = field(default_factory=dict)
    deck: int = 0
    discard: int = 0
    worm: int = 0
    order: list[int] = field(default_factory=list)
    current: int = 0  # index into order
    has_drawn: bool = False
    #: Whether this turn owes a draw: decided when the turn starts (a card could be drawn then),
    #: never re-checked against the piles later in the turn.
    draw_owed: bool = False
    played_this_turn: int = 0
    last_to_play: int | None = None
    turn: int = 1
    winner: int | None = None
    reason: str | None = None
    log: list[str] = field(default_factory=list)


@register
class Tapeworm(Game):
    """Tapeworm tracking: the phone taps what happened on the table, the companion keeps count."""

    kind: ClassVar[str] = "tapeworm"
    title: ClassVar[str] = "Tapeworm"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 8

    def __init__(self, players: Sequence[Player], settings: Mapping[str, Any]) -> None:
        super().__init__(players, settings)
        self.state = TapewormState()

    # ----- settings -------------------------------------------------------
    # The rulebook gives no deck size; 60 fits a 2-8 player deal with a deck left over.
    setting_specs = (
        SettingSpec("deck_size", 60, "Deck", unit="cards", min=2 * HAND_SIZE + 1, max=500),
        SettingSpec("first_player", None, "First player", type="player", empty="random"),
    )

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        merged = super().validate_settings(settings)
        require_int(merged, "deck_size", 2 * HAND_SIZE + 1, 500)
        first = merged["first_player"]
        if first is not None and (isinstance(first, bool) or not isinstance(first, int)):
            raise InputError(f"'first_player' must be a player id or null (random), got {first!r}")
        return merged

    # ----- helpers ----------------------------------------------------------
    @property
    def current_player(self) -> int:
        """Id of the player whose turn it is."""
        return self.state.order[self.state.current]

    def _name(self, player_id: int) -> str:
        return self.player(player_id).name

    def _check_playing(self) -> None:
        if self.state.winner is not None:
            raise RuleError(f"the game is over: {self._name(self.state.winner)} won")
        if not self.state.order:
            raise RuleError("the cards have not been dealt yet")

    def _check_may_play(self, cards_from_hand: int) -> int:
        """Check the current player may play a card now and holds ``cards_from_hand``; return their id."""
        self._check_playing()
        pid = self.current_player
        if self._draw_due():
            raise RuleError(f"{self._name(pid)} must draw a card before playing")
        held = self.state.hands[pid]
        if held < cards_from_hand:
            raise RuleError(
                f"{self._name(pid)} holds {held} card{'s' if held != 1 else ''}, cannot play {cards_from_hand}"
            )
        return pid

    def _can_draw(self) -> bool:
        return self.state.deck + self.state.discard > 0

    def _draw_due(self) -> bool:
        """True while the turn's opening draw is owed and not yet taken."""
        return self.state.draw_owed and not self.state.has_drawn

    def _draws(self, pid: int, count: int) -> list[Event]:
        """Events for ``pid`` drawing ``count`` cards, reshuffling the discard pile when the deck runs out.

        Cards that cannot be drawn (deck and discard both empty) are simply not drawn.
        """
        events: list[Event] = []
        deck, discard = self.state.deck, self.state.discard
        drawn = 0
        for _ in range(count):
            if deck == 0 and discard > 0:
                events.append(Event("reshuffled", {"cards": discard}))
                deck, discard = discard, 0
            if deck == 0:
                break
            deck -= 1
            drawn += 1
        if drawn:
            events.append(Event("drew", {"player": pid, "cards": drawn}))
        return events

    def _target(self, args: Mapping[str, Any], pid: int) -> int:
        target = self.player(args.get("target")).id
        if target == pid:
            raise RuleError("the target must be another player")
        return target

    # ----- legal moves -------------------------------------------------------
    def candidate_commands(self) -> Iterable[Command]:
        """Every command with every argument the current state allows trying (see ``legal_commands``)."""
        s = self.state
        if not s.order:
            return []
        pid = self.current_player
        others = [p.id for p in self.players if p.id != pid]
        out = [Command("draw")]
        out += [Command("play", {"count": n}) for n in range(1, s.hands.get(pid, 0) + 1)]
        out += [Command("cut", {"severed": n}) for n in range(1, s.worm + 1)]
        out.append(Command("peek"))
        out += [Command("hatch", {"target": t}) for t in others]
        out += [Command("swap", {"target": t, "took": took}) for t in others for took in (True, False)]
        out.append(Command("dig"))
        out += [Command("ringworm", {"discard": n}) for n in range(3)]
        out += [Command("end_turn"), Command("declare_locked")]
        return out

    # ----- decide -----------------------------------------------------------
    def start(self, command: Command) -> list[Event]:
        size = self.settings["deck_size"]
        needed = HAND_SIZE * len(self.players)
        if size < needed + 1:
            raise RuleError(f"a deck of {size} cards cannot deal {HAND_SIZE} each to {len(self.players)} players")
        ids = [p.id for p in self.players]
        first = self.settings["first_player"]
        if first is None:
            first = ids[command.seed % len(ids)]
        elif first not in ids:
            raise InputError(f"'first_player' {first} is not a player of this game; players: {ids}")
        return [Event("dealt", {"hands": {str(i): HAND_SIZE for i in ids}, "deck": size - needed, "first": first})]

    @command("draw", "The current player draws the card that starts their turn.")
    def _decide_draw(self, command: Command) -> list[Event]:
        self._check_playing()
        pid = self.current_player
        if self.state.has_drawn:
            raise RuleError(f"{self._name(pid)} has already drawn this turn")
        if not self._can_draw():
            raise RuleError("the deck and the discard pile are empty: play on without drawing")
        if not self.state.draw_owed:
            # The rulebook's draw comes first in the turn; a pile refilled later (a Cut, a Dig) owes none.
            raise RuleError("no draw is owed this turn: the deck and the discard pile were empty when it started")
        return [*self._draws(pid, 1), Event("turn_drawn", {"player": pid})]

    @command("play", "The current player attaches {count} plain cards to the worm.",
             (ArgSpec("count", "int", optional=True, min=1, max=setting("deck_size"), default=1),))
    def _decide_play(self, command: Command) -> list[Event]:
        count = command.args.get("count", 1)
        pid = self._check_may_play(count)
        return [Event("played", {"player": pid, "cards": count})]

    @command("cut", "Play a Cut: {severed} cards cut off the worm go to the discard pile with it.",
             (ArgSpec("severed", "int", min=1, max=500),))
    def _decide_cut(self, command: Command) -> list[Event]:
        pid = self._check_may_play(1)
        severed = command.args["severed"]
        if severed > self.state.worm:
            raise RuleError(f"the worm on the table has {self.state.worm} cards; {severed} cannot be cut off")
        return [Event("cut", {"player": pid, "severed": severed})]

    @command("peek", "Play a Peek: draw a card, then put one from hand on top of the deck.")
    def _decide_peek(self, command: Command) -> list[Event]:
        pid = self._check_may_play(1)
        draws = self._draws(pid, 1)
        events = [Event("played", {"player": pid, "cards": 1, "effect": "peek"}), *draws]
        # The Peek is a worm segment and may always be laid; with deck and discard both
        # empty nothing is drawn, and a card goes back on the deck only if one is left in hand.
        if draws or self.state.hands[pid] - 1 > 0:
            events.append(Event("put_back", {"player": pid}))
        return events

    @command("hatch", "Play a Hatch: {target} player draws a card.", (TARGET,))
    def _decide_hatch(self, command: Command) -> list[Event]:
        args = command.args
        pid = self._check_may_play(1)
        target = self._target(args, pid)
        return [Event("played", {"player": pid, "cards": 1, "effect": "hatch", "target": target}),
                *self._draws(target, 1)]

    @command("swap", "Play a Swap with {target}: {took} true if a card was taken and one given back.",
             (TARGET, ArgSpec("took", "bool", optional=True, default=True)))
    def _decide_swap(self, command: Command) -> list[Event]:
        args = command.args
        pid = self._check_may_play(1)
        target = self._target(args, pid)
        took = args.get("took", True)
        if took and self.state.hands[target] == 0:
            raise RuleError(f"{self._name(target)} has no card to take")
        if took and self.state.hands[pid] - 1 < 1:
            raise RuleError(f"{self._name(pid)} has no card left to give back after playing the Swap")
        # A swap moves one card each way: both hand counts stay as they are.
        return [Event("played", {"player": pid, "cards": 1, "effect": "swap", "target": target, "took": took})]

    @command("dig", "Play a Dig: draw a card, then discard one.")
    def _decide_dig(self, command: Command) -> list[Event]:
        pid = self._check_may_play(1)
        draws = self._draws(pid, 1)
        events = [Event("played", {"player": pid, "cards": 1, "effect": "dig"}), *draws]
        # The discard is owed even when nothing could be drawn, if a card is left in hand.
        if draws or self.state.hands[pid] - 1 > 0:
            events.append(Event("discarded", {"player": pid, "cards": 1}))
        return events

    @command("ringworm", "A ring was completed: discard {discard} (up to 2) cards.",
             (ArgSpec("discard", "int", optional=True, min=0, max=2, default=2),))
    def _decide_ringworm(self, command: Command) -> list[Event]:
        self._check_playing()
        pid = self.current_player
        discard = command.args.get("discard", 2)
        if discard > self.state.hands[pid]:
            raise RuleError(f"{self._name(pid)} holds {self.state.hands[pid]} cards, cannot discard {discard}")
        if self.state.worm < 3:
            raise RuleError(f"a ring needs cards on the table; the worm has {self.state.worm}")
        if self.state.played_this_turn == 0:
            # A ring is completed by laying a card, and only the player whose turn it is lays cards.
            raise RuleError(f"{self._name(pid)} has not played a card this turn, so cannot have completed a ring")
        return [Event("ringworm", {"player": pid, "discarded": discard})]

    @command("end_turn", "The current player ends their turn.")
    def _decide_end_turn(self, command: Command) -> list[Event]:
        self._check_playing()
        pid = self.current_player
        if self._draw_due():
            raise RuleError(f"{self._name(pid)} must draw a card before ending the turn")
        events = [Event("turn_ended", {"player": pid})]
        if self.state.hands[pid] == 0:
            events.append(Event("won", {"player": pid, "reason": "no cards in hand at the end of their turn"}))
        return events

    @command("declare_locked", "Only a Cut could be played and the player has none: the last to play wins.")
    def _decide_declare_locked(self, command: Command) -> list[Event]:
        self._check_playing()
        pid = self.current_player
        if self._draw_due():
            # The turn starts with the draw, and the card drawn may be the Cut that unlocks the table.
            raise RuleError(f"{self._name(pid)} must draw a card first: it may be a Cut")
        last = self.state.last_to_play
        if last is None:
            raise RuleError("nobody has played a card yet, so there is no last player to win")
        return [Event("won", {"player": last, "reason": "locked table: only a Cut could be played; the last to play a card wins"})]

    def check_undo(self, event: Event, command: Command) -> None:
        if event.type == "dealt":
            raise RuleError("the deal cannot be undone; end the game and start a new one")

    # ----- evolve -----------------------------------------------------------
    def evolve(self, event: Event) -> None:
        s = self.state
        d = event.data
        t = event.type
        if t == "dealt":
            s.hands = {int(k): v for k, v in d["hands"].items()}
            s.deck = d["deck"]
            ids = [p.id for p in self.players]
            i = ids.index(d["first"])
            s.order = ids[i:] + ids[:i]
            s.draw_owed = self._can_draw()
            s.log.append(f"Dealt {HAND_SIZE} cards each; {self._name(d['first'])} starts")
        elif t == "reshuffled":
            s.deck += d["cards"]
            s.discard -= d["cards"]
            s.log.append(f"The discard pile ({d['cards']} cards) was shuffled into a new deck")
        elif t == "drew":
            s.deck -= d["cards"]
            s.hands[d["player"]] += d["cards"]
            s.log.append(f"{self._name(d['player'])} drew {d['cards']}")
        elif t == "turn_drawn":
            s.has_drawn = True
        elif t == "played":
            s.hands[d["player"]] -= d["cards"]
            s.worm += d["cards"]
            s.played_this_turn += d["cards"]
            s.last_to_play = d["player"]
            s.log.append(self._played_line(d))
        elif t == "put_back":
            s.hands[d["player"]] -= 1
            s.deck += 1
            s.log.append(f"{self._name(d['player'])} put a card back on top of the deck")
        elif t == "discarded":
            s.hands[d["player"]] -= d["cards"]
            s.discard += d["cards"]
            s.log.append(f"{self._name(d['player'])} discarded {d['cards']}")
        elif t == "cut":
            # The Cut card and the severed segments all go to the discard pile.
            s.hands[d["player"]] -= 1
            s.worm -= d["severed"]
            s.discard += d["severed"] + 1
            s.played_this_turn += 1
            s.last_to_play = d["player"]
            s.log.append(f"{self._name(d['player'])} cut {d['severed']} cards off the worm")
        elif t == "ringworm":
            s.hands[d["player"]] -= d["discarded"]
            s.discard += d["discarded"]
            s.log.append(f"Ringworm! {self._name(d['player'])} discarded {d['discarded']}")
        elif t == "turn_ended":
            s.log.append(f"{self._name(d['player'])} ended their turn")
            self._advance()
        elif t == "won":
            s.winner = d["player"]
            s.reason = d["reason"]
            s.log.append(f"{self._name(d['player'])} wins: {d['reason']}")

    def _played_line(self, d: Mapping[str, Any]) -> str:
        name = self._name(d["player"])
        effect = d.get("effect")
        if effect is None:
            return f"{name} played {d['cards']} card{'s' if d['cards'] != 1 else ''}"
        if effect == "hatch":
            return f"{name} played Hatch: {self._name(d['target'])} draws"
        if effect == "swap":
            done = "took a card and gave one back" if d["took"] else "looked and took nothing"
            return f"{name} played Swap on {self._name(d['target'])}: {done}"
        return f"{name} played {effect.capitalize()}"

    def _advance(self) -> None:
        s = self.state
        s.current = (s.current + 1) % len(s.order)
        s.has_drawn = False
        s.draw_owed = self._can_draw()
        s.played_this_turn = 0
        s.turn += 1

    # ----- read -------------------------------------------------------------
    def total_cards(self) -> int:
        """Every card the companion counts; always equals the deck size (conservation)."""
        s = self.state
        return sum(s.hands.values()) + s.deck + s.discard + s.worm

    def view(self) -> dict[str, Any]:
        s = self.state
        dealt = bool(s.order)
        return {
            "turn": s.turn,
            # Once someone has won it is nobody's turn.
            "current": self.current_player if dealt and s.winner is None else None,
            "order": list(s.order),
            "has_drawn": s.has_drawn,
            "must_draw": dealt and self._draw_due() and s.winner is None,
            "played_this_turn": s.played_this_turn,
            "hands": [{"player": pid, "cards": s.hands.get(pid, 0)} for pid in s.order],
            "deck": s.deck,
            "discard": s.discard,
            "worm": s.worm,
            "deck_size": self.settings["deck_size"],
            "last_to_play": s.last_to_play,
            "winner": s.winner,
            "log": s.log[-50:],
        }

    def result(self) -> Outcome | None:
        if self.state.winner is None:
            return None
        return Outcome(Termination.WIN, (self.state.winner,), self.state.reason or "")

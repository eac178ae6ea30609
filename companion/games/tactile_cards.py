"""TacTile's action cards: the card value, the market of six, the deck and the discard pile.

The rulebook gives neither the cards' costs nor the deck's make-up, so the
companion learns each card when it appears in the market: the players enter
its colour, type and cost. Until then the deck is only a count. Once the
discard pile is reshuffled the deck holds known cards in an unknown order,
so a drawn card must be one of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

from core.checks import whole_number
from core.errors import InputError, RuleError
from companion.games.tactile_board import COLOURS

CARD_TYPES: tuple[str, ...] = ("move", "gain", "push")
MARKET_SIZE = 6
#: The market resets by itself when this many of its cards share a colour or a type.
AUTO_RESET_AT = 5
#: A slot waiting for the players to enter the card just drawn into it.
PENDING_NEW = "new"  # drawn from the never-seen part of the deck
PENDING_KNOWN = "known"  # drawn from a reshuffled discard pile


@dataclass(frozen=True, slots=True)
class Card:
    """One action card: its id (given when first entered), colour, type and cost."""

    id: int
    colour: str
    type: str
    cost: tuple[tuple[str, int], ...]  # (colour, count) pairs in COLOURS order, zero counts left out

    @property
    def cost_dict(self) -> dict[str, int]:
        return dict(self.cost)

    def label(self) -> str:
        return f"card {self.id} ({self.colour} {self.type})"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "colour": self.colour, "type": self.type, "cost": self.cost_dict}


def cost_text(cost: Mapping[str, int]) -> str:
    """``{"red": 2, "blue": 1}`` -> ``"2 red, 1 blue"`` (``"nothing"`` when free)."""
    parts = [f"{n} {c}" for c, n in cost.items() if n]
    return ", ".join(parts) or "nothing"


def parse_face(args: Mapping[str, Any]) -> tuple[str, str, tuple[tuple[str, int], ...]]:
    """Colour, type and cost of a card as entered by a player; InputError naming the bad field."""
    colour, kind, cost = args.get("colour"), args.get("type"), args.get("cost", {})
    if colour not in COLOURS:
        raise InputError(f"'colour' must be one of {', '.join(COLOURS)}, got {colour!r}")
    if kind not in CARD_TYPES:
        raise InputError(f"'type' must be one of {', '.join(CARD_TYPES)}, got {kind!r}")
    if not isinstance(cost, Mapping):
        raise InputError(f"'cost' must map colours to counts, e.g. {{\"red\": 2}}, got {cost!r}")
    for key, n in cost.items():
        if key not in COLOURS:
            raise InputError(f"'cost' colours must be {', '.join(COLOURS)}, got {key!r}")
        whole_number(n, 0, 16, f"'cost.{key}'")
    return colour, kind, tuple((c, cost[c]) for c in COLOURS if cost.get(c))


@dataclass
class Market:
    """The six face-up slots, the deck and the discard pile.

    Attributes:
        slots: per slot a card id, ``PENDING_NEW``/``PENDING_KNOWN`` while the
            players enter the card just drawn there, or None when nothing was
            left to draw.
        unseen: cards in the deck nobody has entered yet (a count only).
        known: ids of entered cards shuffled back into the deck (order unknown),
            including those drawn into a slot still waiting for entry.
        discard: ids on the discard pile.
    """

    unseen: int
    slots: list[int | str | None] = field(default_factory=list)
    known: list[int] = field(default_factory=list)
    discard: list[int] = field(default_factory=list)

    def deck_count(self) -> int:
        """Cards still in the deck (not counting those drawn and awaiting entry)."""
        return self.unseen + len(self.known) - self.slots.count(PENDING_KNOWN)

    def pending(self) -> list[int]:
        """1-based numbers of the slots waiting for a card to be entered."""
        return [i + 1 for i, s in enumerate(self.slots) if isinstance(s, str)]

    def draw_into(self, index: int) -> str:
        """Draw the top card into slot ``index``; reshuffle the discard pile first if the deck is out."""
        note = ""
        if self.deck_count() == 0 and self.discard:
            self.known.extend(self.discard)
            note = f"discard pile of {len(self.discard)} reshuffled into the deck"
            self.discard.clear()
        if self.unseen > 0:
            self.unseen -= 1
            self.slots[index] = PENDING_NEW
        elif self.deck_count() > 0:
            self.slots[index] = PENDING_KNOWN
        else:
            self.slots[index] = None
        return note

    def replace_all(self) -> list[str]:
        """Discard the cards for sale and deal six new ones."""
        self.discard.extend(s for s in self.slots if isinstance(s, int))
        notes: list[str] = []
        self.slots = [None] * MARKET_SIZE
        for i in range(MARKET_SIZE):
            note = self.draw_into(i)
            if note:
                notes.append(note)
        return notes

    def crowded(self, cards: Mapping[int, Card]) -> str | None:
        """Why the complete market must reset itself (5+ of a colour or type), or None."""
        if self.pending():
            return None
        faces = [cards[s] for s in self.slots if isinstance(s, int)]
        for what, counts in (("colour", Counter(c.colour for c in faces)), ("type", Counter(c.type for c in faces))):
            for value, n in counts.items():
                if n >= AUTO_RESET_AT:
                    return f"{n} cards share the {what} {value}"
        return None

    def match_known(self, face: tuple[str, str, tuple[tuple[str, int], ...]], cards: Mapping[int, Card]) -> int:
        """The id of a reshuffled card with this face, or RuleError listing what the deck holds."""
        for card_id in sorted(self.known):
            card = cards[card_id]
            if (card.colour, card.type, card.cost) == face:
                return card_id
        held = sorted({f"{cards[i].colour} {cards[i].type} for {cost_text(cards[i].cost_dict)}" for i in self.known})
        raise RuleError(
            "no card like that is in the reshuffled deck; it holds: " + ("; ".join(held) if held else "nothing")
        )

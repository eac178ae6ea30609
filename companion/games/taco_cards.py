"""Taco Hat Cake Gift Pizza: the cards, the deck, the deal and the chant.

Pure values and functions; the referee in :mod:`companion.games.taco` uses them.
Piles are lists of card names with the top card (the next to flip) first;
the central pile is a list with its top card last.
"""

from __future__ import annotations

import random
from typing import Any, Mapping

from core.checks import whole_number
from core.errors import InputError

#: The five words of the chant, in order; each is also a card.
WORDS: tuple[str, ...] = ("taco", "hat", "cake", "gift", "pizza")
#: Special cards: a slap is always due, after the gesture.
SPECIALS: tuple[str, ...] = ("monkey", "unicorn", "ninja")
#: Every card face, in the order the caller view shows them.
CARDS: tuple[str, ...] = WORDS + SPECIALS
#: What the table must do before slapping a special card (shown on the screen).
GESTURES: dict[str, str] = {
    "monkey": "Scratch your head with one hand, slap with the other",
    "unicorn": "Index finger up at your forehead, slap with the other hand",
    "ninja": "Arm bent square, palm flat, slap with the other hand",
}
#: The deck DESIGN.md decided on: 64 cards.
DEFAULT_DECK: dict[str, int] = {**{w: 11 for w in WORDS}, **{s: 3 for s in SPECIALS}}
#: A card whose identity the referee does not know (physical play).
UNKNOWN = "?"


def deal_size(player_count: int) -> int:
    """Cards dealt to each player by the rulebook: 12 (2-5 players), 10 (6), 8 (7-8)."""
    if player_count <= 5:
        return 12
    if player_count == 6:
        return 10
    return 8


def word_at(index: int) -> str:
    """The word said with the ``index``-th beat of a round (0 = "taco")."""
    return WORDS[index % len(WORDS)]


def is_due(card: str, word: str) -> bool:
    """True when this card said with this word calls for a slap (a match or a special)."""
    return card in SPECIALS or card == word


def validate_deck(value: Any) -> dict[str, int]:
    """A deck composition ``{card: count}``, or InputError naming the bad entry.

    Cards left out count 0; at least one card must remain.
    """
    if not isinstance(value, Mapping):
        raise InputError(f"setting 'deck' must be a table of card counts like {DEFAULT_DECK}, got {value!r}")
    deck: dict[str, int] = {}
    for card, count in value.items():
        if card not in CARDS:
            raise InputError(f"setting 'deck' names an unknown card {card!r}; cards: {', '.join(CARDS)}")
        whole_number(count, 0, 100, f"setting 'deck': count of {card!r}")
        deck[card] = count
    if sum(deck.values()) == 0:
        raise InputError("setting 'deck' has no cards at all")
    return {card: deck.get(card, 0) for card in CARDS}


def build_deck(composition: Mapping[str, int]) -> list[str]:
    """The unshuffled deck: each card as many times as the composition says, in :data:`CARDS` order."""
    return [card for card in CARDS for _ in range(composition.get(card, 0))]


def shuffled_deck(composition: Mapping[str, int], seed: int) -> list[str]:
    """The deck shuffled by a generator seeded with ``seed`` (the result is recorded, never re-derived)."""
    deck = build_deck(composition)
    random.Random(seed).shuffle(deck)
    return deck


def deal(deck: list[str], seat_ids: list[int], each: int) -> tuple[dict[int, list[str]], list[str]]:
    """Deal ``each`` cards to every seat, one at a time round the table from the first seat.

    Returns the hands (top card first) and the cards left over (out of play).
    """
    hands: dict[int, list[str]] = {pid: [] for pid in seat_ids}
    needed = each * len(seat_ids)
    for i, card in enumerate(deck[:needed]):
        hands[seat_ids[i % len(seat_ids)]].append(card)
    return hands, list(deck[needed:])

"""Tap 4 scoring and round validation: pure functions over plain data.

A round entry names, for every player, either that they went out, a quick
total, or the cards they still hold (a count per value). Everything is checked
against the deck before anything is recorded; the first problem found is
raised with a message that names the player and the count to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from core.errors import InputError, RuleError

#: The card kinds a count can be entered for, in the order a phone shows them.
CARD_KEYS: tuple[str, ...] = tuple(str(v) for v in range(1, 13)) + ("tap_in", "tap_out")
#: How many of each card the deck holds (114 cards).
DECK: dict[str, int] = {**{str(v): 8 for v in range(1, 13)}, "tap_in": 11, "tap_out": 7}
#: Points per card left at the end of a round.
POINTS: dict[str, int] = {**{str(v): v for v in range(1, 13)}, "tap_in": 20, "tap_out": 30}
DECK_SIZE: int = sum(DECK.values())
#: Every card of the deck in one hand: the upper bound of any total.
DECK_POINTS: int = sum(DECK[k] * POINTS[k] for k in CARD_KEYS)

#: Shown on the entry screen; the rulebook's first scoring step.
TAP_OUT_NOTE = (
    "Before counting, discard the Tap Out cards lying in front of players: they do not score. "
    "Only Tap Outs still in a hand or a pile count (30 points each)."
)


def card_label(key: str) -> str:
    """How a person names a card kind in a message: "7s", "Tap In", "Tap Out"."""
    if key == "tap_in":
        return "Tap In"
    if key == "tap_out":
        return "Tap Out"
    return f"{key}s"


@dataclass(frozen=True, slots=True)
class DealPlan:
    """How the cards are dealt for one round with ``players`` players."""

    players: int
    variant: str  # "standard" (3-6 players) or "two_player"
    deal: int
    face_down: int
    face_up: int
    hand: int

    @property
    def dealt(self) -> int:
        """Cards in play this round."""
        return self.players * self.deal

    @property
    def set_aside(self) -> int:
        """Cards left over and out of play for the round."""
        return DECK_SIZE - self.dealt

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with a one-line description for the setup screen."""
        piles = self.face_down + self.face_up
        layers = "4 face down, 4 face up" if piles == 8 else "4 face down, 4 face up, then again 4 down and 4 up"
        return {
            "players": self.players,
            "variant": self.variant,
            "deal": self.deal,
            "piles": piles,
            "face_down": self.face_down,
            "face_up": self.face_up,
            "hand": self.hand,
            "dealt": self.dealt,
            "set_aside": self.set_aside,
            "summary": (
                f"Deal {self.deal} cards each: {piles} in 4 piles ({layers}), {self.hand} in hand; "
                f"{self.set_aside} cards set aside."
            ),
            "note": (
                "Two-player variant: a Tap Out only skips your own turn." if self.variant == "two_player" else ""
            ),
        }


def deal_plan(players: int) -> DealPlan:
    """The deal for 2 (the two-player variant) to 6 players."""
    if players == 2:
        return DealPlan(players, "two_player", deal=27, face_down=8, face_up=8, hand=11)
    if 3 <= players <= 6:
        return DealPlan(players, "standard", deal=19, face_down=4, face_up=4, hand=11)
    raise RuleError(f"Tap 4 is for 2 to 6 players, not {players}")


def card_points(cards: Mapping[str, int]) -> int:
    """Points of the cards left: face value, Tap In 20, Tap Out 30."""
    return sum(POINTS[k] * cards.get(k, 0) for k in CARD_KEYS)


#: The message for entries that are not a list (the command's argument spec gives the same).
ENTRIES_MESSAGE = "'entries' must be a list with one entry per player"


def parse_cards(raw: Any, who: str) -> dict[str, int]:
    """A full count per card kind from JSON (missing kinds are 0), or InputError naming the bad count."""
    if not isinstance(raw, Mapping):
        raise InputError(f"{who}'s cards must be counts per card, like {{\"7\": 2, \"tap_in\": 1}}, got {raw!r}")
    unknown = [k for k in raw if k not in DECK]
    if unknown:
        raise InputError(f"{who}'s cards: there is no card '{unknown[0]}'; cards are 1 to 12, tap_in and tap_out")
    counts: dict[str, int] = {}
    for key in CARD_KEYS:
        value = raw.get(key, 0)
        if value is None:
            value = 0
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{who}'s count of {card_label(key)} must be a whole number, got {value!r}")
        if value < 0:
            raise InputError(f"{who}'s count of {card_label(key)} must not be negative, got {value}")
        if value > DECK[key]:
            raise RuleError(
                f"{who}'s count of {card_label(key)} is {value}, but the deck has only {DECK[key]} {card_label(key)}"
            )
        counts[key] = value
    return counts


def max_points(cards: int, available: Mapping[str, int]) -> int:
    """The most points ``cards`` cards drawn from ``available`` can be worth (highest cards first)."""
    total = 0
    for key in sorted(CARD_KEYS, key=lambda k: POINTS[k], reverse=True):
        take = min(cards, available.get(key, 0))
        total += take * POINTS[key]
        cards -= take
        if cards <= 0:
            break
    return total


def _whole_total(value: Any, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{who}'s total must be a whole number, got {value!r}")
    if value < 0:
        raise InputError(f"{who}'s total must not be negative, got {value}")
    return value


def check_round(players: Sequence[tuple[int, str]], raw_entries: Any) -> list[dict[str, Any]]:
    """Validate one round's entries; return them normalised in seat order.

    ``players`` is ``[(id, name), ...]`` in seat order. Each raw entry is
    ``{"player": id, "out": true}`` or ``{"player": id, "total": n}`` or
    ``{"player": id, "cards": {"1": n, ..., "tap_out": n}}``. Each normalised
    entry is ``{"player", "mode": "out"|"total"|"cards", "points", "total",
    "cards"}`` with ``total``/``cards`` None where not given.

    Raises InputError for malformed entries and RuleError for a round that
    cannot have happened with this deck. Nothing is returned half-checked.
    """
    names = {pid: name for pid, name in players}
    if not isinstance(raw_entries, list):
        raise InputError(ENTRIES_MESSAGE)
    given: dict[int, dict[str, Any]] = {}
    for raw in raw_entries:
        if not isinstance(raw, Mapping) or "player" not in raw:
            raise InputError(f"each entry needs a 'player', got {raw!r}")
        pid = raw["player"]
        if isinstance(pid, bool) or pid not in names:
            raise InputError(f"no player with id {pid!r} in this game; players: {list(names)}")
        if pid in given:
            raise InputError(f"{names[pid]} has two entries; give one per player")
        unknown = sorted(set(raw) - {"player", "out", "total", "cards"})
        if unknown:
            raise InputError(f"{names[pid]}'s entry has an unknown field '{unknown[0]}'; use out, total or cards")
        given[pid] = dict(raw)
    missing = [names[pid] for pid, _ in players if pid not in given]
    if missing:
        raise InputError(f"no entry for {', '.join(missing)}: every player needs one")

    out = [pid for pid, _ in players if given[pid].get("out") is True]
    for pid, raw in given.items():
        if "out" in raw and not isinstance(raw["out"], bool):
            raise InputError(f"{names[pid]}'s 'out' must be true or false, got {raw['out']!r}")
    if not out:
        raise RuleError("nobody went out: mark the one player who played their last card")
    if len(out) > 1:
        both = " and ".join(names[p] for p in out)
        raise RuleError(f"only one player goes out each round, but {both} are marked out")

    entries: list[dict[str, Any]] = []
    for pid, _ in players:
        who = names[pid]
        raw = given[pid]
        has_total, has_cards = "total" in raw and raw["total"] is not None, "cards" in raw and raw["cards"] is not None
        if has_total and has_cards:
            raise InputError(f"{who}: give either a quick total or the cards, not both")
        total = _whole_total(raw["total"], who) if has_total else None
        cards = parse_cards(raw["cards"], who) if has_cards else None
        if pid in out:
            if total:
                raise RuleError(f"{who} went out, so {who} has no cards left: the total must be 0, got {total}")
            if cards and any(cards.values()):
                held = next(k for k in CARD_KEYS if cards[k])
                raise RuleError(
                    f"{who} went out, so {who} has no cards left: the count of {card_label(held)} must be 0, "
                    f"got {cards[held]}"
                )
            entries.append({"player": pid, "mode": "out", "points": 0, "total": None, "cards": None})
            continue
        if total is None and cards is None:
            raise InputError(f"{who} did not go out: enter a quick total or the cards {who} holds")
        if cards is not None:
            if not any(cards.values()):
                raise RuleError(
                    f"{who} has no cards left, but only the player who went out ({names[out[0]]}) can have none"
                )
            entries.append({"player": pid, "mode": "cards", "points": card_points(cards), "total": None, "cards": cards})
        else:
            assert total is not None
            if total == 0:
                raise RuleError(
                    f"{who}'s total is 0, but only the player who went out ({names[out[0]]}) can have no cards; "
                    "a player still holding cards has at least 1 point"
                )
            if total > DECK_POINTS:
                raise RuleError(f"{who}'s total {total} is more than the whole deck is worth ({DECK_POINTS})")
            entries.append({"player": pid, "mode": "total", "points": total, "total": total, "cards": None})

    _check_against_deck(entries, names, deal_plan(len(players)))
    return entries


def _check_against_deck(entries: list[dict[str, Any]], names: Mapping[int, str], plan: DealPlan) -> None:
    """Cards across all players fit the deck and the deal; quick totals fit what is left."""
    counted = [e for e in entries if e["mode"] == "cards"]
    for key in CARD_KEYS:
        holders = [(names[e["player"]], e["cards"][key]) for e in counted if e["cards"][key]]
        together = sum(n for _, n in holders)
        if together > DECK[key]:
            parts = " + ".join(f"{who} {n}" for who, n in holders)
            raise RuleError(
                f"too many {card_label(key)}: {parts} = {together}, but the deck has only {DECK[key]} {card_label(key)}"
            )
    held = sum(sum(e["cards"].values()) for e in counted)
    if held > plan.dealt:
        raise RuleError(
            f"the counted cards add up to {held}, but only {plan.dealt} were dealt this round "
            f"({plan.players} × {plan.deal})"
        )
    quick = [e for e in entries if e["mode"] == "total"]
    if quick:
        left = {k: DECK[k] - sum(e["cards"][k] for e in counted) for k in CARD_KEYS}
        budget = plan.dealt - held
        most = max_points(budget, left)
        together = sum(e["points"] for e in quick)
        if together > most:
            parts = " + ".join(f"{names[e['player']]} {e['points']}" for e in quick)
            sum_text = f"{parts} = {together}" if len(quick) > 1 else parts
            raise RuleError(
                f"quick total too high: {sum_text}, but the {budget} cards not yet counted "
                f"can be worth at most {most} this round"
            )

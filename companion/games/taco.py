"""Taco Hat Cake Gift Pizza refereed from slap pads: pure rules (decide, then evolve).

Two ways to play (setting ``mode``):

* ``digital``: the companion shuffles, deals and flips a virtual deck on a
  steady beat (deadlines), so it knows every card and judges everything.
* ``physical``: players flip real cards; the first slap opens a window and
  the referee judges from the pads (follow time, quorum), or from the card a
  caller taps in (``card_flipped``).

The decisions the rulebook leaves open are written down in docs/games/taco.md.
Cards and chant live in :mod:`taco_cards`, verdicts in :mod:`taco_judge`,
settings in :mod:`taco_settings`, statistics in :mod:`taco_stats`.
"""
from __future__ import annotations

import logging
import random
from typing import Any

from core.errors import RuleError
from companion.games import register
from companion.games.base import Command, Event, Player
from companion.games.taco_cards import (
    deal,
    is_due,
    shuffled_deck,
    word_at,
)
from companion.games.taco_judge import flinch_verdict, ms, ordered, slap_verdict
from companion.games.taco_settings import SETTING_SPECS
from core.hits import HitKind, PadHit
from companion.games.taco_commands import TacoCommands
from companion.games.taco_state import SlapWindow

log = logging.getLogger(__name__)


def _said_with(card: str, word: str) -> str:
    """How a verdict names a flip: "Taco was said with Hat"."""
    return f"{card.capitalize()} was said with {word.capitalize()}"


@register
class TacoGame(TacoCommands):
    """The referee for Taco Hat Cake Gift Pizza with one pad per player."""

    kind = "taco"
    title = "Taco Hat Cake Gift Pizza"
    min_players = 2
    max_players = 8
    uses_pads = True
    setting_specs = SETTING_SPECS

    # ===================================================================
    # decide: start
    def start(self, command: Command) -> list[Event]:
        """Shuffle and deal (digital) or record the deal sizes (physical); pick the dealer."""
        missing = [p.name for p in self.players if p.pad is None]
        if missing:
            raise RuleError(f"{self.title} needs a pad for every player; give a pad to: {', '.join(missing)}")
        pads = [p.pad for p in self.players]
        if len(set(pads)) != len(pads):
            raise RuleError(f"{self.title} needs a different pad for each player; pads now: {pads}")
        rng = random.Random(command.seed)
        dealer = self.settings["dealer"]
        if dealer is None:
            dealer = self.seats[0]
        elif dealer == "random":
            dealer = rng.choice(self.seats)
        data: dict[str, Any] = {"mode": self.settings["mode"], "each": self.each, "dealer": dealer, "at_us": command.at_us}
        if self.digital:
            deck = shuffled_deck(self.settings["deck"], rng.randrange(2**63))
            hands, rest = deal(deck, self.seats, self.each)
            data["deck"] = deck
            data["hands"] = [{"player": pid, "cards": hands[pid]} for pid in self.seats]
            data["out_of_play"] = rest
            data["first_flip_at_us"] = command.at_us + self.settings["lead_in_ms"] * 1000
        else:
            data["hands"] = [{"player": pid, "count": self.each} for pid in self.seats]
        return [Event("dealt", data)]

    # ===================================================================
    # decide: hits
    def decide_hit(self, hit: PadHit, player: Player | None) -> list[Event]:
        if not self.started or self.winner is not None:
            return []
        # The table resolves pads to players (pads can be reassigned mid-game); None = nobody here.
        if player is None or player.id not in self.seats:
            return []
        pid, at = player.id, hit.at_us
        last = self.last_hit.get(hit.pad)
        if last is not None and abs(at - last) < self.mask_us:
            return []  # a bounce of a hit already counted (mask time)
        h = {"player": pid, "at_us": at, "pad": hit.pad, "kind": hit.kind.value, "resolution_us": hit.resolution_us}
        if hit.uncertainty_us:
            h["uncertainty_us"] = hit.uncertainty_us  # a phone pad: judged with its own uncertainty
        if self.judged_until is not None and at <= self.judged_until:
            return [self._ignored(h, "its time falls in a slap window already judged")]
        if self.digital and self.round_first_flip_at is not None and at < self.round_first_flip_at:
            return [self._ignored(h, "before this round's first card")]
        w = self.window
        if w is None and self.paused:
            return [self._ignored(h, "play is paused")]
        if self.digital:
            return self._digital_hit(h)
        return self._physical_hit(h)

    def _ignored(self, h: dict[str, Any], why: str) -> Event:
        return Event("hit_ignored", {**h, "why": why})

    def _digital_hit(self, h: dict[str, Any]) -> list[Event]:
        w = self.window
        at, pid = h["at_us"], h["player"]
        if w is None:
            if not self.central:
                return [self._ignored(h, "no card on the table")]
            if self.next_flip_at is not None and at >= self.next_flip_at and not self.paused:
                # The loop flips at each beat before it looks at a hit stamped later, so this
                # stamp is ahead of the table's clock: a bogus hit must not stop the game.
                return [self._ignored(h, "stamped after the next beat (clock ahead)")]
            top = self.top
            why = "feinted with a light touch when no slap was due" if h["kind"] == HitKind.TOUCH.value else "slapped when no slap was due"
            if top is not None:
                # No brackets here: the verdict wraps this reason in its own.
                why += f": {_said_with(top['card'], top['word'])}"
            return [Event("flinched", {**h, "reason": why})]
        if w.kind == "flinch":
            if any(f["player"] == pid for f in w.flinches):
                return []
            if at >= self._close_at(w):
                return [self._ignored(h, "stamped after the flinch was judged (clock ahead)")]
            card_at = w.card_at
            if card_at is None:
                return [Event("flinched", {**h, "reason": "slapped when no slap was due"})]
            # A flinch stopped a due card: later hits are flinches only if they would have been anyway.
            early = self._early(at, card_at)
            if early is None:
                return [self._ignored(h, "the round was already stopped by a flinch")]
            return [Event("flinched", {**h, "reason": early})]
        # a due window
        card_at = w.card_at
        assert card_at is not None  # a due window always knows when its card appeared
        early = self._early(at, card_at)
        if early is not None:
            return [Event("flinched", {**h, "reason": early})]
        if at > card_at + self.timeout_us:
            return [self._ignored(h, "after the slap window closed")]
        if any(x["player"] == pid for x in w.hits):
            return []
        events = [Event("slapped", h)]
        hits = w.hits + [h]
        if {x["player"] for x in hits} >= set(self.seats):
            events.append(self._verdict_event(self._judge_due(hits, w), max(x["at_us"] for x in hits)))
        return events

    def _early(self, at: int, card_at: int) -> str | None:
        """Why a hit on a due card is a flinch (before the card, or a false start), else None."""
        if at < card_at:
            return "slapped before the card appeared"
        if at - card_at < self.false_start_us:
            return f"false start: {ms(at - card_at)} ms after the card"
        return None

    def _physical_hit(self, h: dict[str, Any]) -> list[Event]:
        w = self.window
        pid, at = h["player"], h["at_us"]
        if w is None:
            return [Event("slapped", h)]  # the first slap opens a window
        if any(x["player"] == pid for x in w.hits):
            return []
        base = min(self._window_base(w), at)
        if at > base + self.timeout_us:
            return [self._ignored(h, "after the slap window closed")]
        events = [Event("slapped", h)]
        hits = w.hits + [h]
        if {x["player"] for x in hits} >= set(self.seats):
            events.append(self._verdict_event(self._judge_physical(hits), max(x["at_us"] for x in hits)))
        return events

    # ===================================================================
    # decide: deadlines
    def next_deadline_us(self) -> int | None:
        if not self.started or self.winner is not None:
            return None
        if self.window is not None:
            return self._close_at(self.window)
        if self.digital and not self.paused:
            return self.next_flip_at
        return None

    def decide_deadline(self, now_us: int) -> list[Event]:
        deadline = self.next_deadline_us()
        if deadline is None or now_us < deadline:
            return []
        w = self.window
        if w is not None:
            return [self._verdict_event(self._judge_window(w), now_us)]
        return self._beat(now_us)

    def _beat(self, now_us: int) -> list[Event]:
        """The next beat of the chant in digital play: a flip, or a word said by an empty-handed player."""
        assert self.beat_seat is not None
        pid = self.beat_seat
        word = word_at(self.beat_index)
        if not any(self.piles.values()):
            judged: dict[str, Any] = {
                "kind": "stalled",
                "timing": None,
                "ref_us": None,
                "order": [],
                "missing": [],
                "taker": self.round_first,
                "photo_finish": [],
                "winner": None,
                "reason": f"nobody has a card left to flip: #{self.round_first}, who began the round, takes the pile back",
            }
            return [self._verdict_event(judged, now_us)]
        if not self.piles[pid]:
            return [Event("beat_passed", {"player": pid, "word": word, "at_us": now_us})]
        card = self.piles[pid][0]
        return [
            Event(
                "flipped",
                {"player": pid, "card": card, "word": word, "due": is_due(card, word), "at_us": now_us, "source": "beat"},
            )
        ]

    # ===================================================================
    # judging
    def _judge_window(self, w: SlapWindow) -> dict[str, Any]:
        if w.kind == "due":
            return self._judge_due(w.hits, w)
        if w.kind == "flinch":
            return flinch_verdict(w.flinches, self.seats, ref_us=w.ref_at)
        return self._judge_physical(w.hits)

    def _judge_due(self, hits: list[dict[str, Any]], w: SlapWindow) -> dict[str, Any]:
        return slap_verdict(
            hits,
            self.seats,
            ref_us=w.card_at,
            timing="card",
            rule_after=w.flipper,
            empty_handed=self._empty_handed(),
        )

    def _judge_physical(self, hits: list[dict[str, Any]]) -> dict[str, Any]:
        """Physical play: the card (if a caller tapped it) decides, else follow time and quorum."""
        w = self.window or SlapWindow("physical")
        if hits:
            # Only hits inside the window count, measured from its earliest slap or tap.
            base = min([h["at_us"] for h in hits] + ([w.opened_at] if w.opened_at is not None else []))
            hits = [h for h in hits if h["at_us"] <= base + self.timeout_us]
        hits = ordered(hits)
        card = w.card_info
        # Never-slapper rule: after the flipper if known, else from the round's first player.
        rule_after = card["player"] if card else self._seat_before(self.round_first)
        if (card and card["due"]) or not hits:
            return slap_verdict(hits, self.seats, ref_us=None, timing="first_slap", rule_after=rule_after,
                                empty_handed=self._empty_handed())
        first = hits[0]
        if card is not None:
            why = f"slapped when no slap was due: {_said_with(card['card'], card['word'])}"
            return flinch_verdict([{**h, "reason": why} for h in hits], self.seats)
        followers = [h for h in hits[1:] if h["at_us"] <= first["at_us"] + self.follow_us]
        if not followers:
            follow = self.settings["follow_ms"]
            late = [{**h, "reason": f"slapped more than {follow} ms after the first slap"} for h in hits[1:]]
            return flinch_verdict([{**first, "reason": f"lone slap: nobody followed within {follow} ms"}] + late,
                                  self.seats)
        if len(hits) < self.quorum:
            why = f"only {len(hits)} of {len(self.seats)} slapped; {self.quorum} needed"
            return flinch_verdict([{**h, "reason": why} for h in hits], self.seats)
        judged = slap_verdict(hits, self.seats, ref_us=None, timing="first_slap", rule_after=rule_after,
                              empty_handed=self._empty_handed())
        judged["quorum"] = {"slapped": len(hits), "needed": self.quorum}
        return judged

    def _seat_before(self, pid: int | None) -> int | None:
        if pid is None:
            return None
        return self.seats[(self.seats.index(pid) - 1) % len(self.seats)]

    # ===================================================================
    # restart, undo
    def resume(self, now_us: int) -> list[Event]:
        """After a restart the clock may have restarted: clear timers, void or judge an open window, pause."""
        if not self.started or self.winner is not None:
            return []
        events = [Event("restarted", {"at_us": now_us})]
        w = self.window
        if w is not None:
            if w.kind == "flinch":
                # The flinch hits are in the log: judge them as they are.
                events.append(self._verdict_event(flinch_verdict(w.flinches, self.seats, ref_us=w.ref_at), now_us))
            else:
                events.append(Event("window_voided", {"at_us": now_us, "reason": "the service restarted during a slap window"}))
        if self.digital and not self.paused:
            events.append(Event("paused", {"at_us": now_us, "remaining_us": None, "reason": "restart"}))
        return events

    def check_undo(self, event: Event, command: Command) -> None:
        """Only a hand-made change that is still the latest thing that happened can be undone."""
        undoable = event.type in ("overruled", "pile_corrected", "resumed") or (
            event.type == "verdict" and event.data.get("kind") == "penalty"
        ) or (event.type == "paused" and event.data.get("reason") != "restart")  # after a restart, resume instead
        if not undoable:
            raise RuleError(
                f"a '{event.type}' cannot be undone in {self.title}; change a verdict with 'overrule' instead"
            )
        last = self.last_event
        if last is None or last.type != event.type or last.data != event.data:
            raise RuleError("only the latest change can be undone here; play has moved on since (use 'overrule')")


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

import copy
import logging
import random
from typing import Any, Mapping, Sequence

from companion.errors import InputError, RuleError
from companion.games import register
from companion.games.base import Command, CommandSpec, Event, Game, Player, require, require_int
from companion.games.taco_cards import (
    CARDS,
    GESTURES,
    SPECIALS,
    UNKNOWN,
    WORDS,
    deal,
    deal_size,
    is_due,
    shuffled_deck,
    word_at,
)
from companion.games.taco_judge import flinch_verdict, hit_fields, ms, ordered, rotation, slap_verdict
from companion.games.taco_settings import check_settings, default_settings
from hardware.hits import HitKind, PadHit

log = logging.getLogger(__name__)

PENALTY_REASONS = ("gesture", "peek", "pace", "other")
#: How many past verdicts ``view()`` carries (the full list is in the log).
VIEW_VERDICTS = 12


def _said_with(card: str, word: str) -> str:
    """How a verdict names a flip: "Taco was said with Hat"."""
    return f"{card.capitalize()} was said with {word.capitalize()}"


@register
class TacoGame(Game):
    """The referee for Taco Hat Cake Gift Pizza with one pad per player."""

    kind = "taco"
    title = "Taco Hat Cake Gift Pizza"
    min_players = 2
    max_players = 8
    uses_pads = True
    command_specs = (
        CommandSpec("card_flipped", "Caller view (physical play): record the card just flipped {card, player?}",
                    ("card", "player")),
        CommandSpec("penalty", "A player takes the pile for a gesture, peek or pace fault {player, reason}",
                    ("player", "reason")),
        CommandSpec("overrule", "Change a verdict {verdict?, taker? | cancel_flinch? | winner?}",
                    ("verdict", "taker", "cancel_flinch", "winner")),
        CommandSpec("set_pile", "Correct a player's pile count by hand (physical play) {player, count}",
                    ("player", "count")),
        CommandSpec("pause", "Stop the beat (digital) and ignore hits until resumed"),
        CommandSpec("resume", "Resume play after a pause"),
    )

    def __init__(self, players: Sequence[Player], settings: Mapping[str, Any]) -> None:
        super().__init__(players, settings)
        self.seats: list[int] = [p.id for p in self.players]
        self.settings = check_settings(self.settings, self.seats)
        s = self.settings
        self.digital: bool = s["mode"] == "digital"
        self.each: int = s["cards_each"] or deal_size(len(self.seats))
        self.timeout_us = s["timeout_ms"] * 1000
        self.grace_us = s["grace_ms"] * 1000
        self.false_start_us = s["false_start_ms"] * 1000
        self.mask_us = s["mask_ms"] * 1000
        self.follow_us = s["follow_ms"] * 1000
        self.settle_us = s["settle_ms"] * 1000
        self.quorum: int = min(len(self.seats), s["quorum"] or max(2, len(self.seats) // 2 + 1))
        needed = self.each * len(self.seats)
        if self.digital and sum(s["deck"].values()) < needed:
            raise InputError(
                f"setting 'deck' has {sum(s['deck'].values())} cards; {len(self.seats)} players "
                f"with {self.each} cards each need {needed}"
            )
        # ----- state (changed only by evolve) -----
        self.started = False
        self.piles: dict[int, list[str]] = {pid: [] for pid in self.seats}
        self.known: dict[int, bool] = {pid: True for pid in self.seats}
        self.central: list[str] = []
        self.dealt_total = 0
        self.out_of_play = 0
        self.dealer: int | None = None
        self.round_no = 0
        self.round_first: int | None = None
        self.beat_seat: int | None = None
        self.beat_index = 0
        self.flips_in_round = 0
        self.round_first_flip_at: int | None = None
        self.round_tapped = False
        self.top: dict[str, Any] | None = None
        self.next_flip_at: int | None = None
        self.paused = False
        self.pause_remaining_us: int | None = None
        self.window: dict[str, Any] | None = None
        self.judged_until: int | None = None
        self.last_hit: dict[int, int] = {}
        self.verdicts: list[dict[str, Any]] = []
        self.winner: int | None = None
        self.win_reason = ""
        self.last_event: Event | None = None

    # ===================================================================
    # settings
    @classmethod
    def default_settings(cls) -> dict[str, Any]:
        return default_settings()

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        return check_settings(super().validate_settings(settings))

    # ===================================================================
    # small reads
    def _has_cards(self, pid: int) -> bool:
        return bool(self.piles[pid]) or not self.known[pid]

    def _empty_handed(self) -> list[int]:
        """Players known to hold no cards (they can win by slapping first)."""
        return [pid for pid in self.seats if self.known[pid] and not self.piles[pid]]

    def _next_seat(self, pid: int) -> int:
        return self.seats[(self.seats.index(pid) + 1) % len(self.seats)]

    def _tempo_us(self, flips: int) -> int:
        s = self.settings
        return max(s["min_tempo_ms"], s["tempo_ms"] - s["speedup_ms"] * flips) * 1000

    def _window_base(self, w: dict[str, Any]) -> int:
        """Time from which a window's timeout runs: the card (digital) or the earliest slap / tap."""
        if w["kind"] == "due":
            return w["card_at"]
        times = [h["at_us"] for h in w.get("hits", [])]
        if w.get("opened_at") is not None:
            times.append(w["opened_at"])
        return min(times)

    @staticmethod
    def _card_due(w: dict[str, Any]) -> bool | None:
        """Physical play: is a slap due on the window's card (None when no caller tapped it in)?"""
        card = w.get("card_info")
        return None if card is None else bool(card["due"])

    def _close_at(self, w: dict[str, Any]) -> int:
        """When the loop must judge window ``w`` (source clock)."""
        if w["kind"] == "due":
            return w["card_at"] + self.timeout_us + self.grace_us
        if w["kind"] == "flinch":
            return min(f["at_us"] for f in w["flinches"]) + self.grace_us
        base = self._window_base(w)
        hits = ordered(w["hits"])
        if not hits or self._card_due(w):
            return base + self.timeout_us + self.grace_us
        first = hits[0]
        followed = any(h["player"] != first["player"] and h["at_us"] <= first["at_us"] + self.follow_us for h in hits)
        if followed:
            return base + self.timeout_us + self.grace_us
        return first["at_us"] + self.follow_us + self.grace_us

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
    # decide: commands
    def decide(self, command: Command) -> list[Event]:
        self.check_command(command)
        if not self.started:
            raise RuleError("the cards are not dealt yet")
        name, args = command.name, command.args
        if name == "overrule":
            return self._decide_overrule(command)
        if self.winner is not None:
            raise RuleError(f"the game is over: player #{self.winner} won; only an overrule can change it")
        if name == "card_flipped":
            return self._decide_card_flipped(command)
        if name == "penalty":
            return self._decide_penalty(command)
        if name == "set_pile":
            if self.digital:
                raise RuleError("in digital play the companion holds the cards; pile counts cannot be set by hand")
            player = self.player(require(args, "player", int)).id
            count = require_int(args, "count", 0, 64)
            return [Event("pile_corrected", {"player": player, "count": count, "at_us": command.at_us})]
        if name == "pause":
            if self.paused:
                raise RuleError("play is already paused")
            return [Event("paused", self._pause_data(command.at_us, "asked"))]
        # resume: check_command let through only the commands above and this one
        if not self.paused:
            raise RuleError("play is not paused")
        at = command.at_us
        data: dict[str, Any] = {"at_us": at}
        if self.digital and self.window is None:
            data["next_flip_at_us"] = at + max(self.pause_remaining_us or 0, self.settings["tempo_ms"] * 1000)
        return [Event("resumed", data)]

    def _pause_data(self, at_us: int, reason: str) -> dict[str, Any]:
        remaining = None
        if self.next_flip_at is not None:
            remaining = max(0, self.next_flip_at - at_us)
        return {"at_us": at_us, "remaining_us": remaining, "reason": reason}

    def _decide_card_flipped(self, command: Command) -> list[Event]:
        if self.digital:
            raise RuleError("in digital play the companion flips the cards; card_flipped is for physical play")
        if self.paused:
            raise RuleError("play is paused; resume first")
        card = require(command.args, "card", str)
        if card not in CARDS:
            raise InputError(f"'card' must be one of {', '.join(CARDS)}, got {card!r}")
        seat = self.beat_seat if self.beat_seat is not None else self.round_first
        assert seat is not None
        skipped: list[int] = []
        if "player" in command.args:
            player = self.player(require(command.args, "player", int)).id
            if self.known[player] and not self.piles[player]:
                raise RuleError(f"player #{player} has no cards by the referee's count; correct it with set_pile first")
            while seat != player:  # the beats in between passed
                skipped.append(seat)
                seat = self._next_seat(seat)
        else:
            for _ in self.seats:
                if self._has_cards(seat):
                    break
                skipped.append(seat)
                seat = self._next_seat(seat)
            else:
                raise RuleError("nobody has a card left by the referee's count; correct the piles with set_pile")
        word = word_at(self.beat_index + len(skipped))
        return [
            Event(
                "flipped",
                {
                    "player": seat,
                    "card": card,
                    "word": word,
                    "due": is_due(card, word),
                    "at_us": command.at_us,
                    "source": "caller",
                    "skipped": skipped,
                },
            )
        ]

    def _decide_penalty(self, command: Command) -> list[Event]:
        player = self.player(require(command.args, "player", int)).id
        reason = command.args.get("reason", "other")
        if reason not in PENALTY_REASONS:
            raise InputError(f"'reason' must be one of {', '.join(PENALTY_REASONS)}, got {reason!r}")
        text = {"gesture": "wrong gesture", "peek": "peeked", "pace": "lost the pace", "other": "penalty"}[reason]
        if self.digital and self.window is None and not self.central:
            # The pile already went to someone (the fault is seen after the slap): it goes to the offender.
            if not self.verdicts:
                raise RuleError("there is no pile to take yet")
            last = self.verdicts[-1]
            if last["holder"] == player:
                raise RuleError(f"player #{player} already holds the last pile")
            return [self._overrule_event(last, player, "penalty", command, note=text)]
        judged = {
            "kind": "penalty",
            "timing": None,
            "ref_us": None,
            "order": [],
            "missing": [],
            "taker": player,
            "photo_finish": [],
            "winner": None,
            "reason": f"#{player} {text}: takes the pile",
            "penalty": reason,
        }
        return [self._verdict_event(judged, command.at_us)]

    def _decide_overrule(self, command: Command) -> list[Event]:
        args = command.args
        if not self.verdicts:
            raise RuleError("there is no verdict to overrule yet")
        n = args.get("verdict", len(self.verdicts))
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(self.verdicts):
            raise InputError(f"'verdict' must be a verdict number from 1 to {len(self.verdicts)}, got {n!r}")
        verdict = self.verdicts[n - 1]
        actions = [k for k in ("taker", "cancel_flinch", "winner") if k in args]
        if len(actions) != 1:
            raise InputError("overrule needs exactly one of 'taker' (player id), 'cancel_flinch' (true) or 'winner' (player id)")
        action = actions[0]
        if action == "winner":
            winner = self.player(require(args, "winner", int)).id
            if winner == self.winner:
                raise RuleError(f"player #{winner} has already won")
            return [Event("overruled", {"verdict": n, "action": "winner", "winner": winner, "at_us": command.at_us})]
        if self.winner is not None:
            raise RuleError(f"the game is over: player #{self.winner} won; only the winner can be overruled")
        if verdict.get("cancelled"):
            raise RuleError(f"verdict {n} was already cancelled")
        if action == "taker":
            to = self.player(require(args, "taker", int)).id
            if to == verdict["holder"]:
                raise RuleError(f"player #{to} already holds the pile of verdict {n}")
            return [self._overrule_event(verdict, to, "reassign", command)]
        if args["cancel_flinch"] is not True:
            raise InputError(f"'cancel_flinch' must be true, got {args['cancel_flinch']!r}")
        if verdict["kind"] != "flinch":
            raise RuleError(f"verdict {n} is not a flinch ({verdict['kind']}); reassign its pile with 'taker' instead")
        cards = self._bottom_cards(verdict)
        return [
            Event(
                "overruled",
                {"verdict": n, "action": "cancel_flinch", "from": verdict["holder"], "cards": cards, "at_us": command.at_us},
            )
        ]

    def _bottom_cards(self, verdict: dict[str, Any]) -> list[str] | None:
        """The cards of ``verdict``'s pile still at the bottom of its holder's pile (None when unknown)."""
        holder = verdict["holder"]
        if verdict["cards"] is None or not self.known[holder]:
            return None
        k = min(len(verdict["cards"]), len(self.piles[holder]))
        return self.piles[holder][len(self.piles[holder]) - k :] if k else []

    def _overrule_event(self, verdict: dict[str, Any], to: int, action: str, command: Command, note: str = "") -> Event:
        latest = verdict["n"] == len(self.verdicts)
        return Event(
            "overruled",
            {
                "verdict": verdict["n"],
                "action": action,
                "from": verdict["holder"],
                "to": to,
                "cards": self._bottom_cards(verdict),
                # The new taker starts the next round if it has not begun yet.
                "starts_next": latest and self.flips_in_round == 0 and self.window is None,
                "note": note,
                "at_us": command.at_us,
            },
        )

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
        if w["kind"] == "flinch":
            if any(f["player"] == pid for f in w["flinches"]):
                return []
            if at >= self._close_at(w):
                return [self._ignored(h, "stamped after the flinch was judged (clock ahead)")]
            card_at = w.get("card_at")
            if card_at is None:
                return [Event("flinched", {**h, "reason": "slapped when no slap was due"})]
            # A flinch stopped a due card: later hits are flinches only if they would have been anyway.
            why = self._early(at, card_at)
            if why is None:
                return [self._ignored(h, "the round was already stopped by a flinch")]
            return [Event("flinched", {**h, "reason": why})]
        # a due window
        card_at = w["card_at"]
        why = self._early(at, card_at)
        if why is not None:
            return [Event("flinched", {**h, "reason": why})]
        if at > card_at + self.timeout_us:
            return [self._ignored(h, "after the slap window closed")]
        if any(x["player"] == pid for x in w["hits"]):
            return []
        events = [Event("slapped", h)]
        hits = w["hits"] + [h]
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
        if any(x["player"] == pid for x in w["hits"]):
            return []
        base = min(self._window_base(w), at)
        if at > base + self.timeout_us:
            return [self._ignored(h, "after the slap window closed")]
        events = [Event("slapped", h)]
        hits = w["hits"] + [h]
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
            judged = {
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
    def _judge_window(self, w: dict[str, Any]) -> dict[str, Any]:
        if w["kind"] == "due":
            return self._judge_due(w["hits"], w)
        if w["kind"] == "flinch":
            return flinch_verdict(w["flinches"], self.seats, ref_us=w.get("ref_at"))
        return self._judge_physical(w["hits"])

    def _judge_due(self, hits: list[dict[str, Any]], w: dict[str, Any]) -> dict[str, Any]:
        return slap_verdict(
            hits,
            self.seats,
            ref_us=w["card_at"],
            timing="card",
            rule_after=w["flipper"],
            empty_handed=self._empty_handed(),
        )

    def _judge_physical(self, hits: list[dict[str, Any]]) -> dict[str, Any]:
        """Physical play: the card (if a caller tapped it) decides, else follow time and quorum."""
        w = self.window or {}
        if hits:
            # Only hits inside the window count, measured from its earliest slap or tap.
            base = min([h["at_us"] for h in hits] + ([w["opened_at"]] if w.get("opened_at") is not None else []))
            hits = [h for h in hits if h["at_us"] <= base + self.timeout_us]
        hits = ordered(hits)
        card = w.get("card_info")
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

    def _verdict_event(self, judged: dict[str, Any], at_us: int) -> Event:
        """A ``verdict`` event: the judgement plus the pile it moves and where the game goes next."""
        known_pile = self.digital or self.round_tapped
        top = self.top
        if not self.digital and self.window is not None and self.window.get("card_info"):
            top = self.window["card_info"]
        data = {
            **judged,
            "n": len(self.verdicts) + 1,
            "round": self.round_no,
            "card": top["card"] if top else None,
            "word": top["word"] if top else None,
            "flipper": top["player"] if top else None,
            "cards": list(self.central) if known_pile else None,
            "count": len(self.central) if known_pile else None,
            "at_us": at_us,
        }
        return Event("verdict", data)

    # ===================================================================
    # restart, undo
    def resume(self, now_us: int) -> list[Event]:
        """After a restart the clock may have restarted: clear timers, void or judge an open window, pause."""
        if not self.started or self.winner is not None:
            return []
        events = [Event("restarted", {"at_us": now_us})]
        w = self.window
        if w is not None:
            if w["kind"] == "flinch":
                # The flinch hits are in the log: judge them as they are.
                events.append(self._verdict_event(flinch_verdict(w["flinches"], self.seats, ref_us=w.get("ref_at")), now_us))
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

    # ===================================================================
    # evolve
    def evolve(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is None:
            log.debug("taco: ignoring event type %s", event.type)
            return
        handler(copy.deepcopy(event.data))
        self.last_event = event

    def _on_dealt(self, d: dict[str, Any]) -> None:
        self.started = True
        self.dealer = d["dealer"]
        for hand in d["hands"]:
            pid = hand["player"]
            if pid not in self.piles:
                continue
            self.piles[pid] = list(hand["cards"]) if "cards" in hand else [UNKNOWN] * hand["count"]
        self.dealt_total = sum(len(p) for p in self.piles.values())
        self.out_of_play = len(d.get("out_of_play", []))
        self._new_round(self.dealer)
        self.next_flip_at = d.get("first_flip_at_us")

    def _new_round(self, first: int | None) -> None:
        self.round_no += 1
        self.round_first = first
        self.beat_seat = first
        self.beat_index = 0
        self.flips_in_round = 0
        self.round_first_flip_at = None
        self.round_tapped = False
        self.top = None
        self.window = None

    def _on_flipped(self, d: dict[str, Any]) -> None:
        for pid in d.get("skipped", []):
            self.beat_index += 1
            self.beat_seat = self._next_seat(pid)
        pid, card, at = d["player"], d["card"], d["at_us"]
        pile = self.piles[pid]
        if pile:
            pile.pop(0)
        self.central.append(card)
        if d.get("source") == "caller":
            self.round_tapped = True
        self.top = {"card": card, "word": d["word"], "due": d["due"], "player": pid, "at_us": at}
        self.beat_index += 1
        self.beat_seat = self._next_seat(pid)
        self.flips_in_round += 1
        if self.round_first_flip_at is None:
            self.round_first_flip_at = at
        if self.digital:
            if d["due"]:
                self.window = {"kind": "due", "card_at": at, "card": card, "word": d["word"], "flipper": pid, "hits": []}
                self.next_flip_at = None
            else:
                self.next_flip_at = at + self._tempo_us(self.flips_in_round)
        elif self.window is None:
            if d["due"]:  # a due card the caller tapped opens a window even before anyone slaps
                self.window = {"kind": "physical", "hits": [], "opened_at": at, "card_info": dict(self.top)}
        else:
            # A window is open: the first due card tapped during it is what it judges.
            card = self.window.get("card_info")
            if card is None or not card["due"]:
                self.window["card_info"] = dict(self.top)

    def _on_beat_passed(self, d: dict[str, Any]) -> None:
        self.beat_index += 1
        self.beat_seat = self._next_seat(d["player"])
        self.next_flip_at = d["at_us"] + self._tempo_us(self.flips_in_round)

    def _hit_seen(self, d: dict[str, Any]) -> None:
        self.last_hit[d["pad"]] = d["at_us"]

    def _on_hit_ignored(self, d: dict[str, Any]) -> None:
        self._hit_seen(d)

    def _on_slapped(self, d: dict[str, Any]) -> None:
        self._hit_seen(d)
        hit = hit_fields(d)
        if self.window is None:
            card = dict(self.top) if (self.round_tapped and self.top) else None
            self.window = {"kind": "physical", "hits": [], "opened_at": None, "card_info": card}
        self.window["hits"].append(hit)

    def _on_flinched(self, d: dict[str, Any]) -> None:
        self._hit_seen(d)
        flinch = {**hit_fields(d), "reason": d["reason"]}
        if self.window is None or self.window["kind"] != "flinch":
            card_at = self.window["card_at"] if self.window and self.window["kind"] == "due" else None
            # Digital play knows when the card on the table appeared: the verdict is timed from it.
            ref_at = self.top["at_us"] if self.digital and self.top is not None else None
            self.window = {"kind": "flinch", "flinches": [], "card_at": card_at, "ref_at": ref_at}
            self.next_flip_at = None
        self.window["flinches"].append(flinch)

    def _on_verdict(self, d: dict[str, Any]) -> None:
        taker = d["taker"]
        cards = d.get("cards")
        if cards is None:
            # Physical play without a caller: cards changed hands unseen. Only a
            # player known to be empty-handed (who could not flip) stays known.
            for pid in self.seats:
                if not (self.known[pid] and not self.piles[pid]):
                    self.known[pid] = False
            self.known[taker] = False
        else:
            self.piles[taker].extend(cards)
        self.central = []
        d["holder"] = taker
        d["overrules"] = []
        d["cancelled"] = False
        self.verdicts.append(d)
        at = d["at_us"]
        self.judged_until = at if self.digital else at + self.settle_us
        if d.get("winner") is not None:
            self.winner = d["winner"]
            self.win_reason = d["reason"]
        self._new_round(taker)
        delay = self.settings["after_verdict_ms"] * 1000
        if self.paused:
            self.pause_remaining_us = delay
            self.next_flip_at = None
        else:
            # At least 1 µs later: a deadline that does not move looks stuck to the table loop.
            self.next_flip_at = at + max(delay, 1) if self.digital else None

    def _on_overruled(self, d: dict[str, Any]) -> None:
        verdict = self.verdicts[d["verdict"] - 1]
        verdict["overrules"].append(d)
        action = d["action"]
        if action == "winner":
            self.winner = d["winner"]
            self.win_reason = f"#{d['winner']} declared the winner by overrule"
            return
        src = d["from"]
        cards = d.get("cards")
        taken: list[str] = []
        if cards is None:
            self.known[src] = False
        elif cards:
            taken = self.piles[src][-len(cards) :]
            del self.piles[src][-len(cards) :]
        if action == "cancel_flinch":
            verdict["cancelled"] = True
            self.central = taken + self.central
            return
        to = d["to"]
        verdict["holder"] = to
        if cards is None:
            self.known[to] = False
        else:
            self.piles[to].extend(taken)
        if d.get("starts_next"):
            self.round_first = to
            self.beat_seat = to

    def _on_pile_corrected(self, d: dict[str, Any]) -> None:
        self.piles[d["player"]] = [UNKNOWN] * d["count"]
        self.known[d["player"]] = True

    def _on_paused(self, d: dict[str, Any]) -> None:
        self.paused = True
        self.pause_remaining_us = d.get("remaining_us")
        self.next_flip_at = None

    def _on_resumed(self, d: dict[str, Any]) -> None:
        self.paused = False
        self.pause_remaining_us = None
        if "next_flip_at_us" in d:
            self.next_flip_at = d["next_flip_at_us"]

    def _on_restarted(self, d: dict[str, Any]) -> None:
        # Stored times may belong to a clock that has restarted.
        self.judged_until = None
        self.last_hit.clear()
        self.next_flip_at = None
        self.round_first_flip_at = None if not self.central else d["at_us"]

    def _on_window_voided(self, d: dict[str, Any]) -> None:
        # The cards stay in the centre; the round starts again at "Taco" with the same first player.
        central = self.central
        self._new_round(self.round_first)
        self.round_no -= 1
        self.central = central
        self.round_first_flip_at = d["at_us"]
        self.judged_until = d["at_us"]

    # ===================================================================
    # read
    def view(self) -> dict[str, Any]:
        w = self.window
        window = None
        if w is not None:
            card = w.get("card_info") or ({"card": w["card"]} if "card" in w else None)
            window = {
                "kind": w["kind"],
                "card": card["card"] if card else None,
                "opened_at_us": self._window_base(w) if w["kind"] != "flinch" else min(f["at_us"] for f in w["flinches"]),
                "close_at_us": self._close_at(w),
                "slapped": [h["player"] for h in ordered(w.get("hits", []))],
                "flinched": [f["player"] for f in ordered(w.get("flinches", []))],
            }
        top = None
        if self.top is not None:
            top = {**self.top, "gesture": GESTURES.get(self.top["card"])}
        return {
            "mode": self.settings["mode"],
            "round": self.round_no,
            "dealer": self.dealer,
            "round_first": self.round_first,
            # Physical play moves the beat only on a caller's taps: untapped, it stays at the round's start.
            "beat": {"player": self.beat_seat, "word": word_at(self.beat_index)},
            "top": top,
            "central": len(self.central) if (self.digital or self.round_tapped) else None,
            "piles": [
                {"player": pid, "count": len(self.piles[pid]) if self.known[pid] else None, "known": self.known[pid]}
                for pid in self.seats
            ],
            "dealt": self.dealt_total,
            "out_of_play": self.out_of_play,
            "window": window,
            "paused": self.paused,
            "next_flip_at_us": self.next_flip_at,
            "tempo_ms": self._tempo_us(self.flips_in_round) // 1000,
            # Copies: a later overrule must not change a state already published.
            "verdict": copy.deepcopy(self.verdicts[-1]) if self.verdicts else None,
            "verdicts": copy.deepcopy(list(reversed(self.verdicts[-VIEW_VERDICTS:]))),
            "verdict_count": len(self.verdicts),
            "winner": self.winner,
            "cards": list(CARDS),
            "words": list(WORDS),
            "specials": list(SPECIALS),
            "gestures": dict(GESTURES),
            "status": self._status(),
        }

    def _status(self) -> str:
        if not self.started:
            return "waiting for the deal"
        if self.winner is not None:
            return f"#{self.winner} wins"
        if self.paused:
            return "paused"
        if self.window is not None:
            return {"due": "slap!", "flinch": "flinch!", "physical": "slap window open"}[self.window["kind"]]
        return f"round {self.round_no}"

    @classmethod
    def public_data(cls, event_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
        """A digital deal without its cards: the deck's order, each face-down pile and the cards
        returned to the box are seen by nobody at the table. Counts stay; the rest is shown when
        the game ends. Every other event is public (a flipped card is face up on the table)."""
        out = dict(data)
        if event_type != "dealt" or "deck" not in data and not any("cards" in h for h in data.get("hands", [])):
            return out
        out["hands"] = [{"player": h.get("player"), "count": len(h["cards"]) if "cards" in h else h.get("count")}
                        for h in data.get("hands", [])]
        if "deck" in out:
            out["deck"] = len(out["deck"])
        if "out_of_play" in out:
            out["out_of_play"] = len(out["out_of_play"])
        out["withheld"] = "the deck's order, the piles and the cards out of play are shown when the game ends"
        return out

    def outcome(self) -> dict[str, Any] | None:
        if self.winner is None:
            return None
        return {"winners": [self.winner], "reason": self.win_reason}

    # ----- conservation (for tests and sanity) -----
    def cards_in_play(self) -> int:
        """Cards in every pile plus the central pile (digital play: always the cards dealt)."""
        return sum(len(p) for p in self.piles.values()) + len(self.central)

"""Taco Hat Cake Gift Pizza: the referee's state, its slap windows, and the fold of its events.

:class:`TacoState` holds everything ``evolve`` changes; :mod:`taco` decides
(start, hits, deadlines), :mod:`taco_commands` the table's commands and
:mod:`taco_view` what the phones see. A slap window is tagged by its
``kind``: ``due`` (digital: a due card is on the table), ``flinch`` (a
flinch stopped the round) or ``physical`` (real cards: opened by the first
slap or a caller's due card): a :class:`SlapWindow`.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from core.errors import InputError
from companion.games.base import Event, Game, Player
from companion.games.taco_cards import (
    UNKNOWN,
    deal_size,
)
from companion.games.taco_judge import hit_fields, ordered
from companion.games.taco_settings import check_settings

log = logging.getLogger(__name__)


@dataclass
class SlapWindow:
    """An open slap window, tagged by ``kind``.

    * ``due``: digital play, a due card is on the table (``card``, ``word``,
      ``flipper``, shown at ``card_at``); ``hits`` are the slaps on it.
    * ``flinch``: a flinch stopped the round; ``flinches`` are the flinching
      hits, ``card_at`` the due card it stopped (if any) and ``ref_at`` when the
      card on the table appeared (digital play: the verdict is timed from it).
    * ``physical``: real cards; opened by the first slap (``hits``) or by a due
      card a caller tapped in at ``opened_at``; ``card_info`` is the card it judges.
    """

    kind: str
    hits: list[dict[str, Any]] = field(default_factory=list)
    flinches: list[dict[str, Any]] = field(default_factory=list)
    card_at: int | None = None
    card: str | None = None
    word: str | None = None
    flipper: int | None = None
    opened_at: int | None = None
    card_info: dict[str, Any] | None = None
    ref_at: int | None = None


class TacoState(Game):
    """State and windows of the Taco referee; subclasses decide and show."""

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
        self.window: SlapWindow | None = None
        self.judged_until: int | None = None
        self.last_hit: dict[int, int] = {}
        self.verdicts: list[dict[str, Any]] = []
        self.winner: int | None = None
        self.win_reason = ""
        self.won_by_overrule = False
        self.last_event: Event | None = None

    # ===================================================================
    # settings
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

    def _window_base(self, w: SlapWindow) -> int:
        """Time from which a window's timeout runs: the card (digital) or the earliest slap / tap."""
        if w.kind == "due":
            assert w.card_at is not None  # a due window always knows when its card appeared
            return w.card_at
        times = [h["at_us"] for h in w.hits]
        if w.opened_at is not None:
            times.append(w.opened_at)
        return min(times)

    @staticmethod
    def _card_due(w: SlapWindow) -> bool | None:
        """Physical play: is a slap due on the window's card (None when no caller tapped it in)?"""
        card = w.card_info
        return None if card is None else bool(card["due"])

    def _close_at(self, w: SlapWindow) -> int:
        """When the loop must judge window ``w`` (source clock)."""
        if w.kind == "due":
            return w.card_at + self.timeout_us + self.grace_us
        if w.kind == "flinch":
            return min(f["at_us"] for f in w.flinches) + self.grace_us
        base = self._window_base(w)
        hits = ordered(w.hits)
        if not hits or self._card_due(w):
            return base + self.timeout_us + self.grace_us
        first = hits[0]
        followed = any(h["player"] != first["player"] and h["at_us"] <= first["at_us"] + self.follow_us for h in hits)
        if followed:
            return base + self.timeout_us + self.grace_us
        return first["at_us"] + self.follow_us + self.grace_us


    def _verdict_event(self, judged: dict[str, Any], at_us: int) -> Event:
        """A ``verdict`` event: the judgement plus the pile it moves and where the game goes next."""
        known_pile = self.digital or self.round_tapped
        top = self.top
        if not self.digital and self.window is not None and self.window.card_info:
            top = self.window.card_info
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
    # evolve
    def evolve(self, event: Event) -> None:
        fold = self._folds().get(event.type)
        if fold is None:
            log.debug("taco: ignoring event type %s", event.type)
            return
        fold(copy.deepcopy(event.data))
        self.last_event = event

    def _folds(self) -> dict[str, Callable[[dict[str, Any]], None]]:
        """Event type -> the method folding it (the one routing table of this game's events)."""
        return {
            "dealt": self._on_dealt,
            "flipped": self._on_flipped,
            "beat_passed": self._on_beat_passed,
            "hit_ignored": self._on_hit_ignored,
            "slapped": self._on_slapped,
            "flinched": self._on_flinched,
            "verdict": self._on_verdict,
            "overruled": self._on_overruled,
            "pile_corrected": self._on_pile_corrected,
            "paused": self._on_paused,
            "resumed": self._on_resumed,
            "restarted": self._on_restarted,
            "window_voided": self._on_window_voided,
        }

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
                self.window = SlapWindow("due", card_at=at, card=card, word=d["word"], flipper=pid)
                self.next_flip_at = None
            else:
                self.next_flip_at = at + self._tempo_us(self.flips_in_round)
        elif self.window is None:
            if d["due"]:  # a due card the caller tapped opens a window even before anyone slaps
                self.window = SlapWindow("physical", opened_at=at, card_info=dict(self.top))
        else:
            # A window is open: the first due card tapped during it is what it judges.
            card = self.window.card_info
            if card is None or not card["due"]:
                self.window.card_info = dict(self.top)

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
            self.window = SlapWindow("physical", card_info=card)
        self.window.hits.append(hit)

    def _on_flinched(self, d: dict[str, Any]) -> None:
        self._hit_seen(d)
        flinch = {**hit_fields(d), "reason": d["reason"]}
        if self.window is None or self.window.kind != "flinch":
            card_at = self.window.card_at if self.window and self.window.kind == "due" else None
            # Digital play knows when the card on the table appeared: the verdict is timed from it.
            ref_at = self.top["at_us"] if self.digital and self.top is not None else None
            self.window = SlapWindow("flinch", card_at=card_at, ref_at=ref_at)
            self.next_flip_at = None
        self.window.flinches.append(flinch)

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
            self.won_by_overrule = False
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
            self.won_by_overrule = True
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


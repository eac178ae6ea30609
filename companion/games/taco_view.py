"""Taco Hat Cake Gift Pizza: what every phone sees (the view, the status line, the public deal)."""

from __future__ import annotations

import copy
from typing import Any, Mapping

from companion.games.base import Outcome, Termination
from companion.games.taco_cards import (
    CARDS,
    GESTURES,
    SPECIALS,
    WORDS,
    word_at,
)
from companion.games.taco_judge import ordered
from companion.games.taco_state import TacoState

#: How many past verdicts ``view()`` carries (the full list is in the log).
VIEW_VERDICTS = 12


class TacoView(TacoState):
    """The read side of the Taco referee."""

    def view(self) -> dict[str, Any]:
        w = self.window
        window = None
        if w is not None:
            card = w.card_info or ({"card": w.card} if w.card is not None else None)
            window = {
                "kind": w.kind,
                "card": card["card"] if card else None,
                "opened_at_us": self._window_base(w) if w.kind != "flinch" else min(f["at_us"] for f in w.flinches),
                "close_at_us": self._close_at(w),
                "slapped": [h["player"] for h in ordered(w.hits)],
                "flinched": [f["player"] for f in ordered(w.flinches)],
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
            return {"due": "slap!", "flinch": "flinch!", "physical": "slap window open"}[self.window.kind]
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

    def result(self) -> Outcome | None:
        if self.winner is None:
            return None
        termination = Termination.OVERRULE if self.won_by_overrule else Termination.WIN
        return Outcome(termination, (self.winner,), self.win_reason)

    # ----- conservation (for tests and sanity) -----
    def cards_in_play(self) -> int:
        """Cards in every pile plus the central pile (digital play: always the cards dealt)."""
        return sum(len(p) for p in self.piles.values()) + len(self.central)


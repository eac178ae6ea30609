"""Taco Hat Cake Gift Pizza: the commands a person sends (caller taps, penalties, overrules, pause).

Each is declared with :func:`~companion.games.base.command` and its arguments'
specs; the base class checks them once and routes the command here. Whether a
player id is one of this game's players stays here (``self.player``).
"""

from __future__ import annotations

from typing import Any, Iterable

from core.errors import InputError, RuleError
from companion.games.base import ArgSpec, Bound, Command, Event, command
from companion.games.taco_cards import (
    CARDS,
    is_due,
    word_at,
)
from companion.games.taco_view import TacoView

PENALTY_REASONS = ("gesture", "peek", "pace", "other")

#: A player's id in this game (whether it is one is the handler's check).
PLAYER = ArgSpec("player", "int", hint="a player id")


class TacoCommands(TacoView):
    """The command side of the Taco referee."""

    def _pause_data(self, at_us: int, reason: str) -> dict[str, Any]:
        remaining = None
        if self.next_flip_at is not None:
            remaining = max(0, self.next_flip_at - at_us)
        return {"at_us": at_us, "remaining_us": remaining, "reason": reason}

    def before_command(self, command: Command) -> None:
        """Nothing before the deal; after a win only an overrule may change the outcome; no overrule before a verdict."""
        if not self.started:
            raise RuleError("the cards are not dealt yet")
        if self.winner is not None and command.name != "overrule":
            raise RuleError(f"the game is over: player #{self.winner} won; only an overrule can change it")
        if command.name == "overrule" and not self.verdicts:
            # Before the arguments are checked: 'verdict' ranges over the verdicts so far.
            raise RuleError("there is no verdict to overrule yet")

    def candidate_commands(self) -> Iterable[Command]:
        """Pause, resume, and a penalty on each player for each fault (a flipped card is seen, not listed)."""
        out = [Command("pause"), Command("resume")]
        out += [Command("penalty", {"player": pid, "reason": reason}) for pid in self.seats for reason in PENALTY_REASONS]
        return out

    @command("card_flipped", "Caller view (physical play): record the card just flipped {card, player?}",
             (ArgSpec("card", "str", choices=CARDS), ArgSpec("player", "int", optional=True, hint="who flipped it")))
    def _decide_card_flipped(self, command: Command) -> list[Event]:
        if self.digital:
            raise RuleError("in digital play the companion flips the cards; card_flipped is for physical play")
        if self.paused:
            raise RuleError("play is paused; resume first")
        card = command.args["card"]
        seat = self.beat_seat if self.beat_seat is not None else self.round_first
        assert seat is not None
        skipped: list[int] = []
        if "player" in command.args:
            player = self.player(command.args["player"]).id
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

    @command("penalty", "A player takes the pile for a gesture, peek or pace fault {player, reason}",
             (PLAYER, ArgSpec("reason", "choice", optional=True, choices=PENALTY_REASONS, default="other")))
    def _decide_penalty(self, command: Command) -> list[Event]:
        player = self.player(command.args["player"]).id
        reason = command.args.get("reason", "other")
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

    @command("overrule", "Change a verdict {verdict?, taker? | cancel_flinch? | winner?}", (
        ArgSpec("verdict", "int", optional=True, min=1, max=Bound(lambda game: len(game.verdicts), "the number of verdicts so far"),
                message="'verdict' must be a verdict number from 1 to {hi}, got {value}", hint="default: the latest"),
        ArgSpec("taker", "int", optional=True, hint="a player id"),
        ArgSpec("cancel_flinch", "choice", optional=True, choices=(True,), message="'cancel_flinch' must be true, got {value}"),
        ArgSpec("winner", "int", optional=True, hint="a player id"),
    ))
    def _decide_overrule(self, command: Command) -> list[Event]:
        args = command.args
        n = args.get("verdict", len(self.verdicts))
        verdict = self.verdicts[n - 1]
        actions = [k for k in ("taker", "cancel_flinch", "winner") if k in args]
        if len(actions) != 1:
            raise InputError("overrule needs exactly one of 'taker' (player id), 'cancel_flinch' (true) or 'winner' (player id)")
        action = actions[0]
        if action == "winner":
            winner = self.player(args["winner"]).id
            if winner == self.winner:
                raise RuleError(f"player #{winner} has already won")
            return [Event("overruled", {"verdict": n, "action": "winner", "winner": winner, "at_us": command.at_us})]
        if self.winner is not None:
            raise RuleError(f"the game is over: player #{self.winner} won; only the winner can be overruled")
        if verdict.get("cancelled"):
            raise RuleError(f"verdict {n} was already cancelled")
        if action == "taker":
            to = self.player(args["taker"]).id
            if to == verdict["holder"]:
                raise RuleError(f"player #{to} already holds the pile of verdict {n}")
            return [self._overrule_event(verdict, to, "reassign", command)]
        if verdict["kind"] != "flinch":
            raise RuleError(f"verdict {n} is not a flinch ({verdict['kind']}); reassign its pile with 'taker' instead")
        cards = self._bottom_cards(verdict)
        return [
            Event(
                "overruled",
                {"verdict": n, "action": "cancel_flinch", "from": verdict["holder"], "cards": cards, "at_us": command.at_us},
            )
        ]

    @command("set_pile", "Correct a player's pile count by hand (physical play) {player, count}",
             (PLAYER, ArgSpec("count", "int", min=0, max=64)))
    def _decide_set_pile(self, command: Command) -> list[Event]:
        if self.digital:
            raise RuleError("in digital play the companion holds the cards; pile counts cannot be set by hand")
        player = self.player(command.args["player"]).id
        count = command.args["count"]
        return [Event("pile_corrected", {"player": player, "count": count, "at_us": command.at_us})]

    @command("pause", "Stop the beat (digital) and ignore hits until resumed")
    def _decide_pause(self, command: Command) -> list[Event]:
        if self.paused:
            raise RuleError("play is already paused")
        return [Event("paused", self._pause_data(command.at_us, "asked"))]

    @command("resume", "Resume play after a pause")
    def _decide_resume(self, command: Command) -> list[Event]:
        if not self.paused:
            raise RuleError("play is not paused")
        at = command.at_us
        data: dict[str, Any] = {"at_us": at}
        if self.digital and self.window is None:
            data["next_flip_at_us"] = at + max(self.pause_remaining_us or 0, self.settings["tempo_ms"] * 1000)
        return [Event("resumed", data)]

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


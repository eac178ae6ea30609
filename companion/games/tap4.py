"""Tap 4 score sheet: rounds entered from phones, checked against the deck.

The game itself is played with real cards; the companion keeps the sheet.
Events:

* ``starter_chosen`` ``{"player", "change", "by"}``: who starts round 1
  (before any round is entered).
* ``round_entered`` ``{"round", "starter", "dealer", "entries", "change", "by"}``.
* ``round_edited`` ``{"round", "entries", "previous", "changes", "change", "by"}``:
  a correction of any earlier round; ``changes`` lists ``{"player", "from", "to"}``.

``change`` numbers every change to the sheet; only the latest change may be
undone (the table's generic ``undo``), so each undo restores a sheet that
existed before. Decisions are in docs/games/tap4.md.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from core.checks import whole_number
from core.errors import InputError, RuleError
from companion.games import register
from companion.games.base import ArgSpec, Bound, Command, Event, Game, Outcome, Player, SettingSpec, Termination, command
from companion.games.tap4_scoring import (
    CARD_KEYS,
    DECK,
    POINTS,
    ENTRIES_MESSAGE,
    TAP_OUT_NOTE,
    check_round,
    deal_plan,
)

ROUND_EVENTS = frozenset({"starter_chosen", "round_entered", "round_edited"})

#: A round's entries: their shape and players are checked by ``check_round`` (it needs the players).
ENTRIES = ArgSpec("entries", "list", message=ENTRIES_MESSAGE,
                  hint="one entry per player: {player, out: true} | {player, total} | {player, cards}")


def _compact(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry for the view: card counts without the zeros, to keep live updates small."""
    if entry.get("cards") is None:
        return entry
    return {**entry, "cards": {k: n for k, n in entry["cards"].items() if n}}


def standings(players: Sequence[int], totals: Sequence[int]) -> list[dict[str, Any]]:
    """Players ranked by total, lowest first; equal totals share a place (1, 1, 3)."""
    order = sorted(range(len(players)), key=lambda i: (totals[i], i))
    ranked: list[dict[str, Any]] = []
    for pos, i in enumerate(order):
        place = ranked[-1]["place"] if ranked and ranked[-1]["total"] == totals[i] else pos + 1
        ranked.append({"player": players[i], "total": totals[i], "place": place})
    return ranked


@register
class Tap4(Game):
    """Score sheet for Tap 4: 3-6 players, or the two-player variant."""

    kind = "tap4"
    title = "Tap 4"
    min_players = 2
    max_players = 6

    def __init__(self, players: Sequence[Player], settings: Mapping[str, Any]) -> None:
        super().__init__(players, settings)
        first = self.settings["first_starter"]
        self._first: int = self.players[0].id if first is None else self.player(first).id
        self._rounds: list[dict[str, Any]] = []
        self._last_change: int = 0
        self._change_count: int = 0
        self._plan = deal_plan(len(self.players))

    # ----- settings -------------------------------------------------------
    #: ``target``: the total that ends the game; ``first_starter``: player id starting round 1 (None: first seat).
    setting_specs = (
        SettingSpec("target", 150, "Game ends at", unit="points", min=1, max=10000),
        SettingSpec("first_starter", None, "First to start", type="player", empty="first seat"),
    )

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        merged = super().validate_settings(settings)
        target = merged["target"]
        whole_number(target, 1, 10000, "Tap 4 setting 'target'")
        first = merged["first_starter"]
        if first is not None and (isinstance(first, bool) or not isinstance(first, int)):
            raise InputError(f"Tap 4 setting 'first_starter' must be a player id or null, got {first!r}")
        return merged

    # ----- seats ----------------------------------------------------------
    def _seat(self, player_id: int) -> int:
        return next(i for i, p in enumerate(self.players) if p.id == player_id)

    def starter_of(self, round_no: int) -> int:
        """Who starts round ``round_no`` (1-based): the start moves one seat left each round."""
        n = len(self.players)
        return self.players[(self._seat(self._first) + round_no - 1) % n].id

    def dealer_of(self, round_no: int) -> int:
        """Who deals round ``round_no``: the player to the starter's right, so the starter sits at the dealer's left."""
        n = len(self.players)
        return self.players[(self._seat(self.starter_of(round_no)) - 1) % n].id

    # ----- totals ---------------------------------------------------------
    def _totals_after(self, rounds: Sequence[dict[str, Any]]) -> list[list[int]]:
        """Running totals (seat order) after each round."""
        running = [0] * len(self.players)
        out: list[list[int]] = []
        for rnd in rounds:
            points = {e["player"]: e["points"] for e in rnd["entries"]}
            running = [t + points.get(p.id, 0) for t, p in zip(running, self.players)]
            out.append(list(running))
        return out

    def _ending_round(self, rounds: Sequence[dict[str, Any]]) -> int | None:
        """The first round (1-based) after which someone has reached the target, if any."""
        for i, totals in enumerate(self._totals_after(rounds)):
            if max(totals) >= self.settings["target"]:
                return i + 1
        return None

    def totals(self) -> list[int]:
        """Current totals in seat order."""
        after = self._totals_after(self._rounds)
        return after[-1] if after else [0] * len(self.players)

    @property
    def over(self) -> bool:
        """True once a round ended with someone at or over the target."""
        return self._ending_round(self._rounds) is not None

    # ----- decide ---------------------------------------------------------
    def _entries(self, command: Command) -> list[dict[str, Any]]:
        return check_round([(p.id, p.name) for p in self.players], command.args.get("entries"))

    @command("enter_round", "Record a round: entries [{player, out: true} | {player, total} | {player, cards}]", (ENTRIES,))
    def _decide_enter(self, command: Command) -> list[Event]:
        if self.over:
            raise RuleError("the game is over: a player reached the target; edit or undo a round to correct it")
        entries = self._entries(command)
        round_no = len(self._rounds) + 1
        return [
            Event(
                "round_entered",
                {
                    "round": round_no,
                    "starter": self.starter_of(round_no),
                    "dealer": self.dealer_of(round_no),
                    "entries": entries,
                    "change": self._change_count + 1,
                    "by": command.actor,
                },
            )
        ]

    def before_command(self, command: Command) -> None:
        """edit_round needs a round to edit (refused before its 'round' is checked against the rounds)."""
        if command.name == "edit_round" and not self._rounds:
            raise RuleError("no round has been entered yet; enter one first")

    @command("edit_round", "Correct a past round: round (1-based) and entries, as for enter_round", (
        ArgSpec("round", "int", min=1, max=Bound(lambda game: len(game._rounds), "the number of rounds entered"),
                message="'round' must be a round number from 1 to {hi}, got {value}"),
        ENTRIES,
    ))
    def _decide_edit(self, command: Command) -> list[Event]:
        round_no = command.args["round"]
        entries = self._entries(command)
        previous = self._rounds[round_no - 1]["entries"]
        if entries == previous:
            raise RuleError(f"round {round_no} already has exactly these entries; nothing to change")
        trial = [dict(r) for r in self._rounds]
        trial[round_no - 1] = {**trial[round_no - 1], "entries": entries}
        ends = self._ending_round(trial)
        if ends is not None and ends < len(trial):
            raise RuleError(
                f"with this correction the target is reached after round {ends}, so the game would have ended "
                f"there, but rounds {ends + 1} to {len(trial)} were played; undo those rounds first"
            )
        before = {e["player"]: e["points"] for e in previous}
        changes = [
            {"player": e["player"], "from": before.get(e["player"]), "to": e["points"]}
            for e in entries
            if before.get(e["player"]) != e["points"]
        ]
        return [
            Event(
                "round_edited",
                {
                    "round": round_no,
                    "entries": entries,
                    "previous": previous,
                    "changes": changes,
                    "change": self._change_count + 1,
                    "by": command.actor,
                },
            )
        ]

    @command("choose_starter", "Before round 1: the player who starts it (the rulebook says the youngest)",
             (ArgSpec("player", "int", hint="a player id"),))
    def _decide_starter(self, command: Command) -> list[Event]:
        if self._rounds:
            raise RuleError("the first starter can only be chosen before round 1 is entered; the start then rotates")
        player = self.player(command.args["player"])
        return [Event("starter_chosen", {"player": player.id, "change": self._change_count + 1, "by": command.actor})]

    def candidate_commands(self) -> Iterable[Command]:
        """Choosing the first starter (each player); a round's scores are typed in, not listed."""
        return [Command("choose_starter", {"player": p.id}) for p in self.players]

    def check_undo(self, event: Event, command: Command) -> None:
        """Only the latest change to the sheet can be undone; earlier rounds are corrected with edit_round."""
        if event.type not in ROUND_EVENTS:
            return
        if event.data.get("change") != self._last_change:
            raise RuleError("only the latest change to the sheet can be undone; to fix an earlier round, edit it")

    # ----- evolve ---------------------------------------------------------
    def evolve(self, event: Event) -> None:
        """Fold one sheet event. A fold that would not add up (a redo of a round that was since
        re-entered, an edit of a round no longer on the sheet, a round after the game ended) raises
        RuleError before changing anything, so the table refuses that undo/redo."""
        data = event.data
        if event.type == "round_entered":
            if data["round"] != len(self._rounds) + 1:
                raise RuleError(f"round {data['round']} cannot follow round {len(self._rounds)} on the sheet")
            if self.over:
                raise RuleError(f"round {data['round']} cannot be added: the game ended before it")
            self._rounds.append(
                {
                    "round": data["round"],
                    "starter": data["starter"],
                    "dealer": data["dealer"],
                    "entries": data["entries"],
                    "entered_by": data.get("by"),
                    "edits": 0,
                    "edited_by": None,
                }
            )
        elif event.type == "round_edited":
            idx = data["round"] - 1
            if not 0 <= idx < len(self._rounds):
                raise RuleError(f"round {data['round']} is not on the sheet, so its correction cannot apply")
            trial = [*self._rounds[:idx], {**self._rounds[idx], "entries": data["entries"]}, *self._rounds[idx + 1:]]
            ends = self._ending_round(trial)
            if ends is not None and ends < len(trial):
                raise RuleError(f"the correction of round {data['round']} would end the game before later rounds")
            rnd = self._rounds[idx]
            rnd.update(entries=data["entries"], edits=rnd["edits"] + 1, edited_by=data.get("by"))
        elif event.type == "starter_chosen":
            if self._rounds:
                raise RuleError("the first starter cannot change once round 1 is on the sheet")
            self._first = self.player(data["player"]).id
        else:
            return
        self._last_change = data.get("change", self._last_change + 1)
        self._change_count = max(self._change_count, self._last_change)

    # ----- read -----------------------------------------------------------
    def view(self) -> dict[str, Any]:
        ids = [p.id for p in self.players]
        target = self.settings["target"]
        after = self._totals_after(self._rounds)
        totals = after[-1] if after else [0] * len(ids)
        rounds = []
        for rnd, running in zip(self._rounds, after):
            by_player = {e["player"]: e for e in rnd["entries"]}
            rounds.append(
                {
                    "round": rnd["round"],
                    "starter": rnd["starter"],
                    "dealer": rnd["dealer"],
                    "out": next(e["player"] for e in rnd["entries"] if e["mode"] == "out"),
                    "points": [by_player[p]["points"] for p in ids],
                    "totals": running,
                    "entries": [_compact(by_player[p]) for p in ids],
                    "entered_by": rnd["entered_by"],
                    "edits": rnd["edits"],
                    "edited_by": rnd["edited_by"],
                }
            )
        over = self.over
        ranked = standings(ids, totals)
        leaders = [r["player"] for r in ranked if r["place"] == 1] if self._rounds else []
        next_round = None
        if not over:
            n = len(self._rounds) + 1
            next_round = {
                "round": n,
                "starter": self.starter_of(n),
                "dealer": self.dealer_of(n),
                "setup": self._plan.to_dict(),
            }
        return {
            "target": target,
            "variant": self._plan.variant,
            "players": [
                {
                    "id": p.id,
                    "name": p.name,
                    "colour": p.colour,
                    "total": t,
                    "to_target": target - t,
                    "place": next(r["place"] for r in ranked if r["player"] == p.id),
                }
                for p, t in zip(self.players, totals)
            ],
            "rounds": rounds,
            "leaders": leaders,
            "next": next_round,
            "over": over,
            "standings": ranked,
            "first_starter": self._first,
            "can_choose_starter": not self._rounds,
            "last_change": self._last_change,
            "setup": self._plan.to_dict(),
            "cards": [{"key": k, "points": POINTS[k], "in_deck": DECK[k]} for k in CARD_KEYS],
            "tap_out_note": TAP_OUT_NOTE,
        }

    def result(self) -> Outcome | None:
        ends = self._ending_round(self._rounds)
        if ends is None:
            return None
        totals = self.totals()
        ranked = standings([p.id for p in self.players], totals)
        winners = [r["player"] for r in ranked if r["place"] == 1]
        reached = [p.name for p, t in zip(self.players, totals) if t >= self.settings["target"]]
        names = " and ".join(self.player(w).name for w in winners)
        low = ranked[0]["total"]
        share = " share the win" if len(winners) > 1 else " wins"
        reason = (f"{' and '.join(reached)} reached {self.settings['target']} after round {ends}; "
                  f"{names}{share} with the lowest total, {low}")
        return Outcome(Termination.TARGET, tuple(winners), reason, {"standings": ranked})

"""A tiny game for the table's own tests: a shared counter, a timer, pad taps, and ways to misbehave.

Not registered in ``companion.games.GAMES``: tests pass ``GAMES_FOR_TESTS`` explicitly.

Commands: ``add {n}`` (adds n, 1..100), ``lock {n}`` (adds n and may not be undone),
``add_many {ns}`` (one event per n: a multi-event step; "lock" in ns locks 1),
``set_timer {after_us}`` (a deadline), ``explode`` (a bug in decide),
``poison`` (an event whose evolve raises: a bug in evolve).
Each pad hit from a player in the game records ``tapped``. The game is won
when the total reaches ``target``.
"""

from __future__ import annotations

from typing import Any

from core.errors import RuleError
from companion.games.base import Command, CommandSpec, Event, Game, Player, require_int
from core.hits import PadHit


class CounterGame(Game):
    """Counts to a target; knows just enough to exercise the table loop."""

    kind = "counter"
    title = "Counter"
    min_players = 1
    max_players = 8
    uses_pads = True
    command_specs = (
        CommandSpec("add", "add n to the counter", ("n",)),
        CommandSpec("lock", "add n; this cannot be undone", ("n",)),
        CommandSpec("set_timer", "fire a deadline after after_us", ("after_us",)),
        CommandSpec("add_many", "add each of ns, one event each (one step)", ("ns",)),
        CommandSpec("explode", "a bug in decide"),
        CommandSpec("poison", "a bug in evolve"),
    )

    def __init__(self, players, settings) -> None:
        super().__init__(players, settings)
        self.total = 0
        self.taps: dict[int, int] = {}
        self.timer_at: int | None = None
        self.fired = 0
        self.voided = 0
        self.started = False

    @classmethod
    def default_settings(cls) -> dict[str, Any]:
        return {"target": 100}

    @classmethod
    def validate_settings(cls, settings):
        merged = super().validate_settings(settings)
        require_int(merged, "target", 1, 10**9)
        return merged

    def start(self, command: Command) -> list[Event]:
        return [Event("counter_ready", {"seed": command.seed % 1000})]

    def decide(self, command: Command) -> list[Event]:
        if command.name in ("add", "lock"):
            n = require_int(command.args, "n", 1, 100)
            if self.outcome() is not None:
                raise RuleError("the counter already reached its target")
            return [Event("added" if command.name == "add" else "locked", {"n": n})]
        if command.name == "add_many":
            ns = command.args.get("ns")
            if not isinstance(ns, list) or not ns:
                raise RuleError("'ns' must be a list of numbers")
            return [Event("locked" if n == "lock" else "added", {"n": 1 if n == "lock" else n}) for n in ns]
        if command.name == "set_timer":
            after = require_int(command.args, "after_us", 0, 10**9)
            return [Event("timer_set", {"at_us": command.at_us + after})]
        if command.name == "explode":
            raise ZeroDivisionError("a bug in decide")
        if command.name == "poison":
            return [Event("poison", {})]
        raise AssertionError(command.name)

    def decide_hit(self, hit: PadHit, player: Player | None) -> list[Event]:
        if player is None:
            return []
        return [Event("tapped", {"player": player.id, "at_us": hit.at_us})]

    def next_deadline_us(self) -> int | None:
        return self.timer_at

    def decide_deadline(self, now_us: int) -> list[Event]:
        if self.timer_at is None or now_us < self.timer_at:
            return []
        return [Event("timer_fired", {"now_us": now_us})]

    def resume(self, now_us: int) -> list[Event]:
        return [Event("timer_voided", {})] if self.timer_at is not None else []

    def check_undo(self, event: Event, command: Command) -> None:
        if event.type == "locked":
            raise RuleError("a locked addition cannot be undone")

    def evolve(self, event: Event) -> None:
        t, d = event.type, event.data
        if t == "counter_ready":
            self.started = True
        elif t in ("added", "locked"):
            self.total += d["n"]
        elif t == "tapped":
            self.taps[d["player"]] = self.taps.get(d["player"], 0) + 1
        elif t == "timer_set":
            self.timer_at = d["at_us"]
        elif t == "timer_fired":
            self.timer_at = None
            self.fired += 1
        elif t == "timer_voided":
            self.timer_at = None
            self.voided += 1
        elif t == "poison":
            self.total = -999  # half-updated on purpose before failing
            raise KeyError("a bug in evolve")
        else:
            raise ValueError(f"unknown event {t}")

    def view(self) -> dict[str, Any]:
        return {"total": self.total, "taps": {str(k): v for k, v in sorted(self.taps.items())},
                "timer_at": self.timer_at, "fired": self.fired, "voided": self.voided, "started": self.started}

    def outcome(self) -> dict[str, Any] | None:
        if self.total >= self.settings["target"]:
            return {"winners": [p.id for p in self.players], "reason": f"reached {self.settings['target']}"}
        return None


#: The registry tests hand to TableState / TableService.
GAMES_FOR_TESTS: dict[str, type[Game]] = {"counter": CounterGame}

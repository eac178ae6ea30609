"""A virtual table for Taco Hat Cake Gift Pizza: drives the pure rules on a virtual clock.

No threads and no real time: ``advance`` calls ``decide_deadline`` at each
deadline the game asks for, ``hit`` delivers a pad hit at its arrival time,
``command`` submits a command. Every event is folded with ``evolve`` and kept,
so ``restart`` can replay the log into a fresh game exactly as the table
service does. Used by the scenario tests and handy for trying rules out.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from companion.games.base import Command, Event, Player
from companion.games.taco import TacoGame
from core.hits import HitKind, PadHit

#: Safety stop for ``advance``: more deadlines than this in one call means a game that never settles.
MAX_STEPS = 100_000


class VirtualTable:
    """One game of Taco Hat Cake Gift Pizza on a virtual microsecond clock.

    Players get ids 1..n and pads 1..n in seat order.
    """

    def __init__(
        self,
        players: int | Sequence[str],
        settings: Mapping[str, Any] | None = None,
        *,
        seed: int = 0,
        hands: Mapping[int, list[str]] | None = None,
        resolution_us: int = 1,
        start_us: int = 0,
    ) -> None:
        names = [f"P{i + 1}" for i in range(players)] if isinstance(players, int) else list(players)
        self.players = [Player(id=i + 1, name=name, pad=i + 1) for i, name in enumerate(names)]
        self.settings = dict(settings or {})
        self.resolution_us = resolution_us
        self.game = TacoGame(self.players, self.settings)
        self.log: list[Event] = []
        self.now = start_us
        events = self.game.start(Command("start_game", at_us=start_us, seed=seed))
        if hands is not None:
            data = dict(events[0].data)
            data["hands"] = [{"player": p.id, "cards": list(hands.get(p.id, []))} for p in self.players]
            data["out_of_play"] = []
            events = [Event("dealt", data)]
        self.apply(events)

    def apply(self, events: list[Event]) -> list[Event]:
        """Fold events into the game and keep them in the log."""
        for event in events:
            self.game.evolve(event)
            self.log.append(event)
        return events

    def advance(self, to_us: int) -> list[Event]:
        """Move the clock to ``to_us``, handling every deadline on the way (at its own time)."""
        produced: list[Event] = []
        for _ in range(MAX_STEPS):
            deadline = self.game.next_deadline_us()
            if deadline is None or deadline > to_us:
                break
            self.now = max(self.now, deadline)
            events = self.game.decide_deadline(self.now)
            if not events:
                break
            produced += self.apply(events)
        else:  # pragma: no cover - a bug guard
            raise RuntimeError("the game kept asking for deadlines without settling")
        self.now = max(self.now, to_us)
        return produced

    def hit(self, pad: int, at_us: int, kind: str = "slap", arrive_us: int | None = None,
            uncertainty_us: int = 0) -> list[Event]:
        """Deliver a hit stamped ``at_us`` that reaches the referee at ``arrive_us`` (default: at once);
        ``uncertainty_us`` as a phone pad's hit carries it."""
        produced = self.advance(max(at_us, arrive_us if arrive_us is not None else at_us))
        hit = PadHit(pad=pad, at_us=at_us, kind=HitKind(kind), resolution_us=self.resolution_us,
                     uncertainty_us=uncertainty_us)
        return produced + self.apply(self.game.decide_hit(hit, self.game.player_for_pad(pad)))

    def command(self, name: str, args: Mapping[str, Any] | None = None, at_us: int | None = None, seed: int = 0) -> list[Event]:
        """Submit a command at ``at_us`` (default: now); errors propagate and change nothing."""
        produced = self.advance(self.now if at_us is None else at_us)
        command = Command(name, dict(args or {}), at_us=self.now, seed=seed, actor="test")
        return produced + self.apply(self.game.decide(command))

    def restart(self, at_us: int) -> list[Event]:
        """Replay the log into a fresh game (as after a power cut), then let it ``resume`` at ``at_us``."""
        game = TacoGame(self.players, self.settings)
        for event in self.log:
            game.evolve(event)
        self.game = game
        self.now = at_us
        return self.apply(game.resume(at_us))

    def verdicts(self) -> list[dict[str, Any]]:
        """Every verdict so far (as the game holds them, with overrules)."""
        return list(self.game.verdicts)

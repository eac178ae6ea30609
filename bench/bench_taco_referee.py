"""Taco Hat Cake Gift Pizza referee: does it name the right player, and how fast is the verdict out?

Simulated rounds are played through the real table loop (TableService, the
SQLite log with durable commits, the publisher): 4 players on simulated pads
with a 1 ms resolution (like a pad box), a digital game whose every card is a
Taco (so every flip is a due card and every round is a slap window).

Each round draws human reaction times of 150-400 ms; about one round in five
forces a near-tie between the last two (0-3 ms apart) and one in twenty has a
player who never slaps. The pads report onsets quantised to their resolution,
and the hits are delivered in a shuffled order (the referee must sort by
timestamp, not arrival). To keep 10,000 rounds quick, the pads' clock is
moved on past the reactions before the hits are delivered, as if the hits
were late on the wire; nobody waits for real seconds.

Figures:

* ``agree_all``: share of verdicts whose taker matches the ground truth
  (the true last slapper, or the never-slapper the documented rule picks).
* ``agree_resolvable``: the same where the deciding gap is at least the
  source's resolution: the target is 100 %.
* ``photo_finish_flagged``: share of sub-resolution deciding gaps the
  verdict flags as a photo finish (target 100 %).
* ``verdict_latency_ms``: from delivering the last hit to the published
  verdict (median, p95), against the baseline ``hit_latency_ms``: a plain
  hit from delivery to its published event in the same run. The ratio shows
  what judging adds to the loop's own commit-and-publish cost.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Report, is_quick
from companion.games.taco import TacoGame
from companion.games.taco_judge import rotation
from companion.service import TableService
from companion.store import EventStore
from hardware.sim import SimulatedPads

WAIT_S = 30.0
PLAYERS = 4
RESOLUTION_US = 1000
SETTINGS = {"deck": {"taco": 48}, "lead_in_ms": 0, "after_verdict_ms": 0, "tempo_ms": 200, "mask_ms": 0}


class WarpPads(SimulatedPads):
    """Simulated pads whose clock can be moved on (the only fake, at the hardware seam)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offset_us = 0

    def now_us(self) -> int:
        return super().now_us() + self.offset_us

    def warp_to(self, at_us: int) -> None:
        """Make the clock read at least ``at_us`` from now on."""
        self.offset_us += max(0, at_us - self.now_us())


class Rounds:
    """Drives the table round by round and keeps the tallies."""

    def __init__(self, service: TableService, pads: WarpPads, rng: random.Random) -> None:
        self.service, self.pads, self.rng = service, pads, rng
        self.sub = service.subscribe()
        self.state: dict[str, Any] = service.snapshot()[1]
        self.total = self.agree = self.resolvable = self.agree_resolvable = 0
        self.near = self.flagged = 0
        self.verdict_ms: list[float] = []
        self.hit_ms: list[float] = []
        self.games = 0

    def _until(self, predicate: Any) -> tuple[list[dict[str, Any]], float]:
        """Events published until ``predicate(events)`` holds, and when (perf_counter) it did."""
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + WAIT_S
        while True:
            update = self.sub.get(timeout=max(0.1, deadline - time.monotonic()))
            if update is None:
                raise RuntimeError("the table loop published nothing in time")
            now = time.perf_counter()
            self.state = update.state
            seen += update.events
            if predicate(seen):
                return seen, now

    def _window(self) -> dict[str, Any]:
        game = self.state["game"]
        if game is None or game["outcome"] is not None:
            self.service.submit("start_game", {"kind": "taco", "settings": SETTINGS})
            self.games += 1
            self.state = self.service.snapshot()[1]
        view = self.state["game"]["view"]
        if not (view["window"] and view["window"]["kind"] == "due"):
            self._until(lambda _: (self.state["game"]["view"]["window"] or {}).get("kind") == "due")
            view = self.state["game"]["view"]
        return view

    def play(self) -> None:
        """One round: draw reactions, deliver the hits out of order, check the verdict."""
        view = self._window()
        card_at = view["top"]["at_us"]
        flipper = view["top"]["player"]
        seats = [p["player"] for p in view["piles"]]
        true_us = {pid: self.rng.randint(150_000, 400_000) for pid in seats}
        if self.rng.random() < 0.2:  # a near-tie for last place
            ordered = sorted(seats, key=lambda p: true_us[p])
            true_us[ordered[-1]] = true_us[ordered[-2]] + self.rng.randint(1, 3000)
        missing = [self.rng.choice(seats)] if self.rng.random() < 0.05 else []
        slappers = [p for p in seats if p not in missing]
        last = max(slappers, key=lambda p: (true_us[p], p))
        second = sorted(slappers, key=lambda p: (true_us[p], p))[-2]
        gap_us = true_us[last] - true_us[second]
        truth = [p for p in rotation(seats, flipper) if p in missing][0] if missing else last
        # The pad reports onsets quantised to its resolution.
        reported = {p: card_at + (true_us[p] // RESOLUTION_US) * RESOLUTION_US for p in slappers}
        self.pads.warp_to(max(reported.values()) + 1)
        order = slappers[:]
        self.rng.shuffle(order)
        first, rest = order[0], order[1:]
        final = rest.pop() if not missing else None
        t0 = time.perf_counter()
        self.pads.inject(first, at_us=reported[first])
        _, t1 = self._until(lambda ev: any(e["type"] in ("slapped", "verdict") for e in ev))
        self.hit_ms.append((t1 - t0) * 1000)
        for p in rest:
            self.pads.inject(p, at_us=reported[p])
        if rest:
            self._until(lambda ev: sum(e["type"] == "slapped" for e in ev) >= len(rest))
        t0 = time.perf_counter()
        if final is not None:
            self.pads.inject(final, at_us=reported[final])
        else:
            # Nobody else will slap: move the clock past the window's close and wake the loop
            # with a hit on the spare pad (no player), as the loop would wake at its deadline.
            self.pads.warp_to(card_at + 3_250_001)
            self.pads.inject(PLAYERS + 1)
        events, t1 = self._until(lambda ev: any(e["type"] == "verdict" for e in ev))
        verdict = next(e for e in events if e["type"] == "verdict")["data"]
        if final is not None:
            self.verdict_ms.append((t1 - t0) * 1000)
        self.total += 1
        ok = verdict["taker"] == truth
        self.agree += ok
        if missing or gap_us >= RESOLUTION_US:
            self.resolvable += 1
            self.agree_resolvable += ok
        elif reported[last] - reported[second] < RESOLUTION_US:
            self.near += 1
            self.flagged += any(p["decides"] == "last" for p in verdict["photo_finish"])


def main() -> Report:
    """Play the rounds and write the report."""
    rounds = 1000 if is_quick() else 10_000
    report = Report("taco_referee", params={"rounds": rounds, "players": PLAYERS, "resolution_us": RESOLUTION_US,
                                            "reaction_ms": "150-400", "near_ties": "~20% of rounds, 0-3 ms"})
    rng = random.Random(20261129)
    with tempfile.TemporaryDirectory() as tmp:
        store = EventStore(Path(tmp) / "bench.sqlite3")
        pads = WarpPads(pad_count=PLAYERS + 1, resolution_us=RESOLUTION_US)  # one spare pad
        service = TableService(store, pads, games={"taco": TacoGame})
        service.start()
        try:
            for i in range(PLAYERS):
                service.submit("add_player", {"name": f"P{i + 1}", "pad": i + 1})
            play = Rounds(service, pads, rng)
            for _ in range(rounds):
                play.play()
            play.sub.close()
        finally:
            service.stop()
            store.close()
    report.figure("rounds", play.total, "rounds", f"slap windows judged over {play.games} games")
    report.figure("agree_all", 100.0 * play.agree / play.total, "%", "verdicts naming the true taker")
    report.figure("agree_resolvable", 100.0 * play.agree_resolvable / max(1, play.resolvable), "%",
                  f"the same where the deciding gap >= resolution ({play.resolvable} rounds) [target 100]")
    report.figure("photo_finish_flagged", 100.0 * play.flagged / max(1, play.near), "%",
                  f"sub-resolution deciding gaps flagged as photo finish ({play.near} rounds) [target 100]")
    m_verdict = report.series("verdict_latency_ms", play.verdict_ms, "ms",
                              "last hit delivered -> verdict published", percentiles=(95,))
    m_hit = report.series("hit_latency_ms", play.hit_ms, "ms", "baseline: a plain hit delivered -> published",
                          percentiles=(95,))
    report.ratio("verdict_vs_plain_hit", m_verdict, m_hit, "verdict latency over the loop's own hit latency")
    report.notes.append("hits are delivered shuffled; the pads' clock is moved on so no round waits for real time")
    report.write()
    return report


if __name__ == "__main__":
    main()

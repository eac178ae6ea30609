"""Taco Hat Cake Gift Pizza through the real TableService: hits through the loop, verdicts, restart mid-window, stats."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from companion.games.taco import TacoGame
from companion.games.taco_stats import taco_stats
from companion.service import TableService
from companion.store import EventStore
from companion.table import fold
from hardware.sim import SimulatedPads

WAIT = 30.0  # only bounds a hang
GAMES = {"taco": TacoGame}
# An all-Taco deck: the first card ("Taco" said with a Taco) is due, so a window opens at once.
TACO_ONLY = {"deck": {"taco": 48}, "lead_in_ms": 0, "tempo_ms": 400, "after_verdict_ms": 300}


def start(store: EventStore) -> tuple[TableService, SimulatedPads]:
    pads = SimulatedPads(pad_count=4)
    service = TableService(store, pads, games=GAMES)
    service.start()
    return service, pads


def until(service: TableService, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first published state (or the current one) that matches ``predicate``."""
    sub = service.subscribe()
    try:
        _, state = service.snapshot()
        while not predicate(state):
            update = sub.get(timeout=WAIT)
            assert update is not None, "no matching update arrived"
            state = update.state
        return state
    finally:
        sub.close()


def view(state: dict[str, Any]) -> dict[str, Any]:
    return state["game"]["view"]


def window_open(state: dict[str, Any]) -> bool:
    return state["game"] is not None and (view(state)["window"] or {}).get("kind") == "due"


def without_pads(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k not in ("pads", "recent_hits")}


def test_a_due_card_is_judged_from_hits_fed_through_the_loop(store: EventStore) -> None:
    service, pads = start(store)
    try:
        for name, pad in (("Ann", 1), ("Bob", 2)):
            service.submit("add_player", {"name": name, "pad": pad})
        service.submit("start_game", {"kind": "taco", "settings": TACO_ONLY})
        state = until(service, window_open)
        card_at = view(state)["top"]["at_us"]
        pads.inject(2, at_us=card_at + 180_000)
        pads.inject(1, at_us=card_at + 260_000)
        state = until(service, lambda s: view(s)["verdict"] is not None)
        verdict = view(state)["verdict"]
        assert [e["player"] for e in verdict["order"]] == [2, 1]
        assert [e["after_ms"] for e in verdict["order"]] == [180.0, 260.0]
        assert verdict["taker"] == 1
        assert verdict["order"][1]["margin_ms"] == 80.0
        rows = {r["player"]: r for r in taco_stats(service.game_events("taco"))}
        assert rows[1]["piles"] == 1 and rows[2]["best_ms"] == 180.0
    finally:
        service.stop()


def test_a_restart_in_the_middle_of_a_slap_window_is_explained_by_the_log(store: EventStore) -> None:
    service, pads = start(store)
    for name, pad in (("Ann", 1), ("Bob", 2), ("Cy", 3)):
        service.submit("add_player", {"name": name, "pad": pad})
    # A long window, so it is surely still open when the service stops.
    service.submit("start_game", {"kind": "taco", "settings": {**TACO_ONLY, "timeout_ms": 30_000}})
    state = until(service, window_open)
    card_at = view(state)["top"]["at_us"]
    pads.inject(1, at_us=card_at + 200_000)
    state = until(service, lambda s: view(s)["window"] and view(s)["window"]["slapped"] == [1])
    seq_before, _ = service.snapshot()
    service.stop()  # the power goes off with the window open

    again, pads = start(store)
    try:
        events = store.all_events()
        assert [e["type"] for e in events[seq_before:]] == ["restarted", "window_voided", "paused"]
        seq, state = again.snapshot()
        assert seq == events[-1]["seq"]
        # The state after the restart is exactly what a replay of the log gives.
        assert without_pads(state) == without_pads(fold(events, GAMES, pad_count=4).view())
        v = view(state)
        assert v["paused"] and v["window"] is None and v["central"] == 1 and v["verdict"] is None
        assert v["beat"] == {"player": 1, "word": "taco"}  # the round starts again with the same player

        # Play goes on: resume, the next Taco is due, everyone slaps, a verdict follows.
        again.submit("resume")
        state = until(again, window_open)
        card_at = view(state)["top"]["at_us"]
        for pad, after in ((3, 150_000), (1, 220_000), (2, 300_000)):
            pads.inject(pad, at_us=card_at + after)
        state = until(again, lambda s: view(s)["verdict"] is not None)
        assert view(state)["verdict"]["taker"] == 2
        assert view(state)["verdict"]["cards"] == ["taco", "taco"]
    finally:
        again.stop()


def test_commands_reach_the_game_and_bad_ones_change_nothing(store: EventStore) -> None:
    service, _ = start(store)
    try:
        for name, pad in (("Ann", 1), ("Bob", 2)):
            service.submit("add_player", {"name": name, "pad": pad})
        service.submit("start_game", {"kind": "taco", "settings": {"lead_in_ms": 60_000}})
        before = service.snapshot()
        with pytest.raises(ValueError, match="'reason' must be one of"):
            service.submit("penalty", {"player": 1, "reason": "rude"})
        assert service.snapshot() == before
        result = service.submit("pause")
        assert [e["type"] for e in result["events"]] == ["paused"]
        assert view(service.snapshot()[1])["paused"] is True
        assert service.snapshot()[1]["game"]["can_undo"] is True  # a pause is the latest hand-made change
    finally:
        service.stop()

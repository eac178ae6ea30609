"""The table loop: acknowledged only after commit, hits in order, deadlines, bugs survived, replay = live."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.broadcast import Update
from companion.config import Config, PlayerConfig
from core.errors import ConfigError, InputError, NotFoundError, RuleError, StoreError
from companion.service import TableService
from companion.store import EventStore
from companion.table import RECENT_HITS, fold
from hardware.sim import SimulatedPads
from helpers.counter_game import GAMES_FOR_TESTS

WAIT = 30.0  # only bounds a hang


class GatedStore(EventStore):
    """An EventStore whose commits can be held at a gate, counted, or made to fail."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.batches: list[int] = []
        self.fail_next = False

    def append(self, batch):  # type: ignore[override]
        self.entered.set()
        assert self.gate.wait(WAIT)
        if self.fail_next:
            self.fail_next = False
            raise StoreError("disk full (simulated)")
        out = super().append(batch)
        self.batches.append(len(out))
        return out


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GatedStore]:
    s = GatedStore(tmp_path / "log.sqlite3")
    yield s
    s.gate.set()
    s.close()


@pytest.fixture
def pads() -> SimulatedPads:
    return SimulatedPads(pad_count=4)


@pytest.fixture
def service(store: GatedStore, pads: SimulatedPads) -> Iterator[TableService]:
    svc = TableService(store, pads, games=GAMES_FOR_TESTS)
    svc.start()
    yield svc
    store.gate.set()
    svc.stop()


def seated(service: TableService, n: int = 2) -> None:
    for i, name in enumerate(["Ann", "Bob", "Cy", "Dee"][:n], start=1):
        service.submit("add_player", {"name": name, "pad": i})


def wait_for(sub, predicate) -> Update:
    """The first update matching ``predicate`` (generous timeout: only a hang fails)."""
    while True:
        update = sub.get(timeout=WAIT)
        assert update is not None, "no matching update arrived"
        if predicate(update):
            return update


def without_pads(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "pads"}


# ----- acknowledgement ------------------------------------------------------------
def test_submit_returns_the_committed_events(service: TableService, store: GatedStore) -> None:
    result = service.submit("add_player", {"name": "Ann", "pad": 1}, actor="phone-7")
    [event] = result["events"]
    assert result["seq"] == event["seq"] == 1
    assert event["type"] == "player_added" and event["actor"] == "phone-7"
    assert EventStore(store.path).get(1)["data"]["name"] == "Ann"  # durable: another connection reads it


def test_a_command_is_acknowledged_only_after_its_commit(service: TableService, store: GatedStore) -> None:
    store.gate.clear()
    store.entered.clear()
    reply = service.submit_nowait("add_player", {"name": "Ann"})
    assert store.entered.wait(WAIT)  # the loop is inside append, holding the batch
    assert not reply.done()
    assert EventStore(store.path).last_seq == 0
    store.gate.set()
    assert reply.wait(WAIT)["seq"] == 1
    assert EventStore(store.path).get(1) is not None


def test_nothing_is_published_before_its_commit(service: TableService, store: GatedStore,
                                              pads: SimulatedPads) -> None:
    sub = service.subscribe()
    store.gate.clear()
    store.entered.clear()
    pads.inject(1)
    assert store.entered.wait(WAIT)  # the loop holds the hit's batch inside append
    assert sub.pending() == 0 and service.snapshot()[0] == 0
    store.gate.set()
    update = sub.get(timeout=WAIT)
    assert update is not None and [e["type"] for e in update.events] == ["hit"]
    assert EventStore(store.path).get(update.seq) is not None
    sub.close()


def test_items_waiting_together_are_committed_as_one_batch(service: TableService, store: GatedStore,
                                                           pads: SimulatedPads) -> None:
    seated(service)
    store.gate.clear()
    store.entered.clear()
    first = service.submit_nowait("update_player", {"player": 1, "colour": "#000000"})
    assert store.entered.wait(WAIT)  # the loop holds batch 1; the rest piles up in the inbox
    for i in range(50):
        pads.inject(1 + i % 2, at_us=1000 + i)
    replies = [service.submit_nowait("update_player", {"player": 2, "name": f"Bob{i}"}) for i in range(5)]
    bad = service.submit_nowait("update_player", {"player": 9, "name": "X"})
    before = len(store.batches)
    store.gate.set()
    for r in [first, *replies]:
        r.wait(WAIT)
    with pytest.raises(NotFoundError):
        bad.wait(WAIT)
    assert store.batches[before:] == [1, 55]  # 50 hits + 5 commands in one transaction; the refused one added nothing
    assert service.snapshot()[1]["players"][1]["name"] == "Bob4"


def test_hits_are_logged_in_the_order_they_came(service: TableService, pads: SimulatedPads) -> None:
    seated(service, 3)
    sent = [pads.inject(1 + i % 3, at_us=10_000 + i * 7) for i in range(100)]
    service.submit("update_player", {"player": 1, "name": "Ann"})  # a barrier: it follows every hit
    hits = [e["data"] for e in service.events_after(0) if e["type"] == "hit"]
    assert [(h["pad"], h["at_us"]) for h in hits] == [(h.pad, h.at_us) for h in sent]
    assert [h["player"] for h in hits[:3]] == [1, 2, 3]
    assert len(service.snapshot()[1]["recent_hits"]) == RECENT_HITS


def test_every_commit_publishes_one_update(service: TableService, pads: SimulatedPads) -> None:
    sub = service.subscribe()
    result = service.submit("add_player", {"name": "Ann", "pad": 1})
    update = sub.get(timeout=WAIT)
    assert update.seq == result["seq"] and update.events == result["events"]
    assert update.state["players"][0]["name"] == "Ann"
    pads.inject(1, strength=0.5)
    update = sub.get(timeout=WAIT)
    assert [e["type"] for e in update.events] == ["hit"]
    assert update.state["recent_hits"][-1]["strength"] == 0.5
    assert update.state["pads"]["source"] == "sim" and update.state["pads"]["count"] == 4
    assert service.snapshot() == (update.seq, update.state)
    sub.close()


def test_the_wal_is_checkpointed_only_after_the_batch_is_published(store: GatedStore, pads: SimulatedPads,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    svc = TableService(store, pads, games=GAMES_FOR_TESTS)
    sub = svc.subscribe()
    published_at_checkpoint: list[int] = []

    def checkpoint(every: int = 0) -> bool:
        # The update of the batch just committed must already be waiting for subscribers.
        published_at_checkpoint.append(sub.pending())
        return True

    monkeypatch.setattr(store, "checkpoint_if_due", checkpoint)
    with svc:
        svc.submit("add_player", {"name": "Ann", "pad": 1})
    assert published_at_checkpoint and published_at_checkpoint[0] >= 1
    sub.close()


# ----- refusals and bugs -------------------------------------------------------------
def test_refused_commands_raise_and_change_nothing(service: TableService) -> None:
    seated(service)
    seq, before = service.snapshot()
    with pytest.raises(RuleError, match="already a player called Ann"):
        service.submit("add_player", {"name": "ANN"})
    with pytest.raises(InputError, match="unknown command 'dance'"):
        service.submit("dance")
    with pytest.raises(InputError, match="needs a name"):
        service.submit("")
    with pytest.raises(InputError, match="'args' must be an object"):
        service.submit("add_player", ["Ann"])  # type: ignore[arg-type]
    assert service.snapshot() == (seq, before)
    assert service.events_after(seq) == []


def test_a_raising_game_does_not_kill_the_loop(service: TableService, caplog) -> None:
    seated(service)
    service.submit("start_game", {"kind": "counter"})
    service.submit("add", {"n": 5})
    seq, before = service.snapshot()
    with pytest.raises(RuntimeError, match="'explode' failed inside the table service: ZeroDivisionError"):
        service.submit("explode")
    with pytest.raises(RuntimeError, match="'poison' failed.*KeyError"):
        service.submit("poison")  # evolve raised half-way: the state is rebuilt
    assert "Traceback" in caplog.text and "a bug in evolve" in caplog.text
    assert service.snapshot()[0] == seq
    assert service.snapshot()[1]["game"]["view"]["total"] == 5
    assert service.submit("add", {"n": 2})["seq"] == seq + 1
    assert service.snapshot()[1]["game"]["view"]["total"] == 7
    assert service.running
    assert service.status()["bugs"] == 2


def test_a_bug_in_the_loop_itself_answers_the_batch_and_the_loop_goes_on(service: TableService, monkeypatch,
                                                                         caplog) -> None:
    seated(service)
    seq, before = service.snapshot()
    real = service._fire_deadlines
    calls = {"n": 0}

    def broken_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a bug in the loop")
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "_fire_deadlines", broken_once)
    with pytest.raises(RuntimeError, match="internal error"):
        service.submit("add_player", {"name": "Cy"})
    assert "a bug in the loop" in caplog.text
    assert service.events_after(seq) == []  # nothing was committed for it
    assert service.submit("add_player", {"name": "Cy"})["seq"] == seq + 1
    assert [p["name"] for p in service.snapshot()[1]["players"]] == ["Ann", "Bob", "Cy"]


def test_a_failed_commit_refuses_the_batch_and_keeps_the_state(service: TableService, store: GatedStore) -> None:
    seated(service)
    seq, before = service.snapshot()
    store.fail_next = True
    with pytest.raises(StoreError, match="disk full"):
        service.submit("add_player", {"name": "Cy"})
    assert service.snapshot() == (seq, before)
    assert service.submit("add_player", {"name": "Cy"})["seq"] == seq + 1


# ----- deadlines ----------------------------------------------------------------------
def test_a_game_deadline_fires_on_time_without_any_input(service: TableService) -> None:
    seated(service)
    service.submit("start_game", {"kind": "counter"})
    sub = service.subscribe()
    set_at = service.submit("set_timer", {"after_us": 50_000})["events"][0]["data"]["at_us"]
    update = wait_for(sub, lambda u: any(e["type"] == "timer_fired" for e in u.events))
    fired = next(e for e in update.events if e["type"] == "timer_fired")
    assert fired["data"]["now_us"] >= set_at  # never early, on the pad source's clock
    assert update.state["game"]["view"]["timer_at"] is None
    sub.close()


def test_a_deadline_fires_between_hits_stamped_before_and_after_it(service: TableService, pads: SimulatedPads,
                                                                   store: GatedStore) -> None:
    seated(service)
    service.submit("start_game", {"kind": "counter"})
    store.gate.clear()
    store.entered.clear()
    reply = service.submit_nowait("set_timer", {"after_us": 20_000})
    assert store.entered.wait(WAIT)  # the loop is committing the timer and cannot fire it yet
    deadline = service._state.next_deadline_us()
    before = pads.inject(1, at_us=deadline - 1)
    after = pads.inject(2, at_us=deadline + 1)
    while pads.now_us() <= deadline + 1:  # let the source's clock pass both hits
        threading.Event().wait(0.005)
    store.gate.set()
    reply.wait(WAIT)
    service.submit("update_player", {"player": 1, "colour": "#000000"})  # a barrier
    tail = [(e["type"], e["data"]) for e in service.events_after(reply.wait(WAIT)["seq"])][:5]
    assert [t for t, _ in tail] == ["hit", "tapped", "timer_fired", "hit", "tapped"]
    assert tail[0][1]["at_us"] == before.at_us and tail[3][1]["at_us"] == after.at_us
    assert tail[2][1]["now_us"] == deadline  # told the deadline's own time, not when the loop got to it


def test_a_game_whose_deadline_never_moves_does_not_spin(service: TableService, monkeypatch, caplog) -> None:
    from helpers.counter_game import CounterGame

    seated(service)
    service.submit("start_game", {"kind": "counter"})
    monkeypatch.setattr(CounterGame, "decide_deadline", lambda self, now: [])
    service.submit("set_timer", {"after_us": 0})
    assert service.submit("add", {"n": 1})["events"][0]["type"] == "added"  # still answering
    assert "did not move" in caplog.text


# ----- restart -------------------------------------------------------------------------
def test_a_restart_replays_to_the_live_state_and_resumes_the_game(store: GatedStore, pads: SimulatedPads) -> None:
    svc = TableService(store, pads, games=GAMES_FOR_TESTS)
    svc.start()
    seated(svc, 3)
    svc.submit("start_game", {"kind": "counter", "settings": {"target": 500}})
    for n in (3, 4, 5):
        svc.submit("add", {"n": n})
    undo = svc.submit("undo")["events"][0]
    svc.submit("undo", {"seq": undo["seq"]})
    svc.submit("undo")
    for i in range(20):
        pads.inject(1 + i % 4)
    svc.submit("set_timer", {"after_us": 60_000_000})
    seq, live = svc.snapshot()
    svc.stop()
    svc.stop()  # idempotent

    again = TableService(store, SimulatedPads(pad_count=4), games=GAMES_FOR_TESTS)
    again.start()
    try:
        events = store.all_events()
        assert [e["type"] for e in events[seq:]] == ["timer_voided"]  # resume() decided this
        new_seq, state = again.snapshot()
        assert new_seq == seq + 1
        assert without_pads(state) == without_pads(fold(events, GAMES_FOR_TESTS, pad_count=4).view())
        live["game"]["view"].update(timer_at=None, voided=1)
        assert without_pads(state) == {**without_pads(live), "seq": new_seq}
    finally:
        again.stop()


def test_configured_players_are_seated_on_a_fresh_table_only(store: GatedStore) -> None:
    config = Config(players=(PlayerConfig("Ann", pad=2), PlayerConfig("Bob", colour="#aabbcc")))
    with TableService(store, SimulatedPads(pad_count=4), config, games=GAMES_FOR_TESTS) as svc:
        assert [(p["name"], p["pad"]) for p in svc.snapshot()[1]["players"]] == [("Ann", 2), ("Bob", None)]
        svc.submit("remove_player", {"player": "Bob"})
    with TableService(store, SimulatedPads(pad_count=4), config, games=GAMES_FOR_TESTS) as svc:
        assert [p["name"] for p in svc.snapshot()[1]["players"]] == ["Ann"]
    assert [e["actor"] for e in store.all_events()[:2]] == ["config", "config"]


def test_configured_players_that_do_not_fit_the_pads_are_a_config_error(store: GatedStore) -> None:
    config = Config(players=(PlayerConfig("Ann", pad=9),))
    svc = TableService(store, SimulatedPads(pad_count=4), config, games=GAMES_FOR_TESTS)
    with pytest.raises(ConfigError, match=r"players\[1\].*pad number from 1 to 4"):
        svc.start()
    assert store.all_events() == []


@pytest.mark.parametrize(
    "games, message",
    [({"chess": {}}, r"\[games.chess\]: no such game; valid: counter"),
     ({"counter": {"target": "high"}}, r"\[games.counter\]: 'target' must be a whole number")],
)
def test_bad_game_settings_in_the_config_are_named(store: GatedStore, games, message) -> None:
    with pytest.raises(ConfigError, match=message):
        TableService(store, SimulatedPads(), Config(games=games), games=GAMES_FOR_TESTS)


def test_a_stopped_service_refuses_commands_and_closes_subscriptions(service: TableService) -> None:
    sub = service.subscribe()
    service.stop()
    assert sub.closed and sub.get(timeout=0.01) is None
    with pytest.raises(RuntimeError, match="not running"):
        service.submit("add_player", {"name": "Ann"})
    with pytest.raises(RuntimeError, match="already started"):
        service.start()


# ----- reading the log ------------------------------------------------------------------
def test_history_past_games_and_game_events(service: TableService) -> None:
    seated(service)
    first = service.submit("start_game", {"kind": "counter", "settings": {"target": 3}})["events"][0]["seq"]
    service.submit("add", {"n": 1})
    undone = service.submit("add", {"n": 50})["events"][0]["seq"]
    undo = service.submit("undo")["events"][0]["seq"]
    service.submit("add", {"n": 2})
    second = service.submit("start_game", {"kind": "counter"})["events"][1]["seq"]

    history = service.history(first)
    assert history[0]["type"] == "game_started" and history[-1]["type"] == "game_ended"
    marked = {e["seq"]: (e["undone"], e["undone_by"]) for e in history}
    assert marked[undone] == (True, undo) and marked[undo] == (False, None)

    games = service.past_games()
    assert [g["game_id"] for g in games] == [second, first]  # newest first
    assert games[1]["ended"] is not None and games[1]["outcome"]["winners"] == [1, 2]
    assert games[0]["ended"] is None and games[0]["outcome"] is None
    assert set(games[0]) >= {"game_id", "kind", "title", "started", "ended", "players", "outcome"}

    summaries = list(service.game_events("counter"))
    assert [s["game_id"] for s, _ in summaries] == [first, second]
    assert [(e["type"], e["data"]) for e in summaries[0][1]] == [
        ("counter_ready", summaries[0][1][0]["data"]), ("added", {"n": 1}), ("added", {"n": 2})]
    assert list(service.game_events("chess")) == []
    with pytest.raises(NotFoundError, match="no game 1"):
        service.history(1)


def test_events_after_pages_through_the_log(service: TableService) -> None:
    seated(service, 4)
    assert [e["seq"] for e in service.events_after(1, limit=2)] == [2, 3]
    assert service.events_after(4) == []


def test_memory_stays_flat_while_hits_pour_in(service: TableService, pads: SimulatedPads) -> None:
    seated(service)
    service.submit("start_game", {"kind": "counter"})
    for i in range(500):
        pads.inject(3 + i % 2)  # pads nobody in the game has: only the hit events
    service.submit("add", {"n": 1})
    state = service._state
    assert state is not None
    assert len(state.recent_hits) == RECENT_HITS
    assert state._memory == []  # the service reads history from the log instead of keeping it
    assert service._pending == []


def test_a_game_reacting_badly_to_a_hit_keeps_the_hit_and_the_numbering(service: TableService, pads: SimulatedPads,
                                                                       monkeypatch, caplog) -> None:
    from companion.games.base import Event
    from helpers.counter_game import CounterGame

    seated(service)
    service.submit("start_game", {"kind": "counter"})
    monkeypatch.setattr(CounterGame, "decide_hit", lambda self, hit, player: [Event("bad", {"x": {1, 2}})])
    pads.inject(1)
    seq = service.submit("add", {"n": 1})["seq"]
    types = [e["type"] for e in service.events_after(seq - 2)]
    assert types == ["hit", "added"]
    assert "cannot be stored as JSON" in caplog.text
    monkeypatch.setattr(CounterGame, "decide_hit", lambda self, hit, player: [Event("hit", {})])
    pads.inject(2)
    assert service.submit("add", {"n": 1})["seq"] == seq + 2  # the hit, then this: no gap, no failure


def test_source_notices_are_logged_and_shown_with_the_pads(service: TableService, pads: SimulatedPads) -> None:
    sub = service.subscribe()
    pads.notify("disconnected", "pad box unplugged", port="/dev/ttyUSB0")
    update = sub.get(timeout=WAIT)
    [event] = update.events
    assert event["type"] == "pad_source" and event["game_id"] is None
    assert event["data"] == {"kind": "disconnected", "message": "pad box unplugged", "details": {"port": "/dev/ttyUSB0"}}
    assert update.state["pads"]["status"]["notice"] == {"kind": "disconnected", "message": "pad box unplugged"}
    sub.close()


def test_a_command_the_loop_cannot_answer_in_time_raises_timeout(service: TableService, store: GatedStore) -> None:
    store.gate.clear()
    with pytest.raises(TimeoutError, match="may still be applied"):
        service.submit("add_player", {"name": "Ann"}, timeout=0.05)
    store.gate.set()
    assert service.submit("add_player", {"name": "Bob"})["seq"] == 2  # Ann's command did go through

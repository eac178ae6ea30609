"""Property tests: any sequence of game commands, hits, undos and redos keeps live state = replay = a model."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import CompanionError
from companion.games.base import Command
from companion.table import TableState, fold
from core.hits import PadHit
from helpers.counter_game import GAMES_FOR_TESTS

AT = "2026-11-29T21:00:00.000Z"

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 9)),
        st.tuples(st.just("lock"), st.integers(1, 9)),
        st.tuples(st.just("undo"), st.none()),
        st.tuples(st.just("undo_seq"), st.integers(0, 200)),
        st.tuples(st.just("hit"), st.integers(1, 4)),
    ),
    max_size=40,
)


def model_total(log: list[dict[str, Any]], game_id: int) -> int:
    """The counter's total straight from the definition: an event counts unless an undo in effect targets it."""
    events = {e["seq"]: e for e in log if e["game_id"] == game_id}
    undos_of: dict[int, list[int]] = {}
    for e in events.values():
        if e["type"] == "undo":
            undos_of.setdefault(e["data"]["seq"], []).append(e["seq"])

    @lru_cache(maxsize=None)
    def in_effect(seq: int) -> bool:
        return not any(in_effect(u) for u in undos_of.get(seq, []))

    return sum(e["data"]["n"] for s, e in events.items() if e["type"] in ("added", "locked") and in_effect(s))


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_any_history_folds_the_same_live_and_replayed(ops: list[tuple[str, Any]]) -> None:
    state = TableState(GAMES_FOR_TESTS, pad_count=4)
    log: list[dict[str, Any]] = []

    def run(name: str, args: dict[str, Any]) -> None:
        log.extend(state.execute(Command(name, args, at_us=len(log), seed=1), AT))

    for i, name in enumerate(("Ann", "Bob", "Cy"), start=1):
        run("add_player", {"name": name, "pad": i})
    run("start_game", {"kind": "counter", "settings": {"target": 10**6}})
    game_id = state.active.game_id  # type: ignore[union-attr]

    for op, value in ops:
        before = state.view()
        try:
            if op in ("add", "lock"):
                run(op, {"n": value})
            elif op == "undo":
                run("undo", {})
            elif op == "undo_seq":
                run("undo", {"seq": value})
            else:
                log.extend(state.execute_hit(PadHit(value, 1000 + len(log)), AT))
        except CompanionError:
            assert state.view() == before  # a refusal changes nothing
        assert state.view()["game"]["view"]["total"] == model_total(log, game_id)

    replayed = fold(log, GAMES_FOR_TESTS, pad_count=4)
    assert replayed.view() == state.view()
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))

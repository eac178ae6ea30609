"""SIGKILL in the middle of play loses nothing acknowledged, and a restart equals a replay of the log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from companion.service import TableService
from companion.store import EventStore
from companion.table import fold
from hardware.sim import SimulatedPads
from helpers.counter_game import GAMES_FOR_TESTS

CHILD = Path(__file__).resolve().parents[1] / "helpers" / "crash_child.py"


def _kill_mid_play(db: Path, acks_before_kill: int) -> dict[int, str]:
    """Run the child until it has acknowledged enough, SIGKILL it, return {seq: type} it acknowledged."""
    proc = subprocess.Popen([sys.executable, str(CHILD), str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    acked: dict[int, str] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            _, seq, type_ = line.split()
            acked[int(seq)] = type_
            if len(acked) >= acks_before_kill:
                os.kill(proc.pid, signal.SIGKILL)
                break
        # lines already written before the kill are acknowledged too
        rest, err = proc.communicate(timeout=60)
        for line in rest.splitlines():
            parts = line.split()
            if len(parts) == 3:
                acked[int(parts[1])] = parts[2]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"the child ended on its own: {err[-2000:]}"
    return acked


@pytest.mark.slow
def test_sigkill_mid_play_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "table.sqlite3"
    for round_ in range(2):  # kill, restart the child on the same log, kill again
        acked = _kill_mid_play(db, acks_before_kill=400 + 300 * round_)
        with EventStore(db) as store:
            stored = {e["seq"]: e["type"] for e in store.all_events()}
        missing = {seq: t for seq, t in acked.items() if stored.get(seq) != t}
        assert not missing, f"acknowledged but not in the log: {sorted(missing)[:10]}"
        assert max(stored) >= max(acked)

    with EventStore(db) as store:
        service = TableService(store, SimulatedPads(pad_count=4), games=GAMES_FOR_TESTS)
        service.start()
        try:
            seq, state = service.snapshot()
            events = store.all_events()
            assert seq == events[-1]["seq"]
            replayed = fold(events, GAMES_FOR_TESTS, pad_count=4).view()
            assert {k: v for k, v in state.items() if k != "pads"} == {k: v for k, v in replayed.items() if k != "pads"}
            # and the game's numbers are explained by the log itself
            kept_adds = _effective_total(events, state["game"]["game_id"])
            assert state["game"]["view"]["total"] == kept_adds
            taps = sum(1 for e in events if e["type"] == "tapped")
            assert sum(state["game"]["view"]["taps"].values()) == taps
            assert service.submit("add", {"n": 1})["seq"] == seq + 1  # and play goes on
        finally:
            service.stop()


def _effective_total(events: list[dict], game_id: int) -> int:
    from companion.table import effective_events

    kept, _ = effective_events([e for e in events if e["game_id"] == game_id])
    return sum(e["data"]["n"] for e in kept if e["type"] in ("added", "locked"))

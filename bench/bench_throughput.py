"""Sustained hits per second the table loop absorbs with durable logging.

A burst of N hits is injected into simulated pads as fast as one thread can;
the figure is N divided by the time until the last hit is committed (WAL,
``synchronous=FULL``) and published. Baselines measured in the same run on
the same disk:

* ``per_event_commit``: a raw sqlite3 loop, same schema and durability, one
  transaction (one fsync) per event: what the loop would manage without group
  commit. The ratio against it shows what batching buys.
* ``raw_batch``: the same rows inserted by raw sqlite3 in ONE transaction: the
  ceiling. The ratio against it is the share of the ceiling the loop reaches
  (the rest is deciding, folding, publishing).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from bench.common import Report, Stopwatch, is_quick
from companion.service import TableService
from companion.store import EventStore, utc_now
from hardware.sim import SimulatedPads

WAIT_S = 300.0


def _raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, game_id INTEGER NULL,"
                 " type TEXT NOT NULL, data TEXT NOT NULL, actor TEXT NULL)")
    conn.execute("CREATE INDEX events_by_game ON events(game_id, seq)")
    conn.execute("CREATE INDEX events_by_type ON events(type, seq)")
    return conn


def _row(i: int) -> tuple[str, None, str, str, None]:
    data = {"pad": 1 + i % 4, "at_us": 1_000_000 + i, "kind": "slap", "strength": None, "resolution_us": 1,
            "player": 1 + i % 4}
    return (utc_now(), None, "hit", json.dumps(data, separators=(",", ":")), None)


def per_event_commit(directory: Path, n: int) -> float:
    """Events per second with one durable transaction per event."""
    conn = _raw_connection(directory / "per_event.sqlite3")
    with Stopwatch() as sw:
        for i in range(n):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO events(at, game_id, type, data, actor) VALUES (?,?,?,?,?)", _row(i))
            conn.execute("COMMIT")
    conn.close()
    return n / sw.seconds


def raw_batch(directory: Path, n: int) -> float:
    """Events per second inserting all ``n`` in one durable transaction."""
    conn = _raw_connection(directory / "batch.sqlite3")
    with Stopwatch() as sw:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO events(at, game_id, type, data, actor) VALUES (?,?,?,?,?)",
                         (_row(i) for i in range(n)))
        conn.execute("COMMIT")
    conn.close()
    return n / sw.seconds


def service_burst(directory: Path, n: int) -> tuple[float, float]:
    """(hits per second through the table loop, mean events per committed batch)."""
    store = EventStore(directory / "service.sqlite3")
    pads = SimulatedPads(pad_count=4)
    service = TableService(store, pads, games={})
    service.start()
    try:
        for i, name in enumerate(("Ann", "Bob", "Cy", "Dee"), start=1):
            service.submit("add_player", {"name": name, "pad": i})
        start_seq = service.snapshot()[0]
        batches_before = service.stats["batches"]
        sub = service.subscribe()
        target = start_seq + n
        with Stopwatch() as sw:
            for i in range(n):
                pads.inject(1 + i % 4)
            while True:
                update = sub.get(timeout=WAIT_S)
                if update is None:
                    raise RuntimeError(f"the loop stalled at seq {service.snapshot()[0]} of {target}")
                if update.seq >= target:
                    break
        sub.close()
        batches = service.stats["batches"] - batches_before
        return n / sw.seconds, n / max(1, batches)
    finally:
        service.stop()
        store.close()


def main() -> Report:
    """Measure and write the report."""
    quick = is_quick()
    runs = 3 if quick else 7
    burst = 1000 if quick else 5000
    single = 100 if quick else 300  # one fsync each: kept small so the baseline does not take minutes
    report = Report("throughput", params={"runs": runs, "burst_hits": burst, "per_event_commits": single,
                                          "durability": "WAL, synchronous=FULL"})
    loop, batch_size, per_event, ceiling = [], [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
            d = Path(tmp)
            rate, size = service_burst(d, burst)
            loop.append(rate)
            batch_size.append(size)
            per_event.append(per_event_commit(d, single))
            ceiling.append(raw_batch(d, burst))
    m_loop = report.series("loop_hits_per_s", loop, "hits/s", "hits committed and published by the table loop")
    report.series("loop_events_per_batch", batch_size, "events", "hits per committed batch")
    m_single = report.series("baseline_per_event_commit_per_s", per_event, "events/s",
                             "raw sqlite3, one durable transaction per event")
    m_ceiling = report.series("ceiling_raw_batch_per_s", ceiling, "events/s",
                              "raw sqlite3, the whole burst in one transaction")
    report.ratio("loop_vs_per_event_commit", m_loop, m_single,
                 "what group commit buys: loop throughput / one-commit-per-event", target="> 1")
    report.ratio("loop_vs_raw_batch", m_loop, m_ceiling,
                 "share of the raw insert ceiling the loop reaches (the rest: decide, fold, publish)")
    report.write()
    return report


if __name__ == "__main__":
    main()

"""Hit-to-phone latency: from a hit entering the pad queue to its update at each of 20 SSE clients.

The real path: ``SimulatedPads.inject`` puts a hit on the pad queue; the table
loop logs it (SQLite WAL, durable commit), folds it, publishes one update; each
SSE stream (web.sse under waitress on loopback) writes the ``log`` message and
the full ``state`` message. A phone can render once the ``state`` message has
arrived, so that is the arrival time measured, per client.

The baseline, measured in the same run on the same stack: a minimal Flask app
under the same waitress settings whose SSE endpoint pushes, from a per-client
queue and in one write, the same SSE messages as a real update: a ``log``
message with an id and a ``state`` message, each of the real one's size. The
ratio of the two p99s is what the table service adds on top of a bare push
(target at most 1.5). The clients share this process, so the number of
messages matters, not only the bytes: each message costs every client a parse.
A second baseline, interleaved too, pushes the same bytes as ONE message (the
baseline before 2026-11-29 22:45); its ratio is reported beside, for comparison
with earlier figures.

Hits are sent one at a time (the next after every client has the previous),
so this measures latency, not throughput. Clients run in this process on
threads, which costs both paths alike.
"""

from __future__ import annotations

import logging
import queue
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from flask import Flask, Response

from bench.common import Report, is_quick, median, percentile, ratio
from companion.config import Config
from companion.service import TableService
from companion.store import EventStore
from hardware.sim import SimulatedPads
from web import create_app, table_context
from web.sse_client import SseClient

CLIENTS = 20
WAIT_S = 30.0
#: Rounds per block for the per-block p99 ratio (10 rounds x 5 hits x 20 clients = 1000 samples).
BLOCK_ROUNDS = 10


def _serve(app: Flask, threads: int) -> tuple[Any, threading.Thread]:
    """waitress on 127.0.0.1 with the settings `tabletop serve` uses, in a thread."""
    from waitress.server import create_server

    from companion.commands.serve import OUTBUF_HIGH_WATERMARK

    server = create_server(
        app, host="127.0.0.1", port=0, threads=threads, channel_request_lookahead=1,
        asyncore_use_poll=True, outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
    )
    thread = threading.Thread(target=server.run, name="bench-waitress", daemon=True)
    thread.start()
    return server, thread


def _shutdown(server: Any, thread: threading.Thread) -> None:
    from waitress import wasyncore

    server.task_dispatcher.shutdown(timeout=10)
    server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map, ignore_all=True))
    thread.join(timeout=10)


class BareSse:
    """The baseline: a minimal Flask + waitress SSE endpoint fed from per-client queues."""

    def __init__(self) -> None:
        self.app = Flask("bare_sse")
        self.queues: list["queue.Queue[bytes | None]"] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()

        @self.app.get("/api/events")
        def events() -> Response:
            q: "queue.Queue[bytes | None]" = queue.Queue()
            with self.lock:
                self.queues.append(q)

            def stream() -> Iterator[bytes]:
                yield b"retry: 2000\n\n"
                while not self.stopping.is_set():
                    try:
                        item = q.get(timeout=0.5)
                    except queue.Empty:
                        continue
                    if item is None:
                        return
                    yield item

            return Response(stream(), mimetype="text/event-stream", direct_passthrough=True)

    def push(self, payload: bytes) -> None:
        with self.lock:
            targets = list(self.queues)
        for q in targets:
            q.put(payload)

    def stop(self) -> None:
        self.stopping.set()
        with self.lock:
            for q in self.queues:
                q.put(None)


def _wait_all(clients: list[SseClient], accept: Callable[[Any], bool]) -> list[float]:
    """For each client, the receive time of its first message that ``accept`` takes."""
    times = []
    for client in clients:
        message = client.until(accept, timeout=WAIT_S)[-1]
        times.append(message.received)
    return times


def _connect(port: int, n: int) -> list[SseClient]:
    clients = [SseClient(port) for _ in range(n)]
    for client in clients:
        client.until(lambda m: m.event == "state" or m.retry is not None, timeout=WAIT_S)
    return clients


def _wire_size(m: Any) -> int:
    """Bytes of one SSE message on the wire (approximately: field names, separators, data)."""
    return len(m.data) + len(m.event) + 16 + (len(m.id) + 5 if m.id else 0)


def measure_real(port: int, pads: SimulatedPads, clients: list[SseClient], hits: int) -> tuple[list[float], tuple[int, int]]:
    """Latencies (s) of ``hits`` hits to every client; and the bytes of one update's (log, state) messages."""
    latencies: list[float] = []
    log_size = state_size = 0
    for i in range(hits):
        t0 = time.perf_counter()
        hit = pads.inject(1 + i % pads.pad_count, "slap", 0.8)

        # A substring test, not a JSON parse: the measuring thread must not slow the readers.
        def mine(m: Any, needle: str = f'"at_us":{hit.at_us}') -> bool:
            return m.event == "state" and needle in m.data

        arrivals = _wait_all(clients, mine)
        latencies += [t - t0 for t in arrivals]
    # The size of one real update on the wire, for the baseline's payload.
    probe = clients[0]
    hit = pads.inject(1, "slap", 0.8)
    messages = probe.until(lambda m: m.event == "state" and m.json()["recent_hits"][-1]["at_us"] == hit.at_us, timeout=WAIT_S)
    for m in messages:
        if m.event == "log":
            log_size += _wire_size(m)
        elif m.event == "state":
            state_size += _wire_size(m)
    for client in clients[1:]:
        client.until(lambda m: m.event == "state" and m.json()["recent_hits"][-1]["at_us"] == hit.at_us, timeout=WAIT_S)
    return latencies, (log_size, state_size)


def _message(head: str, size: int) -> bytes:
    start = head.encode()
    return start + b"x" * max(1, size - len(start) - 2) + b"\n\n"


def measure_bare(bare: BareSse, clients: list[SseClient], hits: int, sizes: tuple[int, int], start_id: int,
                 same_messages: bool = True) -> list[float]:
    """Latencies (s) of ``hits`` pushes to every client, until its ``state`` message has arrived.

    ``same_messages``: a ``log`` message (with the id) and a ``state`` message of the real
    update's sizes, in one write; else one message of their total size.
    """
    latencies: list[float] = []
    log_size, state_size = sizes
    for i in range(hits):
        ident = str(start_id + i)
        if same_messages:
            payload = _message(f"id: {ident}\nevent: log\ndata: ", log_size) + _message("event: state\ndata: ", state_size)
        else:
            payload = _message(f"id: {ident}\nevent: state\ndata: ", log_size + state_size)
        t0 = time.perf_counter()
        bare.push(payload)
        arrivals = []
        for client in clients:
            message = client.until(lambda m, ident=ident: m.id == ident, timeout=WAIT_S)[-1]
            if same_messages:  # the update is there once its state message is
                message = client.until(lambda m: m.event == "state", timeout=WAIT_S)[-1]
            arrivals.append(message.received)
        latencies += [t - t0 for t in arrivals]
    return latencies


def main() -> Report:
    """Run the benchmark and write bench/results/latency.{json,txt}."""
    logging.getLogger("waitress").setLevel(logging.ERROR)
    rounds = 20 if is_quick() else 60
    per_round = 5
    report = Report("latency", params={"clients": CLIENTS, "hits": rounds * per_round, "rounds": rounds})

    with tempfile.TemporaryDirectory(prefix="tabletop-bench-") as tmp:
        data = Path(tmp)
        config = Config(data_dir=data, pads_count=4, server_pin="1234")
        store = EventStore(config.database_path)
        pads = SimulatedPads(pad_count=4)
        service = TableService(store, pads, config)
        service.start()
        app = create_app({"DATA_DIR": data, "SSE_KEEPALIVE_S": 15.0}, service=service, config=config)
        real_server, real_thread = _serve(app, threads=CLIENTS + 8)
        bare = BareSse()
        bare_server, bare_thread = _serve(bare.app, threads=CLIENTS + 8)
        real_clients = _connect(real_server.effective_port, CLIENTS)
        bare_clients = _connect(bare_server.effective_port, CLIENTS)
        try:
            # Warm up both paths (imports, SQLite pages, thread pools).
            _, size = measure_real(real_server.effective_port, pads, real_clients, 10)
            measure_bare(bare, bare_clients, 10, size, 1_000_000)
            measure_bare(bare, bare_clients, 10, size, 1_500_000, same_messages=False)
            real: list[float] = []
            base: list[float] = []
            base_one: list[float] = []
            blocks: list[tuple[list[float], list[float]]] = []
            for r in range(rounds):  # interleaved in small blocks, so drift and noise hit all alike
                lat, size = measure_real(real_server.effective_port, pads, real_clients, per_round)
                lat_bare = measure_bare(bare, bare_clients, per_round, size, 2_000_000 + r * per_round)
                base_one += measure_bare(bare, bare_clients, per_round, size, 3_000_000 + r * per_round,
                                         same_messages=False)
                real += lat
                base += lat_bare
                if r % BLOCK_ROUNDS == 0:
                    blocks.append(([], []))
                blocks[-1][0].extend(lat)
                blocks[-1][1].extend(lat_bare)
        finally:
            for c in real_clients + bare_clients:
                c.close()
            table_context(app).stopping.set()
            bare.stop()
            _shutdown(real_server, real_thread)
            _shutdown(bare_server, bare_thread)
            service.stop()
            store.close()

    ms = [x * 1000 for x in real]
    base_ms = [x * 1000 for x in base]
    report.params["update_bytes"] = sum(size)
    report.params["log_bytes"], report.params["state_bytes"] = size
    real_median = report.series("hit_to_phone_ms", ms, "ms", "hit into the pad queue -> state at each SSE client", (99,))
    base_median = report.series("bare_push_ms", base_ms, "ms",
                                "bare Flask+waitress SSE push of the same messages (log + state, same sizes)", (99,))
    one_ms = [x * 1000 for x in base_one]
    one_median = report.series("bare_push_one_message_ms", one_ms, "ms",
                               "bare push of the same bytes as one message (the earlier baseline)", (99,))
    report.ratio("p99_ratio", report.figures["hit_to_phone_ms_p99"]["value"], report.figures["bare_push_ms_p99"]["value"],
                 "p99 hit-to-phone / p99 bare push", target="<= 1.5")
    report.ratio("median_ratio", real_median, base_median, "median hit-to-phone / median bare push")
    report.ratio("p99_ratio_vs_one_message", report.figures["hit_to_phone_ms_p99"]["value"],
                 report.figures["bare_push_one_message_ms_p99"]["value"],
                 "p99 hit-to-phone / p99 one-message bare push (earlier definition)")
    report.ratio("median_ratio_vs_one_message", real_median, one_median,
                 "median hit-to-phone / median one-message bare push (earlier definition)")
    # Other processes on the machine make single tails jumpy; the median over blocks is steadier.
    block_ratios = [ratio(percentile(r, 99), percentile(b, 99)) for r, b in blocks if r and b]
    report.runs["p99_ratio_per_block"] = block_ratios
    report.ratio("p99_ratio_median_of_blocks", median(block_ratios), 1.0,
                 f"median over {len(block_ratios)} blocks of (p99 hit-to-phone / p99 bare push)", target="<= 1.5")
    report.notes.append("the real path includes a durable SQLite commit (WAL, synchronous=FULL) per hit")
    report.write()
    return report


if __name__ == "__main__":
    main()

"""A loopback TCP proxy that makes the network as bad as a crowded Wi-Fi: random delay and bursts of loss.

For rehearsing phone pads (tests, ``bench/bench_phone_pads.py``): point a
browser or a :class:`web.phone_client.SimulatedPhone` at the proxy's port
instead of the table's. Each chunk of bytes is held for a random delay in
its direction before it is passed on (the chunks of one message, read
within 2 ms of each other, share one delay); order within a connection is
kept (a TCP stream cannot reorder), so a chunk never leaves before the one
before it. Loss comes in bursts (a two-state Gilbert-Elliott chain per direction);
over TCP a lost segment is not gone but resent after the retransmission
timeout, so a chunk sent in a bad spell arrives ``loss_stall_ms`` late, once
for each loss.

The two directions have their own delay shapes (``up`` phone to table,
``down`` table to phone), so the network is asymmetric as Wi-Fi is.
"""

from __future__ import annotations

import heapq
import random
import socket
import threading
import time
from dataclasses import dataclass


#: Chunks read this soon after the one before are the same message (HTTP sends headers and body apart):
#: they share its delay, so a message is delayed once, not by the longest of its chunks' delays.
SAME_MESSAGE_S = 0.002


@dataclass
class Delay:
    """One direction's delay: ``low_ms + (high_ms - low_ms) * u ** shape`` for u uniform in [0, 1).

    ``shape`` 1 is uniform; above 1 most chunks are near ``low_ms`` with a tail
    up to ``high_ms`` (Wi-Fi's usual picture).
    """

    low_ms: float = 5.0
    high_ms: float = 80.0
    shape: float = 1.0

    def draw(self, rng: random.Random) -> float:
        """One delay, in seconds."""
        share: float = rng.random() ** self.shape
        return (self.low_ms + (self.high_ms - self.low_ms) * share) / 1000.0


@dataclass
class LossBursts:
    """Bursty loss: from good to bad with ``p_enter``, from bad back with ``p_leave``, per chunk;
    a chunk in a bad spell is resent after ``stall_ms`` (TCP's retransmission timeout)."""

    p_enter: float = 0.02
    p_leave: float = 0.3
    stall_ms: float = 250.0


class _Direction:
    """One direction's state: its delay, loss chain and a random source (own lock: pumps share it)."""

    def __init__(self, delay: Delay, loss: LossBursts | None, rng: random.Random) -> None:
        self.delay = delay
        self.loss = loss
        self.rng = rng
        self.bad = False
        self.extra_ms = 0.0
        self.lock = threading.Lock()
        self.stalls = 0

    def hold_s(self) -> float:
        with self.lock:
            held = self.delay.draw(self.rng) + self.extra_ms / 1000.0
            if self.loss is not None:
                self.bad = self.rng.random() >= self.loss.p_leave if self.bad else self.rng.random() < self.loss.p_enter
                if self.bad:
                    self.stalls += 1
                    held += self.loss.stall_ms / 1000.0
            return held


class DelayProxy:
    """Listens on 127.0.0.1 (a free port, ``.port``) and forwards to ``target_port`` through bad weather.

    Args:
        target_port: the table's port on 127.0.0.1.
        up, down: delay of each direction (default 5 to 80 ms, uniform).
        loss: loss bursts, the same chain shape both ways (None: no loss).
        seed: for the random delays.

    ``set_extra_up_ms(ms)`` adds a fixed delay phone-to-table from now on (a
    test slowing one phone's hits down). ``stop()`` closes everything.
    """

    def __init__(self, target_port: int, up: Delay | None = None, down: Delay | None = None,
                 loss: LossBursts | None = None, seed: int = 17) -> None:
        rng = random.Random(seed)
        self.target_port = target_port
        self.up = _Direction(up or Delay(), loss, random.Random(rng.random()))
        self.down = _Direction(down or Delay(), loss, random.Random(rng.random()))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="delay-proxy", daemon=True)
        self.connections = 0

    def start(self) -> "DelayProxy":
        """Begin accepting connections."""
        self._thread.start()
        return self

    def set_extra_up_ms(self, ms: float) -> None:
        """Hold every chunk phone-to-table this much longer, from now on."""
        with self.up.lock:
            self.up.extra_ms = ms

    @property
    def stalls(self) -> int:
        """Chunks that fell into a loss burst, both ways."""
        return self.up.stalls + self.down.stalls

    def stop(self) -> None:
        """Close the listener and every connection."""
        self._stopping.set()
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self) -> "DelayProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, server]
                self.connections += 1
            for src, dst, way in ((client, server, self.up), (server, client, self.down)):
                threading.Thread(target=self._pump, args=(src, dst, way), daemon=True, name="delay-proxy-pump").start()

    def _pump(self, src: socket.socket, dst: socket.socket, way: _Direction) -> None:
        """Read chunks from ``src`` and pass each on after its hold, in order (a sender thread does the waiting)."""
        queue: list[tuple[float, int, bytes]] = []
        cond = threading.Condition()
        state = {"last": 0.0, "read": -1.0, "n": 0, "closed": False}

        def sender() -> None:
            while True:
                with cond:
                    while not queue and not state["closed"]:
                        cond.wait()
                    if not queue:
                        break
                    due, _, data = queue[0]
                    wait = due - time.monotonic()
                    if wait > 0:
                        cond.wait(wait)
                        continue
                    heapq.heappop(queue)
                try:
                    if data:
                        dst.sendall(data)
                    else:
                        dst.shutdown(socket.SHUT_WR)
                except OSError:
                    break

        t = threading.Thread(target=sender, daemon=True, name="delay-proxy-send")
        t.start()
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            with cond:
                now = time.monotonic()
                if now - float(state["read"]) < SAME_MESSAGE_S:
                    due = float(state["last"])  # the rest of the same message (headers, then body): its delay
                else:
                    due = max(now + way.hold_s(), float(state["last"]))  # never overtake the chunk before
                state["last"], state["read"] = due, now
                state["n"] = int(state["n"]) + 1
                heapq.heappush(queue, (due, int(state["n"]), data))
                if not data:
                    state["closed"] = True
                cond.notify()
            if not data:
                break
        t.join(timeout=30)

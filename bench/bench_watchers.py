"""Watchers cannot starve the table: 200 live streams from many addresses while 10 phones write.

Issue 13, item 2. ``tabletop serve --pads sim`` runs as a subprocess with the
default ``server.threads`` (48). Two phases on the same server, in one run:

1. **Baseline**: 10 writers and a health/page poller, no watchers.
2. **Loaded**: the same writers and poller, plus 200 watchers (``GET
   /api/events``) from 50 loopback addresses (127.0.1.x, 4 each), started
   together. Watchers the table does not admit get ``503`` with
   ``Retry-After`` and try again after it, as long as the phase lasts (as a
   phone's page does); admitted ones stay connected to the end.

Each writer is a trusted phone on its own address and keep-alive connection,
changing its player's colour every ``WRITE_INTERVAL_S`` (``POST
/api/command``, answered once the event is durably logged). The poller asks
``GET /api/health`` every 0.1 s and ``GET /screen`` every 0.5 s.

Reported: failed writes (must be 0), write and health latency (median, p99)
in both phases and their ratios (loaded / baseline), how many watchers were
admitted and refused, how quickly a refusal came, and whether every admitted
watcher received every event logged while it watched (no gap, no duplicate).

``BENCH_SERVER_ROOT=/path/to/another/checkout`` runs that checkout's server
instead (e.g. the code before this change, to see the starvation).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import Report, is_quick, median, stop_process
from web.json_client import JsonClient

REPO = Path(__file__).resolve().parent.parent
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")
PIN = "24680"
WATCHERS = 200
ADDRESSES = 50
WRITERS = 10
WRITE_INTERVAL_S = 0.2
HEALTH_INTERVAL_S = 0.1
PAGE_INTERVAL_S = 0.5
#: A request slower than this counts as failed (it only bounds a hang).
REQUEST_TIMEOUT_S = 10.0
COLOURS = ("#e4572e", "#29335c")


class Phone(JsonClient):
    """A phone on the table's Wi-Fi: a JSON client from its own address."""

    def __init__(self, port: int, source: str) -> None:
        super().__init__(port, source=source, timeout=REQUEST_TIMEOUT_S, keep_alive=True)


class Load:
    """Writers and the health/page poller for one phase; results per phase."""

    def __init__(self, port: int, writers: list[tuple[Phone, int]], poller: Phone) -> None:
        self.port = port
        self.writers = writers
        self.poller = poller
        self.stop = threading.Event()
        self.writes: list[float] = []
        self.write_failures: list[str] = []
        self.health: list[float] = []
        self.health_failures: list[str] = []
        self.pages: list[float] = []
        self.page_failures: list[str] = []
        self.last_seq = 0
        self._lock = threading.Lock()

    def _write_loop(self, phone: Phone, player: int) -> None:
        n = 0
        next_at = time.perf_counter()
        while not self.stop.is_set():
            n += 1
            t0 = time.perf_counter()
            try:
                status, _, body = phone.call("POST", "/api/command",
                                          {"name": "update_player", "args": {"player": player, "colour": COLOURS[n % 2]}})
            except (OSError, http.client.HTTPException) as exc:
                status, body = 0, repr(exc)
            took = time.perf_counter() - t0
            with self._lock:
                if status == 200:
                    self.writes.append(took)
                    self.last_seq = max(self.last_seq, int(body["seq"]))
                else:
                    self.write_failures.append(f"{status} {str(body)[:120]}")
            next_at += WRITE_INTERVAL_S
            self.stop.wait(max(0.0, next_at - time.perf_counter()))

    def _timed_get(self, path: str, times: list[float], failures: list[str]) -> None:
        """One GET on the poller's connection: its time if 200, else what went wrong."""
        t0 = time.perf_counter()
        try:
            status, _, _ = self.poller.call("GET", path)
        except (OSError, http.client.HTTPException) as exc:
            failures.append(repr(exc))
            return
        if status == 200:
            times.append(time.perf_counter() - t0)
        else:
            failures.append(str(status))

    def _poll_loop(self) -> None:
        next_page = time.perf_counter()
        while not self.stop.is_set():
            self._timed_get("/api/health", self.health, self.health_failures)
            if time.perf_counter() >= next_page:
                next_page += PAGE_INTERVAL_S
                self._timed_get("/screen", self.pages, self.page_failures)
            self.stop.wait(HEALTH_INTERVAL_S)

    def run(self, seconds: float) -> None:
        threads = [threading.Thread(target=self._write_loop, args=w, daemon=True) for w in self.writers]
        threads.append(threading.Thread(target=self._poll_loop, daemon=True))
        for t in threads:
            t.start()
        self.stop.wait(seconds)
        self.stop.set()
        for t in threads:
            t.join(timeout=REQUEST_TIMEOUT_S * 2)


class Watcher(threading.Thread):
    """One ``GET /api/events`` client from ``source``; retries after ``Retry-After`` while refused."""

    def __init__(self, port: int, source: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.source = source
        self.stop_event = stop
        self.admitted = False
        self.refusals: list[float] = []
        self.retry_after: list[int] = []
        self.errors: list[str] = []
        self.start_seq: int | None = None
        self.ids: list[int] = []
        self.sock: socket.socket | None = None

    def run(self) -> None:
        while not self.stop_event.is_set() and not self.admitted:
            t0 = time.perf_counter()
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=REQUEST_TIMEOUT_S,
                                                source_address=(self.source, 0))
            except OSError as exc:
                self.errors.append(repr(exc))
                self.stop_event.wait(1.0)
                continue
            self.sock = sock
            try:
                sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
                reader = sock.makefile("rb")
                status_line = reader.readline()
                headers: dict[str, str] = {}
                while True:
                    line = reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    key, _, value = line.decode("latin-1").partition(":")
                    headers[key.strip().lower()] = value.strip()
                status = int(status_line.split()[1]) if status_line else 0
            except (OSError, ValueError, IndexError) as exc:
                self.errors.append(repr(exc))
                sock.close()
                self.stop_event.wait(1.0)
                continue
            if status == 200:
                self.admitted = True
                sock.settimeout(None)
                self._read(reader)
                return
            self.refusals.append(time.perf_counter() - t0)
            wait = int(headers.get("retry-after", "5") or 5)
            self.retry_after.append(wait)
            sock.close()
            self.stop_event.wait(wait)

    def _read(self, reader: Any) -> None:
        """Record the seq of the first state and every log id (chunked framing lines are skipped)."""
        state_next = False
        try:
            for raw in reader:
                if raw.startswith(b"id: "):
                    self.ids.append(int(raw[4:]))
                elif raw.startswith(b"event: state"):
                    state_next = self.start_seq is None
                elif state_next and raw.startswith(b"data: "):
                    self.start_seq = int(json.loads(raw[6:])["seq"])
                    state_next = False
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()


def _start_server(tmp: Path) -> tuple[subprocess.Popen, int]:
    root = Path(os.environ.get("BENCH_SERVER_ROOT") or REPO)
    config = tmp / "config.toml"
    config.write_text(f'[server]\npin = "{PIN}"\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion.cli", "serve", "--pads", "sim", "--host", "127.0.0.1", "--port", "0",
         "--data", str(tmp / "data"), "--config", str(config), "--no-qr"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(root)},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        match = URL.search(line)
        if match:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
            return proc, int(match.group(1))
    raise RuntimeError("tabletop serve printed no address")


def _ms(values: list[float]) -> list[float]:
    return [v * 1000 for v in values]


def main() -> Report:
    """Run the benchmark and write bench/results/watchers.{json,txt}."""
    baseline_s, loaded_s = (5.0, 15.0) if is_quick() else (15.0, 60.0)
    report = Report("watchers", params={
        "watchers": WATCHERS, "addresses": ADDRESSES, "writers": WRITERS, "write_interval_s": WRITE_INTERVAL_S,
        "baseline_s": baseline_s, "loaded_s": loaded_s, "server_threads": 48,
        "server_root": os.environ.get("BENCH_SERVER_ROOT") or "this checkout",
    })
    with tempfile.TemporaryDirectory(prefix="tabletop-watchers-") as tmp_name:
        proc, port = _start_server(Path(tmp_name))
        watchers: list[Watcher] = []
        try:
            writers = []
            for i in range(WRITERS):
                phone = Phone(port, f"127.0.200.{i + 1}")
                phone.login(PIN)
                status, _, body = phone.call("POST", "/api/command", {"name": "add_player", "args": {"name": f"Writer {i + 1}"}})
                assert status == 200, body
                writers.append((phone, int(body["events"][0]["data"]["id"])))
            poller = Phone(port, "127.0.201.1")

            base = Load(port, writers, poller)
            base.run(baseline_s)

            stop_watchers = threading.Event()
            watchers = [Watcher(port, f"127.0.1.{1 + i % ADDRESSES}", stop_watchers) for i in range(WATCHERS)]
            for w in watchers:
                w.start()
            loaded = Load(port, writers, poller)
            loaded.run(loaded_s)
            stop_watchers.set()
            final_seq = loaded.last_seq
            # Let the last events reach every admitted watcher (bounded), then hang up.
            admitted = [w for w in watchers if w.admitted]
            end = time.monotonic() + 30
            while time.monotonic() < end and any(not w.ids or w.ids[-1] < final_seq for w in admitted):
                time.sleep(0.1)
        finally:
            for w in watchers:
                w.close()
            stop_process(proc, timeout=30)

    complete = 0
    gaps = 0
    for w in admitted:
        expected = list(range((w.start_seq or 0) + 1, final_seq + 1))
        seen = [i for i in w.ids if i <= final_seq]
        if seen == expected:
            complete += 1
        else:
            gaps += 1
    refusals = [r for w in watchers for r in w.refusals]
    first_refused = sum(1 for w in watchers if w.refusals)

    report.figure("failed_writes_baseline", len(base.write_failures), "writes", "writes that failed, no watchers")
    report.figure("failed_writes_loaded", len(loaded.write_failures), "writes", "writes that failed among 200 watchers (must be 0)")
    report.figure("writes_loaded", len(loaded.writes), "writes", "writes answered 200 among 200 watchers")
    report.series("write_ms_baseline", _ms(base.writes), "ms", "POST /api/command, no watchers", (99,))
    report.series("write_ms_loaded", _ms(loaded.writes), "ms", "POST /api/command among 200 watchers", (99,))
    report.series("health_ms_baseline", _ms(base.health), "ms", "GET /api/health, no watchers", (99,))
    report.series("health_ms_loaded", _ms(loaded.health), "ms", "GET /api/health among 200 watchers", (99,))
    report.series("page_ms_loaded", _ms(loaded.pages), "ms", "GET /screen among 200 watchers", (99,))
    report.figure("failed_health_loaded", len(loaded.health_failures) + len(loaded.page_failures), "requests",
                  "health and page requests that failed among 200 watchers (must be 0)")
    report.figure("watchers_admitted", len(admitted), "streams", "watchers admitted (of 200)")
    report.figure("watchers_refused", first_refused, "streams", "watchers refused with 503 + Retry-After, retrying after it")
    report.series("refusal_ms", _ms(refusals), "ms", "connect to a 503 refusal, all attempts", (99,))
    retries = [r for w in watchers for r in w.refusals[1:]]
    report.series("refusal_ms_retries", _ms(retries), "ms", "connect to a 503 refusal, after the first burst", (99,))
    report.figure("watchers_complete", complete, "streams", "admitted watchers that got every event, in order, no duplicate")
    report.figure("watchers_with_gaps", gaps, "streams", "admitted watchers that missed or repeated an event (must be 0)")
    report.figure("events_per_watcher", max(0, final_seq - min((w.start_seq or 0) for w in admitted)) if admitted else 0,
                  "events", "events logged while the watchers watched")
    report.figure("watcher_errors", sum(len(w.errors) for w in watchers), "errors", "watcher connections that failed outright")
    report.ratio("write_p99_loaded_vs_baseline", report.figures["write_ms_loaded_p99"]["value"],
                 report.figures["write_ms_baseline_p99"]["value"], "write p99 among 200 watchers / without")
    report.ratio("health_p99_loaded_vs_baseline", report.figures["health_ms_loaded_p99"]["value"],
                 report.figures["health_ms_baseline_p99"]["value"], "health p99 among 200 watchers / without")
    report.ratio("write_median_loaded_vs_baseline", median(loaded.writes), median(base.writes),
                 "write median among 200 watchers / without")
    errors = sorted({e.split("(")[0] + "(" + e.split("(")[1][:40] for w in watchers for e in w.errors if "(" in e})
    if errors:
        report.notes.append(f"kinds of watcher errors: {errors[:5]}")
    if loaded.write_failures:
        report.notes.append(f"first write failures: {loaded.write_failures[:3]}")
    report.notes.append(f"load average at the end: {os.getloadavg()[0]:.1f} (2-core machine shared with other work)")
    report.write()
    return report


if __name__ == "__main__":  # pragma: no cover
    main()

"""Peak memory of ``tabletop serve``: after start, and after 10,000 hits through the API.

``tabletop serve --pads sim`` runs as a subprocess with a fresh data directory;
its resident set (VmRSS) and peak (VmHWM) are read from /proc. Four players
are seated and one SSE client watches, then 10,000 hits are posted to
``/api/sim/hit`` over one keep-alive connection, and the hits are waited for
in the log. Targets: under 60 MB resident, growth under 5 MB.

The baseline, measured in the same run: a bare Python interpreter that
imports Flask and waitress (the floor any Flask+waitress service starts from).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import Report, is_quick, mb, proc_kb, stop_process
from web.json_client import JsonClient
from web.sse_client import SseClient

REPO = Path(__file__).resolve().parent.parent
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")
PIN = "2580"


def _baseline_rss_kb() -> int:
    """RSS of a bare interpreter with Flask and waitress imported."""
    code = "import flask, waitress, sys; sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.readline()"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc_kb(proc.pid, "VmRSS")
    finally:
        proc.kill()
        proc.wait()


def main() -> Report:
    """Run the benchmark and write bench/results/memory.{json,txt}."""
    hits = 2_000 if is_quick() else 10_000
    report = Report("memory", params={"hits": hits, "sse_clients": 1, "players": 4})
    with tempfile.TemporaryDirectory(prefix="tabletop-mem-") as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text(f'[server]\npin = "{PIN}"\nthreads = 16\n')
        proc = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "serve", "--pads", "sim", "--host", "127.0.0.1", "--port", "0",
             "--data", str(Path(tmp) / "data"), "--config", str(config), "--no-qr"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert proc.stdout is not None
            port = 0
            for line in proc.stdout:
                match = URL.search(line)
                if match:
                    port = int(match.group(1))
                    break
            if not port:
                raise RuntimeError("tabletop serve printed no address")
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # drain

            api = JsonClient(port, timeout=60, keep_alive=True).login(PIN)
            for i, name in enumerate(("Ann", "Bob", "Cy", "Dee"), start=1):
                assert api.call("POST", "/api/command", {"name": "add_player", "args": {"name": name, "pad": i}})[0] == 200
            watcher = SseClient(port)
            watcher.until(lambda m: m.event == "state", timeout=60)
            time.sleep(1.0)  # let start-up allocations settle
            start_rss = proc_kb(proc.pid, "VmRSS")
            start_peak = proc_kb(proc.pid, "VmHWM")

            _, _, state = api.call("GET", "/api/state")
            first_seq = state["seq"]
            t0 = time.perf_counter()
            for i in range(hits):
                status, _, body = api.call("POST", "/api/sim/hit", {"pad": 1 + i % 4, "kind": "slap", "strength": 0.8})
                if status != 202:
                    raise RuntimeError(f"hit {i} refused: {status} {body}")
            deadline = time.monotonic() + 300
            while api.call("GET", "/api/state")[2]["seq"] < first_seq + hits:
                if time.monotonic() > deadline:
                    raise RuntimeError("the hits were not all logged within 300 s")
                time.sleep(0.05)
            elapsed = time.perf_counter() - t0
            watcher.close()
            time.sleep(1.0)
            end_rss = proc_kb(proc.pid, "VmRSS")
            end_peak = proc_kb(proc.pid, "VmHWM")
        finally:
            stop_process(proc, timeout=60)
    base = _baseline_rss_kb()
    report.figure("rss_after_start_mb", mb(start_rss), "MB", "resident after start, 4 players, 1 SSE client")
    report.figure("peak_after_start_mb", mb(start_peak), "MB", "peak resident (VmHWM) after start")
    report.figure("rss_after_hits_mb", mb(end_rss), "MB", f"resident after {hits} hits via /api/sim/hit  [target < 60]")
    report.figure("peak_after_hits_mb", mb(end_peak), "MB", f"peak resident (VmHWM) after {hits} hits  [target < 60]")
    report.figure("growth_mb", mb(end_rss - start_rss), "MB", "resident growth over the hits  [target < 5]")
    report.figure("api_hits_per_s", hits / elapsed, "hits/s", "hits posted one by one over one keep-alive connection, until logged")
    report.figure("baseline_flask_waitress_mb", mb(base), "MB", "bare interpreter with flask + waitress imported")
    report.ratio("rss_vs_bare_flask", end_rss, base, "resident after hits / bare flask+waitress interpreter")
    report.write()
    return report


if __name__ == "__main__":
    main()

"""Child process for the SIGKILL test: plays a table as fast as it can and prints what was acknowledged.

Usage: ``python crash_child.py DB_PATH``. Every line on stdout is ``ack <seq> <type>``
for an event the service has durably committed (a command's reply, or an update
published after the commit), flushed at once so the parent sees it before the kill.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from core.errors import RuleError  # noqa: E402
from companion.service import TableService  # noqa: E402
from companion.store import EventStore  # noqa: E402
from hardware.sim import SimulatedPads  # noqa: E402
from helpers.counter_game import GAMES_FOR_TESTS  # noqa: E402

_out = threading.Lock()


def ack(events: list[dict]) -> None:
    with _out:
        for e in events:
            sys.stdout.write(f"ack {e['seq']} {e['type']}\n")
        sys.stdout.flush()


def main() -> None:
    store = EventStore(sys.argv[1])
    pads = SimulatedPads(pad_count=4)
    service = TableService(store, pads, games=GAMES_FOR_TESTS)
    service.start()
    sub = service.subscribe()

    def watch() -> None:
        while True:
            update = sub.get(timeout=60)
            if update is None:
                return
            ack(update.events)

    def slap() -> None:
        # hits keep arriving on their own thread, so the kill lands with work in flight
        pad = 0
        while True:
            pad = pad % 4 + 1
            pads.inject(pad)
            time.sleep(0.0002)

    threading.Thread(target=watch, daemon=True).start()
    threading.Thread(target=slap, daemon=True).start()
    if service.snapshot()[1]["game"] is None:
        for name, pad in (("Ann", 1), ("Bob", 2), ("Cy", 3)):
            try:
                ack(service.submit("add_player", {"name": name, "pad": pad})["events"])
            except RuleError:
                pass  # seated before an earlier kill
        ack(service.submit("start_game", {"kind": "counter", "settings": {"target": 10**9}})["events"])
    i = 0
    while True:
        i += 1
        for pad in (1, 2, 3, 4):
            pads.inject(pad)
        reply = service.submit_nowait("add", {"n": 1 + i % 7})
        if i % 10 == 0:
            service.submit_nowait("set_timer", {"after_us": 2_000})
        if i % 25 == 0:
            service.submit_nowait("undo")
        ack(reply.wait(30)["events"])


if __name__ == "__main__":
    main()

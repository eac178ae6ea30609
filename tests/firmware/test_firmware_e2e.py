"""End to end: the real firmware image in simavr, its UART on a pseudo-terminal,
read by the host's own serial pad box source (hardware/padbox.py) through
pyserial, exactly as a Raspberry Pi reads a Nano on /dev/ttyUSB0; and the
table service judging a Taco Hat Cake Gift Pizza window from those hits.
"""

from __future__ import annotations

import http.cookiejar
import json
import queue
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from helpers.firmware import firmware, simtools  # noqa: F401
from helpers.procs import stop_process
from helpers.serve import Served

from core.hits import HitKind, PadHit
from hardware.padbox import SerialPadBox

pytestmark = [pytest.mark.firmware, pytest.mark.slow]


def start_board(firmware, name: str):
    """The harness running a scenario in real time on a pseudo-terminal; yields (path, scenario)."""
    scenario = simtools.SCENARIOS / f"{name}.scn"
    proc = subprocess.Popen(
        [str(firmware.harness), "--pty", str(firmware.elf), str(scenario)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()  # "PTY /dev/pts/N", printed before the board starts
        assert line.startswith("PTY "), f"harness said {line!r}: {proc.stderr.read() if proc.poll() is not None else ''}"
        yield line.split()[1], simtools.Scenario.load(scenario)
    finally:
        stop_process(proc, timeout=10)


@pytest.fixture
def simulated_board(firmware):
    """The board running e2e_game.scn."""
    yield from start_board(firmware, "e2e_game")


@pytest.fixture
def simulated_taco_board(firmware):
    """The board running e2e_taco.scn."""
    yield from start_board(firmware, "e2e_taco")


def test_serial_pad_box_reads_the_simulated_firmware(simulated_board) -> None:
    """SerialPadBox connects (HELLO), and the firmware's hits arrive as PadHits
    with the box's resolution, the right kinds, and onsets as far apart as the truth."""
    port, scn = simulated_board
    box = SerialPadBox(port=port, hello_timeout_s=10.0, silence_timeout_s=10.0)
    box.start()
    try:
        assert box.wait_connected(30.0), f"no HELLO from the simulated board on {port}: {box.status()}"
        hits: list[PadHit] = []
        deadline = time.monotonic() + 60.0  # bounds a hang only; the scenario takes ~1.5 s
        while len(hits) < 3 and time.monotonic() < deadline:
            try:
                item = box.queue.get(timeout=0.5)
            except queue.Empty:
                continue
            if isinstance(item, PadHit):
                hits.append(item)
        status = box.status()
    finally:
        box.stop()
    assert [(h.pad, h.kind) for h in hits] == [(1, HitKind.SLAP), (3, HitKind.SLAP), (2, HitKind.TOUCH)], hits
    resolution = hits[0].resolution_us
    assert 50 <= resolution <= 200, f"resolution from HELLO: {resolution} us"
    expected = [e for e in scn.events if e.expect != "none"]
    truth = [float(e.t_us) for e in expected]  # the moments of contact
    # Same clock for every pad: the gaps between onsets are the true gaps.
    for k in (1, 2):
        measured = hits[k].at_us - hits[0].at_us
        true_gap = truth[k] - truth[0]
        assert abs(measured - true_gap) <= 2 * resolution, f"gap {k}: {measured} us measured, {true_gap:.0f} us true"
    assert status["firmware"] == simtools.firmware_version() and status["mode"] == "piezo" and status["box_pads"] == 8, status
    refused = {k: v for k, v in status["counters"].items() if k not in ("bytes", "lines", "hits") and v}
    assert not refused, f"the host refused or lost firmware lines: {refused}"


def test_table_service_judges_taco_from_the_simulated_firmware(simulated_taco_board, tmp_path: Path) -> None:
    """The real table service with the serial source on the simulated board:
    a due Taco card, Bob slaps (pad 2), Ann 80 ms later (pad 1), each slap
    shaking the other pad. The verdict: Bob first, Ann last, 80 ms behind,
    Ann takes the pile; no crosstalk hit reached the game."""
    from companion.games.taco import TacoGame
    from companion.service import TableService
    from companion.store import EventStore

    port, _ = simulated_taco_board
    box = SerialPadBox(port=port, hello_timeout_s=10.0, silence_timeout_s=10.0)
    store = EventStore(tmp_path / "log.sqlite3")
    service = TableService(store, box, games={"taco": TacoGame})
    service.start()
    try:
        assert box.wait_connected(30.0), f"no HELLO from the simulated board on {port}"
        for name, pad in (("Ann", 1), ("Bob", 2)):
            service.submit("add_player", {"name": name, "pad": pad})
        # An all-Taco deck: the first card is due at once; the window stays
        # open long enough for the scripted slaps at 6 s of board time.
        settings = {"deck": {"taco": 48}, "lead_in_ms": 0, "tempo_ms": 400, "timeout_ms": 15_000}
        service.submit("start_game", {"kind": "taco", "settings": settings})
        sub = service.subscribe()
        try:
            _, state = service.snapshot()
            deadline = time.monotonic() + 60.0  # bounds a hang only
            while not (state["game"] and state["game"]["view"]["verdict"]) and time.monotonic() < deadline:
                update = sub.get(timeout=1.0)
                if update is not None:
                    state = update.state
        finally:
            sub.close()
        verdict = state["game"]["view"]["verdict"]
        assert verdict is not None, f"no verdict: {state['game']['view']}"
        order = verdict["order"]
        assert [e["player"] for e in order] == [2, 1], order
        assert verdict["taker"] == 1
        resolution_ms = box.resolution_us / 1000
        assert abs(order[1]["margin_ms"] - 80.0) <= 2 * resolution_ms + 0.1, order
        hits = [e for e in store.all_events() if e["type"] in ("slapped", "hit_ignored", "flinched")]
        assert [e["type"] for e in hits] == ["slapped", "slapped"], hits
    finally:
        service.stop()
        store.close()


class _Client:
    """A script's session with the table: cookie, CSRF token, PIN (docs/api.md)."""

    def __init__(self, port: int, pin: str) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.token = self.get("/api/session")["csrf_token"]
        self.post("/api/pin", {"pin": pin})

    def get(self, path: str) -> dict:
        with self.opener.open(self.base + path, timeout=30) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            self.base + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-CSRF-Token": self.token},
        )
        with self.opener.open(request, timeout=30) as response:
            return json.loads(response.read())


def test_tabletop_serve_judges_taco_from_the_simulated_firmware(simulated_taco_board, tmp_path: Path) -> None:
    """`tabletop serve --pads serial --serial-port <pty>` with the simulated board:
    players and a game set up over the real HTTP API, the verdict read back
    from it: Bob first, Ann last by 80 ms, Ann takes the pile."""
    port, _ = simulated_taco_board
    config = tmp_path / "config.toml"
    config.write_text('[server]\npin = "8642"\n[pads]\ncount = 8\n')
    served = Served(
        "--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path / "data"), "--config", str(config),
        "--pads", "serial", "--serial-port", port, "--no-qr",
    )
    try:
        client = _Client(served.wait_ready(), "8642")
        deadline = time.monotonic() + 60.0  # bounds a hang only
        while not client.get("/api/health")["pads"].get("connected") and time.monotonic() < deadline:
            time.sleep(0.1)
        health = client.get("/api/health")
        assert health["pads"].get("connected"), health
        for name, pad in (("Ann", 1), ("Bob", 2)):
            client.post("/api/command", {"name": "add_player", "args": {"name": name, "pad": pad}})
        settings = {"deck": {"taco": 48}, "lead_in_ms": 0, "tempo_ms": 400, "timeout_ms": 15_000}
        client.post("/api/command", {"name": "start_game", "args": {"kind": "taco", "settings": settings}})
        verdict = None
        while verdict is None and time.monotonic() < deadline:
            game = client.get("/api/state").get("game")
            verdict = game and game["view"]["verdict"]
            if verdict is None:
                time.sleep(0.2)
        assert verdict is not None, "no verdict from the served table"
        order = verdict["order"]
        assert [e["player"] for e in order] == [2, 1], order
        assert verdict["taker"] == 1
        assert abs(order[1]["margin_ms"] - 80.0) <= 0.5, order
    finally:
        assert served.stop() == 0, served.output

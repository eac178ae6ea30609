"""``tabletop serve`` as a real subprocess: it answers on its port and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from helpers.serve import REPO, Served, serving, sim_args, write_config

from web.sse_client import SseClient

pytestmark = pytest.mark.slow


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_config(tmp_path, pads=6)


@pytest.fixture
def served(tmp_path: Path, config_file: Path) -> Iterator[Served]:
    with serving(*sim_args(tmp_path / "data", config_file, qr=True)) as s:
        yield s


def get_json(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
        return json.loads(response.read())


def test_serve_answers_health_and_stops_cleanly_on_sigterm(served: Served, tmp_path: Path) -> None:
    health = get_json(served.port, "/api/health")
    assert health["status"] == "ok" and health["pads"]["source"] == "sim"
    assert get_json(served.port, "/api/state")["pads"]["count"] == 6
    assert "Table PIN: 8642" in served.output
    assert (tmp_path / "data" / "secret_key").exists()
    assert (tmp_path / "data" / "tabletop.sqlite3").exists()
    assert served.stop() == 0
    assert "Tabletop stopped." in served.output


def test_sigterm_with_an_open_sse_stream_still_exits_cleanly(served: Served) -> None:
    client = SseClient(served.port)
    try:
        assert client.until(lambda m: m.event == "state").pop().json()["seq"] >= 0
        assert served.stop() == 0
        assert "Tabletop stopped." in served.output
    finally:
        client.close()


def test_serve_prints_a_random_pin_and_a_qr_code(tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    s = Served("--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path / "d"), "--config", str(empty))
    try:
        port = s.wait_ready()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/screen", timeout=30) as response:
            screen = response.read().decode()
        assert s.stop() == 0
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
    pin = re.search(r"Table PIN: (\d{4})\s+\(random", s.output)
    assert pin, s.output
    assert pin.group(1) in screen  # the table screen on the Pi shows the same PIN
    assert "█" in s.output or "▀" in s.output  # the QR code


def test_serve_refuses_a_bad_config_with_a_clear_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[server]\npin = "12"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "companion.cli", "serve", "--config", str(bad), "--data", str(tmp_path / "d"), "--port", "0"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert "server.pin" in proc.stderr


def _serve_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from companion.cli import main

    code = main(["serve", "--no-qr", "--data", str(tmp_path / "d"), *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (("--port", "70000"), "--port 70000: expected 1 to 65535"),  # waitress would have wrapped it to 4464
        (("--port", "-1"), "--port -1: expected 1 to 65535"),
        (("--host", " "), "--host is empty"),
        (("--host", "999.1.1.1", "--port", "0"), "not an address of this machine"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               args: tuple[str, ...], message: str) -> None:
    code, err = _serve_in_process(tmp_path, capsys, *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_serve_names_a_port_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = _serve_in_process(tmp_path, capsys, "--host", "127.0.0.1", "--port", str(port))
    assert code == 2 and f"port {port}: another program" in err


def test_serve_refuses_unusable_data_dirs_and_binary_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("x")
    code, err = _serve_in_process(tmp_path, capsys, "--data", str(a_file / "sub"), "--port", "0")
    assert code == 2 and "cannot be used" in err
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(128, 256)))
    code, err = _serve_in_process(tmp_path, capsys, "--config", str(binary), "--port", "0")
    assert code == 2 and "not UTF-8 text" in err


def _all_events(port: int) -> tuple[list[dict], dict]:
    """Every logged event (the SSE backlog from 0) and the state after them."""
    client = SseClient(port, after=0)
    try:
        messages = client.until(lambda m: m.event == "state", timeout=60)
    finally:
        client.close()
    return [m.json() for m in messages if m.event == "log"], messages[-1].json()


def test_sigkill_mid_play_loses_nothing_acknowledged(tmp_path: Path, config_file: Path) -> None:
    from helpers.browser import HttpSession

    args = ("--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path / "data"), "--config", str(config_file))
    first = Served(*args)
    try:
        port = first.wait_ready()
        api = HttpSession(port)
        api.login("8642")
        acknowledged: dict[int, dict] = {}
        for name, pad in (("Ann", 1), ("Bob", 2), ("Cy", 3)):
            status, body = api.request("POST", "/api/command", {"name": "add_player", "args": {"name": name, "pad": pad}})
            assert status == 200, body
            acknowledged.update({e["seq"]: e for e in body["events"]})
        watcher = SseClient(port)
        watcher.until(lambda m: m.event == "state")
        for pad in (1, 2, 3, 1):
            assert api.request("POST", "/api/sim/hit", {"pad": pad})[0] == 202
        # A hit is acknowledged once it is on the stream (it is logged before it is published).
        while len([e for e in acknowledged.values() if e["type"] == "hit"]) < 4:
            message = watcher.next(timeout=30)
            if message.event == "log":
                event = message.json()
                acknowledged[event["seq"]] = event
        watcher.close()
        # More play in flight, then the power cut.
        for pad in (2, 3, 1, 2, 3):
            api.request("POST", "/api/sim/hit", {"pad": pad})
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=30)
    finally:
        if first.proc.poll() is None:
            first.proc.kill()

    second = Served(*args)
    try:
        port = second.wait_ready()
        events, state = _all_events(port)
        by_seq = {e["seq"]: e for e in events}
        for seq, event in acknowledged.items():
            assert by_seq.get(seq) == event, f"acknowledged event {seq} lost or changed"
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert state["seq"] == events[-1]["seq"]
        assert [(p["name"], p["pad"]) for p in state["players"]] == [("Ann", 1), ("Bob", 2), ("Cy", 3)]
        # The restarted table's state is a replay of its log.
        from companion.games import load_games
        from companion.table import fold

        replayed = fold(events, load_games(), pad_count=state["pads"]["count"]).view(state["pads"])
        replayed = json.loads(json.dumps(replayed))
        # games_available is the installed games, not the log: this test process may
        # hold other versions of them (other tests register or patch games).
        for key in state.keys() - {"games_available"}:
            assert replayed[key] == state[key], f"{key} differs after a replay of the log"
        assert second.stop() == 0
    finally:
        if second.proc.poll() is None:
            second.proc.kill()

"""``tabletop serve`` as a real subprocess: it answers on its port and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from web.sse_client import SseClient

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


class Served:
    """A running ``tabletop serve`` whose stdout is collected on a thread."""

    def __init__(self, *args: str, env_extra: dict[str, str] | None = None) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env_extra or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "serve", *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self.port_found = threading.Event()
        self.port = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            match = URL.search(line)
            if match and not self.port:
                self.port = int(match.group(1))
                self.port_found.set()

    def wait_ready(self) -> int:
        if not self.port_found.wait(60):
            self.proc.kill()
            raise AssertionError(f"serve printed no address: {''.join(self.lines)} {self.proc.stderr.read() if self.proc.stderr else ''}")
        return self.port

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(timeout=10)
        return code


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[server]\npin = "8642"\n[pads]\ncount = 6\n')
    return path


@pytest.fixture
def served(tmp_path: Path, config_file: Path) -> Iterator[Served]:
    s = Served("--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path / "data"), "--config", str(config_file), "--pads", "sim")
    try:
        s.wait_ready()
        yield s
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait(timeout=30)


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

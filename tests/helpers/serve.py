"""``tabletop serve`` as a real subprocess for tests: its stdout read on a thread for the address it prints."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
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
        """The port once serve printed its address (60 s bounds a hang: then killed and failed)."""
        if not self.port_found.wait(60):
            self.proc.kill()
            raise AssertionError(f"serve printed no address: {''.join(self.lines)} {self.proc.stderr.read() if self.proc.stderr else ''}")
        return self.port

    @property
    def output(self) -> str:
        """Everything serve printed on stdout so far."""
        return "".join(self.lines)

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; its exit code. Not ending within 60 s is a failure (killed, TimeoutExpired)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(timeout=10)
        return code

    def kill(self) -> None:
        """Kill it if it is still running (a test's cleanup after a failure)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def write_config(directory: Path, pin: str = "8642", pads: int = 4) -> Path:
    """A config file in ``directory`` with a fixed PIN and ``pads`` pads; its path."""
    path = directory / "config.toml"
    path.write_text(f'[server]\npin = "{pin}"\n[pads]\ncount = {pads}\n')
    return path


def sim_args(data: Path, config: Path, qr: bool = False) -> list[str]:
    """``tabletop serve`` arguments: simulated pads, loopback, any free port, ``data``, ``config``."""
    args = ["--pads", "sim", "--host", "127.0.0.1", "--port", "0", "--data", str(data), "--config", str(config)]
    return args if qr else [*args, "--no-qr"]


@contextmanager
def serving(*args: str) -> Iterator[Served]:
    """``tabletop serve *args`` once it printed its address; killed afterwards if it still runs."""
    served = Served(*args)
    try:
        served.wait_ready()
        yield served
    finally:
        served.kill()

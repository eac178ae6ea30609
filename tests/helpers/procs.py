"""Ending a test's child process: ask first, as systemd or Ctrl-C would; kill only what hangs."""

from __future__ import annotations

import signal
import subprocess


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
    """Send ``sig`` unless ``proc`` already ended, wait up to ``timeout`` s (bounds a hang), else kill; its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()

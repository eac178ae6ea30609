"""One table service per data directory: a second one exits at once, naming the first's PID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from companion.datalock import DataDirInUse, DataDirLock

from helpers.serve import REPO, Served, serving, sim_args, write_config


def test_a_second_lock_on_the_same_directory_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    first = DataDirLock(tmp_path).acquire()
    try:
        with pytest.raises(DataDirInUse, match=f"in use by another tabletop service \\(PID {os.getpid()}\\)") as info:
            DataDirLock(tmp_path).acquire()
        assert info.value.pid == os.getpid()
        assert (tmp_path / "lock").stat().st_mode & 0o077 == 0  # the user's alone
    finally:
        first.release()
    with DataDirLock(tmp_path) as again:  # released: free for the next service
        assert again.held


def test_the_lock_dies_with_its_process_even_by_sigkill(tmp_path: Path) -> None:
    code = "import sys, time; from companion.datalock import DataDirLock; DataDirLock(sys.argv[1]).acquire(); print('locked', flush=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        with pytest.raises(DataDirInUse, match=f"PID {child.pid}"):
            DataDirLock(tmp_path).acquire()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    with DataDirLock(tmp_path):  # the kernel dropped it: a stale lock file blocks nothing
        pass


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_config(tmp_path)


@pytest.fixture
def first(tmp_path: Path, config_file: Path) -> Iterator[Served]:
    with serving(*sim_args(tmp_path / "data", config_file)) as served:
        yield served


def health(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_a_second_service_on_the_same_data_directory_exits_at_once_naming_the_first(
        first: Served, tmp_path: Path, config_file: Path) -> None:
    log = tmp_path / "data" / "tabletop.sqlite3"
    before = log.stat().st_mtime_ns
    # No wait on the lock (LOCK_NB): the timeout only bounds a hang, it is no speed check.
    second = subprocess.run([sys.executable, "-m", "companion.cli", "serve", *sim_args(tmp_path / "data", config_file)],
                            cwd=REPO, capture_output=True, text=True, timeout=60)
    assert second.returncode == 2, (second.stdout, second.stderr)
    assert f"is in use by another tabletop service (PID {first.proc.pid})" in second.stderr
    assert "Traceback" not in second.stderr and "Tabletop is running" not in second.stdout
    assert log.stat().st_mtime_ns == before  # the second never opened the log
    assert first.proc.poll() is None and health(first.port)["status"] == "ok"

    # Once the first has stopped, the directory is free again.
    assert first.stop() == 0
    with serving(*sim_args(tmp_path / "data", config_file)) as third:
        assert health(third.port)["status"] == "ok"
        assert third.stop() == 0

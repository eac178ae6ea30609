"""A log that cannot be written (a full disk, a read-only file) is said, never hidden.

The full disk is SQLite's own SQLITE_FULL, made by capping the writer's
``max_page_count`` at the log's size (``EventStore.simulate_fault("full")``);
the read-only log is SQLite's SQLITE_READONLY (``query_only``) in process, and
a file or directory really mounted read-only (a private mount namespace made
with ``unshare``, which works as root too) for ``tabletop serve``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from core.errors import StoreError
from companion.service import TableService
from companion.store import ROOM_BYTES, EventStore, NewEvent

from helpers.browser import make_app, running_service, trust, wait_until
from helpers.serve import REPO


def fill_until_refused(store: EventStore) -> StoreError:
    """Append small events until the capped log refuses one; that error."""
    for i in range(2000):
        try:
            store.append([NewEvent("note", {"i": i, "pad": "x" * 200})])
        except StoreError as exc:
            return exc
    raise AssertionError("the capped log never filled up")


# ------------------------------------------------------------------ store ----
def test_a_full_disk_is_reported_as_such_not_as_a_failed_rollback(tmp_path: Path) -> None:
    with EventStore(tmp_path / "log.sqlite3") as store:
        store.simulate_fault("full")
        error = fill_until_refused(store)
        before = store.all_events()
        assert str(error).startswith("disk full: the event log cannot be written"), error
        assert "rollback" not in str(error).lower()
        assert store.problem is not None and store.problem.kind == "full"
        with pytest.raises(StoreError, match="^disk full"):
            store.append([NewEvent("note", {"pad": "y" * 4000})])
        assert store.all_events() == before  # all or nothing
        assert store.probe() is not None  # still no room
        store.simulate_fault(None)
        assert store.probe() is None and store.problem is None
        stored = store.append([NewEvent("note", {"after": True})])
        assert stored[0]["seq"] == before[-1]["seq"] + 1


def test_a_read_only_log_is_reported_as_such(tmp_path: Path) -> None:
    with EventStore(tmp_path / "log.sqlite3") as store:
        store.append([NewEvent("note", {})])
        store.simulate_fault("read_only")
        with pytest.raises(StoreError, match="^read-only: the event log .* cannot be written"):
            store.append([NewEvent("note", {})])
        assert store.probe() is not None and store.problem.kind == "read_only"
        store.simulate_fault(None)
        assert store.probe() is None
        assert [e["seq"] for e in store.append([NewEvent("note", {})])] == [2]


def test_a_log_on_a_disk_with_no_room_left_is_refused_at_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    EventStore(tmp_path / "log.sqlite3").close()
    real = os.statvfs

    class Full:
        def __init__(self, st: Any) -> None:
            self.f_frsize, self.f_bavail = st.f_frsize, (ROOM_BYTES // st.f_frsize) // 2

    monkeypatch.setattr(os, "statvfs", lambda p: Full(real(p)))
    with pytest.raises(StoreError, match="^disk full: .*The table was not started"):
        EventStore(tmp_path / "log.sqlite3")


# -------------------------------------------------------------- service/web --
@pytest.fixture
def service(service: TableService) -> TableService:
    """The shared service, checking a failed log again every 0.1 s."""
    service.log_retry_s = 0.1
    return service


@pytest.fixture
def client(client: FlaskClient) -> FlaskClient:
    """The shared client, with the PIN entered (its CSRF header on every request)."""
    client.environ_base["HTTP_X_CSRF_TOKEN"] = trust(client)["X-CSRF-Token"]
    return client


def add_player(client: FlaskClient, name: str) -> Any:
    return client.post("/api/command", json={"name": "add_player", "args": {"name": name}})


def fill_through_commands(client: FlaskClient) -> Any:
    """Send commands until one is refused; that response."""
    for i in range(400):
        response = add_player(client, f"P{i}") if i < 8 else client.post(
            "/api/command", json={"name": "update_player", "args": {"player": 1, "name": f"Q{i % 50}"}})
        if response.status_code != 200:
            return response
    raise AssertionError("the capped log never filled up")


def test_a_full_disk_is_said_by_commands_health_state_screen_and_hits_and_the_table_recovers(
        client: FlaskClient, service: TableService) -> None:
    assert client.get("/api/health").status_code == 200
    sub = service.subscribe()
    try:
        service.store.simulate_fault("full")
        refused = fill_through_commands(client)
        assert refused.status_code == 503
        assert refused.get_json()["error"].startswith("disk full: the event log cannot be written")
        assert "rollback" not in refused.get_json()["error"]
        seq = service.snapshot()[0]

        health = client.get("/api/health")
        body = health.get_json()
        assert health.status_code == 503 and body["status"] == "disk full"
        assert body["error"].startswith("disk full: the event log cannot be written")
        assert body["table"]["log_problem"]["kind"] == "full"

        state = client.get("/api/state").get_json()
        assert state["log_problem"]["kind"] == "full" and state["log_problem"]["message"].startswith("disk full")
        screen = client.get("/screen").get_data(as_text=True)
        assert "Nothing is being recorded. disk full: the event log cannot be written" in screen

        # Every open stream was told at once: a state alone, no events.
        told = None
        deadline = time.monotonic() + 5
        while told is None and time.monotonic() < deadline:
            update = sub.get(timeout=1)
            if update is not None and not update.events and (update.state.get("log_problem") or {}).get("kind") == "full":
                told = update
        assert told is not None

        hit = client.post("/api/sim/hit", json={"pad": 1})
        assert hit.status_code == 503 and "not recorded" in hit.get_json()["error"]
        assert hit.get_json()["error"].endswith("free some space there and the table carries on by itself")
        time.sleep(0.3)
        assert service.snapshot()[0] == seq  # nothing half-recorded

        # Space comes back: the table notices by itself, without anyone writing.
        service.store.simulate_fault(None)
        wait_until(lambda: client.get("/api/health").status_code == 200, "health to recover", timeout=10)
        assert client.get("/api/health").get_json()["status"] == "ok"
        assert client.get("/api/state").get_json()["log_problem"] is None
        assert "Nothing is being recorded" not in client.get("/screen").get_data(as_text=True)
        assert add_player(client, "Late").status_code == 200
        assert client.post("/api/sim/hit", json={"pad": 1}).status_code == 202
        wait_until(lambda: service.store.last_seq == seq + 2, "the hit to be recorded")
    finally:
        sub.close()


def test_a_log_turned_read_only_is_said_by_health_and_commands(client: FlaskClient, service: TableService) -> None:
    assert add_player(client, "Ann").status_code == 200
    service.store.simulate_fault("read_only")
    refused = add_player(client, "Bob")
    assert refused.status_code == 503 and refused.get_json()["error"].startswith("read-only: the event log")
    health = client.get("/api/health")
    assert health.status_code == 503 and health.get_json()["status"] == "log read-only"
    assert [p["name"] for p in client.get("/api/state").get_json()["players"]] == ["Ann"]
    service.store.simulate_fault(None)
    wait_until(lambda: client.get("/api/health").status_code == 200, "health to recover", timeout=10)
    assert add_player(client, "Bob").status_code == 200


# --------------------------------------------------------------------- CLI ---
def _unshare_works() -> str | None:
    """None when a private read-only mount can be made here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount --bind / /mnt 2>/dev/null || mount --bind /tmp /tmp"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"this system allows no private mount namespace (unshare -rm: {probe.stderr.strip() or probe.returncode})"
    return None


def serve_with_read_only(path: Path, data: Path, how: str) -> subprocess.CompletedProcess[str]:
    """``tabletop serve --data data`` with ``path`` read-only: a read-only bind mount, or chmod (not root)."""
    argv = [sys.executable, "-m", "companion.cli", "serve", "--host", "127.0.0.1", "--port", "0",
            "--data", str(data), "--pads", "sim", "--no-qr"]
    (data.parent / "empty.toml").write_text("")
    env = {**os.environ, "TABLETOP_CONFIG": str(data.parent / "empty.toml")}
    if how == "mount":
        script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
        argv = ["unshare", "-rm", "sh", "-c", script, "sh", str(path), *argv]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["mount", "chmod"])
@pytest.mark.parametrize("what", ["file", "directory"])
def test_serve_refuses_a_log_it_cannot_write(tmp_path: Path, how: str, what: str) -> None:
    if how == "mount" and (why := _unshare_works()):
        pytest.skip(why)
    if how == "chmod" and os.geteuid() == 0:
        pytest.skip("root writes through file modes; the read-only mount variant covers root")
    data = tmp_path / "data"
    data.mkdir()
    with EventStore(data / "tabletop.sqlite3") as store:  # an existing log with history
        store.append([NewEvent("player_added", {"id": 1, "name": "Ann", "colour": "#e4572e", "pad": 1})])
    target = data / "tabletop.sqlite3" if what == "file" else data
    if how == "chmod":
        target.chmod(0o444 if what == "file" else 0o555)
    try:
        done = serve_with_read_only(target, data, how)
    finally:
        if how == "chmod":
            target.chmod(0o644 if what == "file" else 0o755)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "Tabletop is running" not in done.stdout
    expected = ("read-only: the event log" if what == "file" else f"cannot write in the data directory {data}")
    assert expected in done.stderr, done.stderr
    with EventStore(data / "tabletop.sqlite3") as store:  # untouched
        assert [e["type"] for e in store.all_events()] == ["player_added"]


# ----------------------------------------------------------------- browser ---
@pytest.mark.browser
@pytest.mark.slow
def test_the_table_screen_shows_a_full_disk_live_and_clears_it(tmp_path: Path) -> None:
    from helpers.browser import LIVE_SSE, browser_context, chromium_or_skip, start_live_server
    executable = chromium_or_skip()
    from playwright.sync_api import expect, sync_playwright

    with running_service(tmp_path / "data") as service:
        service.log_retry_s = 0.2
        server = start_live_server(make_app(service, tmp_path / "data", **LIVE_SSE), service)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=executable)
                try:
                    with browser_context(browser) as context:
                        screen = context.new_page()
                        screen.goto(server.url + "/screen")
                        expect(screen.locator("#conn")).to_have_text("live")
                        alert = screen.locator("#screen-alert")
                        expect(alert).to_be_hidden()
                        service.store.simulate_fault("full")
                        for i in range(400):  # a table playing on until the disk is full
                            try:
                                service.submit("add_player" if i < 8 else "update_player",
                                               {"name": f"P{i}"} if i < 8 else {"player": 1, "name": f"Q{i % 50}"})
                            except StoreError:
                                break
                        expect(alert).to_be_visible()
                        expect(alert).to_contain_text("Nothing is being recorded. disk full: the event log cannot be written")
                        service.store.simulate_fault(None)
                        expect(alert).to_be_hidden(timeout=10_000)
                finally:
                    browser.close()
        finally:
            server.stop()

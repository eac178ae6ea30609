"""Shared helpers for web tests: a real table service, a real server on loopback, real Chromium.

Import the fixtures you need into a test module::

    from helpers.browser import live_server, table_service, phone  # noqa: F401

* ``table_service``: a started TableService on a real EventStore in tmp_path
  with 4 SimulatedPads; stopped afterwards.
* ``live_server``: that service behind create_app under waitress on
  127.0.0.1 (a free port) in a thread; ``.url``, ``.port``, ``.app``.
* ``chromium`` / ``phone`` / ``second_phone``: Debian's Chromium through Playwright
  and browser contexts with a phone viewport (390x844). Skipped when
  /usr/bin/chromium is missing, unless TABLETOP_REQUIRE_CHROMIUM=1 (then the test fails).

Helpers for a test's own fixtures: ``running_service`` (a started service, stopped
afterwards), ``make_app`` (create_app with the test PIN), ``serve_table`` (both behind
a live server, for a table a test sets up itself), ``seat`` (add players),
``browser_context`` and ``enter_pin`` (trust a page with the PIN); for Flask's test
client ``csrf_headers`` and ``trust`` (enter the PIN); ``wait_until`` (poll, hang guard only).
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import pytest
from flask import Flask

from companion.config import Config
from companion.games.base import Game
from companion.service import TableService
from companion.store import EventStore
from hardware.sim import SimulatedPads
from hardware.source import PadSource
from web import create_app, table_context
from web.json_client import JsonClient

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE_VIEWPORT = {"width": 390, "height": 844}
TEST_PIN = "2468"
#: Live-update timings for servers a browser watches: keep-alives every 0.3 s, polls every 0.1 s.
LIVE_SSE = {"SSE_KEEPALIVE_S": 0.3, "SSE_POLL_S": 0.1}
#: Browser context options of a phone held at the table (touch, 390x844).
PHONE = {"viewport": PHONE_VIEWPORT, "has_touch": True, "is_mobile": True}


def test_games() -> dict[str, type[Game]]:
    """The table's own test game (a counter) plus every registered game that imports cleanly."""
    from helpers.counter_game import GAMES_FOR_TESTS
    return dict(GAMES_FOR_TESTS)


def make_service(data_dir: Path, pads: int = 4, games: Mapping[str, type[Game]] | None = None,
                 source: PadSource | None = None) -> TableService:
    """A started TableService on a real EventStore in ``data_dir`` reading ``source`` (default: ``pads`` simulated pads)."""
    if source is None:
        source = SimulatedPads(pad_count=pads)
    data_dir.mkdir(parents=True, exist_ok=True)
    config = Config(data_dir=data_dir, pads_count=source.pad_count, server_pin=TEST_PIN)
    store = EventStore(config.database_path)
    service = TableService(store, source, config, games=test_games() if games is None else games)
    service.start()
    service._test_store = store  # type: ignore[attr-defined]  # closed by stop_service
    return service


def stop_service(service: TableService) -> None:
    """Stop the service and close its store."""
    service.stop()
    store = getattr(service, "_test_store", None)
    if store is not None:
        store.close()


@contextmanager
def running_service(data_dir: Path, games: Mapping[str, type[Game]] | None = None) -> Iterator[TableService]:
    """``make_service(data_dir, games=games)``, stopped (store closed) afterwards."""
    service = make_service(data_dir, games=games)
    try:
        yield service
    finally:
        stop_service(service)


def seat(service: TableService, names: Iterable[str]) -> list[int]:
    """Add a player per name; their ids in order."""
    return [service.submit("add_player", {"name": name})["events"][0]["data"]["id"] for name in names]


@pytest.fixture
def table_service(service: TableService) -> TableService:
    """conftest's ``service`` (a real, started TableService with 4 simulated pads) under the name these tests use."""
    return service


def make_app(service: TableService, data_dir: Path, **config: Any) -> Flask:
    """create_app on ``service`` for tests: TESTING, ``data_dir``, the test PIN, plus ``config``."""
    return create_app({"TESTING": True, "DATA_DIR": data_dir, "PIN": TEST_PIN, **config}, service=service)


@dataclass
class LiveServer:
    """A real waitress server on loopback running the app in a background thread."""

    app: Flask
    service: TableService
    server: Any
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.effective_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """End open streams, drain waitress' threads, close every socket, join the loop (once)."""
        from waitress import wasyncore

        if not self.thread.is_alive():
            return
        table_context(self.app).stopping.set()
        self.server.task_dispatcher.shutdown(timeout=10)
        # Close every channel from inside the loop thread, so the loop ends cleanly.
        try:
            self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map, ignore_all=True))
        except OSError:
            # The trigger is already closed: the loop is ending on its own; close what is left.
            wasyncore.close_all(self.server._map, ignore_all=True)
        self.thread.join(timeout=10)


def start_live_server(app: Flask, service: TableService, threads: int = 32, port: int = 0) -> LiveServer:
    """Serve ``app`` under waitress on 127.0.0.1 (``port``, default a free one) in a thread."""
    from waitress.server import create_server

    server = create_server(
        app,
        host="127.0.0.1",
        port=port,
        threads=threads,
        channel_request_lookahead=1,
        asyncore_use_poll=True,
        _start=True,
    )
    thread = threading.Thread(target=server.run, name="test-waitress", daemon=True)
    thread.start()
    return LiveServer(app, service, server, thread)


@pytest.fixture
def live_server(tmp_path: Path, table_service: TableService) -> Iterator[LiveServer]:
    """create_app on the real service, served by waitress on loopback; keep-alives every 0.3 s."""
    server = start_live_server(make_app(table_service, tmp_path / "data", **LIVE_SSE), table_service)
    try:
        yield server
    finally:
        server.stop()


def csrf_headers(client: Any) -> dict[str, str]:
    """The CSRF header for this Flask test client's session."""
    token = client.get("/api/session").get_json()["csrf_token"]
    return {"X-CSRF-Token": token}


def trust(client: Any, pin: str = TEST_PIN) -> dict[str, str]:
    """Enter the PIN with this Flask test client (it must be accepted); the CSRF header for later requests."""
    headers = csrf_headers(client)
    response = client.post("/api/pin", json={"pin": pin}, headers=headers)
    assert response.status_code == 200, response.get_json()
    return headers


def wait_until(predicate: Any, what: str = "the condition", timeout: float = 10.0) -> None:
    """Poll until ``predicate()`` holds; the timeout only bounds a hang (then the test fails naming ``what``)."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what} (the timeout only bounds a hang)")
        time.sleep(0.01)


@contextmanager
def serve_table(data_dir: Path, games: Mapping[str, type[Game]] | None = None) -> Iterator[LiveServer]:
    """A new service with ``games`` behind a live server (``.service``); both stopped afterwards.

    For fixtures that set up their own table: seat players and start a game on
    ``server.service`` inside the ``with`` block, then yield.
    """
    with running_service(data_dir, games=games) as service:
        server = start_live_server(make_app(service, data_dir, **LIVE_SSE), service)
        try:
            yield server
        finally:
            server.stop()


def expect() -> Any:
    """Playwright's ``expect``, imported only when a browser test runs."""
    from playwright.sync_api import expect as _expect

    return _expect


def serve_all_games(data_dir: Path, players: Iterable[str] = ()) -> Iterator[LiveServer]:
    """A live server with the four real games and 4 simulated pads; ``players`` seated on pads 1..n."""
    from companion.games import load_games

    with serve_table(data_dir, games=dict(load_games())) as server:
        for pad, name in enumerate(players, start=1):
            server.service.submit("add_player", {"name": name, "pad": pad})
        yield server


class HttpSession(JsonClient):
    """A cookie-keeping JSON client (web.json_client) whose requests answer ``(status, body)``."""

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        status, _, payload = self.call(method, path, body, headers)
        return status, payload

    def login(self, pin: str = TEST_PIN) -> "HttpSession":
        """Fetch a CSRF token and enter the PIN (a trusted session); ``start()`` alone fetches the token only."""
        super().login(pin)
        return self


def chromium_or_skip() -> str:
    """The Chromium binary, or skip (fail under TABLETOP_REQUIRE_CHROMIUM=1) when absent."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if os.environ.get("TABLETOP_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"{CHROMIUM} is missing but TABLETOP_REQUIRE_CHROMIUM=1; install Debian's chromium package")
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); browser tests need Debian's Chromium")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (never `playwright install`)."""
    executable = chromium_or_skip()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        if os.environ.get("TABLETOP_REQUIRE_CHROMIUM") == "1":
            pytest.fail("playwright is not installed; pip install -e '.[test]'")
        pytest.skip("playwright is not installed; pip install -e '.[test]'")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def browser_context(browser: Any, **options: Any) -> Iterator[Any]:
    """A new context of ``browser`` (20 s default timeout); closed afterwards."""
    context = browser.new_context(**options)
    context.set_default_timeout(20_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def phone(chromium: Any) -> Iterator[Any]:
    """A browser context with a phone-sized viewport and touch; closed afterwards."""
    with browser_context(chromium, **PHONE, device_scale_factor=2) as context:
        yield context


@pytest.fixture
def second_phone(chromium: Any) -> Iterator[Any]:
    """Another phone at the table (its own cookies, so not trusted): watches what the first one does."""
    with browser_context(chromium, **PHONE) as context:
        yield context


def enter_pin(page: Any, url: str, next_path: str = "/") -> None:
    """Open the PIN page of the server at ``url`` and enter the test PIN (then on to ``next_path``)."""
    page.goto(f"{url}/pin?next={next_path}")
    page.fill("#pin", TEST_PIN)
    page.click(".pin-form button[type=submit]")


def trusted_table_page(phone: Any, url: str) -> Any:
    """A new page on ``phone``: the PIN entered on the server at ``url``, then its table page, trusted and live."""
    page = phone.new_page()
    enter_pin(page, url)
    expect()(page.locator("#trust")).to_contain_text("Trusted phone")
    expect()(page.locator("#conn")).to_have_text("live")
    return page


def forget_phone_from_another_tab(phone: Any, url: str) -> None:
    """Another tab of the same phone logs it out (as a PIN change or the 12 hours would end its trust)."""
    other = phone.new_page()
    other.goto(url + "/pin")
    token = other.locator("input[name=csrf_token]").get_attribute("value")
    status = other.evaluate("""t => fetch('/api/logout', {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': t}, body: '{}'}).then(r => r.status)""", token)
    assert status == 200

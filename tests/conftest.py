"""Shared fixtures, as Flask's tutorial (flaskr) has them: ``service``, ``app``, ``client``, ``store``.

A test module that needs another shape overrides one by name (asking for the
shared one as its argument, when it only adds to it). Keep each fixture small
and documented; helpers live in ``tests/helpers`` (imported as ``helpers.<module>``).
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Iterator, Mapping

import pytest
from flask import Flask
from flask.testing import FlaskClient
from gpiozero import Device

from companion.games.base import Game
from companion.service import TableService
from companion.store import EventStore
from hardware.mockpins import TimedMockFactory

from helpers.browser import make_app, running_service


def pytest_configure(config: pytest.Config) -> None:
    """Give Ctrl-C back to the CLIs that tests interrupt, however the suite was started.

    A shell without job control (a script running ``make test &``) starts
    its background jobs with SIGINT ignored, and every program they exec
    inherits that. Python then installs no KeyboardInterrupt handler, so a
    ``tabletop pads`` under test would not stop on the SIGINT a test sends
    as Ctrl-C, and the test would wait out its timeout. A caught signal goes
    back to its default across exec: catching it here gives each child the
    usual Ctrl-C.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """The data directory of the test's table (flaskr's instance folder): the log and the secret key."""
    return tmp_path / "data"


@pytest.fixture
def games() -> Mapping[str, type[Game]] | None:
    """The games the table offers: None for every installed one (a module overrides it to narrow them)."""
    return None


@pytest.fixture
def service(data_dir: Path, games: Mapping[str, type[Game]] | None) -> Iterator[TableService]:
    """A running TableService with ``games`` and simulated pads; stopped, its log closed, afterwards."""
    with running_service(data_dir, games=games) as svc:
        yield svc


@pytest.fixture
def app(service: TableService, data_dir: Path) -> Flask:
    """The web app on ``service`` (TESTING, the test PIN), as ``create_app`` builds it."""
    return make_app(service, data_dir)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A Flask test client of ``app`` (no PIN entered)."""
    return app.test_client()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    """An empty event log of its own, closed afterwards."""
    s = EventStore(tmp_path / "log.sqlite3")
    yield s
    s.close()


@pytest.fixture
def mock_factory() -> Iterator[TimedMockFactory]:
    """A fresh gpiozero mock pin factory with a hand-moved clock, set as gpiozero's default.

    Like gpiozero's own test suite: whatever the test does, the factory is
    reset (pins and reservations cleared) and the previous factory restored.
    """
    saved = Device.pin_factory
    factory = TimedMockFactory()
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = saved

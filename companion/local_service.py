"""A table service on this machine with simulated pads, for development without ``tabletop serve``."""

from __future__ import annotations

import atexit
from pathlib import Path

from companion.config import Config
from companion.datalock import DataDirLock
from companion.private import private_dir
from companion.service import TableService
from companion.store import EventStore
from hardware.sim import SimulatedPads


def start_simulated_service(config: Config, data_dir: Path) -> TableService:
    """A running service with simulated pads on ``data_dir``, stopped at exit.

    What ``flask --app web run`` uses during development (``web.create_app``
    without a service): the web app never builds a store or pads itself.
    """
    private_dir(data_dir)
    lock = DataDirLock(data_dir).acquire()  # one service per data directory, as tabletop serve
    store = EventStore(data_dir / "tabletop.sqlite3")
    service = TableService(store, SimulatedPads(pad_count=config.pads_count), config)
    service.start()

    def _close() -> None:
        service.stop()
        store.close()
        lock.release()

    atexit.register(_close)
    return service

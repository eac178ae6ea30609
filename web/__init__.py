"""The Flask web app: pages for phones and the table screen, a JSON API and a live SSE stream.

``create_app`` follows Flask's tutorial (flaskr): a factory, one blueprint per
area (each named ``bp``), the secret key kept in the data directory. The app
talks to the table only through :class:`companion.service.TableService`'s
public methods; it never touches hardware.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from flask import Flask

from companion.private import private_dir, restrict

if TYPE_CHECKING:  # pragma: no cover
    from companion.config import Config
    from companion.service import TableService
    from web.streams import StreamSlots

log = logging.getLogger(__name__)

SECRET_KEY_FILE = "secret_key"


@dataclass
class TableContext:
    """Everything the blueprints share: the service, the table PIN and the shutdown flag."""

    service: "TableService"
    pin: str
    pin_generated: bool
    #: Set when the server is stopping, so open SSE streams end promptly.
    stopping: threading.Event = field(default_factory=threading.Event)
    #: True when create_app built the service itself (and so must stop it).
    owns_service: bool = False


def load_secret_key(data_dir: Path) -> str:
    """The app's secret key from ``data_dir/secret_key``, created (mode 0600) on first run.

    Kept on disk so that phones stay trusted across a restart of the service.
    """
    private_dir(data_dir)
    path = data_dir / SECRET_KEY_FILE
    try:
        # O_EXCL: two processes starting at once never overwrite each other's key.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_text(encoding="ascii").strip()
        if len(key) < 32:
            raise ValueError(f"the secret key in {path} is too short; delete the file to make a new one") from None
        restrict(path)  # a key others can read lets them forge a trusted phone's cookie
        return key
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key + "\n")
    log.info("created a new secret key in %s", path)
    return key


def generate_pin(digits: int = 4) -> str:
    """A random table PIN of ``digits`` digits (``server.pin_digits``), for when the config does not set ``server.pin``."""
    return f"{secrets.randbelow(10 ** digits):0{digits}d}"


def create_app(
    test_config: Mapping[str, Any] | None = None,
    *,
    service: "TableService | None" = None,
    config: "Config | None" = None,
) -> Flask:
    """Build the Flask app for one table.

    Args:
        test_config: Flask config overrides (tests), e.g. ``{"TESTING": True,
            "DATA_DIR": tmp_path, "PIN": "1234", "SSE_KEEPALIVE_S": 0.2}``.
        service: the running TableService; when None a simulated-pads service is
            built in the data directory and started (development only).
        config: the companion Config; gives the data directory and ``server.pin``.
    """
    app = Flask(__name__, instance_relative_config=True)
    from web.responses import SafeResponse

    app.response_class = SafeResponse  # every body valid UTF-8, whatever a stored name holds
    test_config = dict(test_config or {})

    if "DATA_DIR" in test_config:
        data_dir = Path(test_config["DATA_DIR"])
    elif config is not None:
        data_dir = Path(config.data_dir)
    else:
        data_dir = Path(app.instance_path)

    app.config.from_mapping(
        DATA_DIR=str(data_dir),
        # Bodies of every endpoint are small JSON objects; anything larger is a mistake or an attack.
        MAX_CONTENT_LENGTH=64 * 1024,
        MAX_FORM_MEMORY_SIZE=64 * 1024,
        SESSION_COOKIE_NAME="tabletop_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # "Trusted for the evening".
        PERMANENT_SESSION_LIFETIME=timedelta(hours=12),
        PIN=None,
        # Wrong PINs: per address, and for the whole table (web.security.PinLimiter).
        PIN_ATTEMPTS=5,
        PIN_TABLE_ATTEMPTS=10,
        PIN_WINDOW_S=60.0,
        PIN_PAUSE_S=60.0,
        PIN_MAX_PAUSE_S=900.0,
        PIN_PAUSE_RESET_S=3600.0,
        #: The PIN limiter's clock (tests inject one); None: time.monotonic.
        PIN_CLOCK=None,
        # Live streams (web.streams): None = derived from server.threads.
        SSE_MAX_STREAMS=None,
        SSE_TRUSTED_RESERVE=None,
        SSE_STREAMS_PER_CLIENT=None,
        SSE_FULL_RETRY_AFTER_S=10,
        SSE_KEEPALIVE_S=15.0,
        SSE_RETRY_MS=2000,
        # How often an idle SSE stream wakes to notice shutdown or a gone client.
        SSE_POLL_S=1.0,
        SSE_BACKLOG_PAGE=500,
    )
    # Answers keep the order the code builds them in (Flask 3 reads this, not JSON_SORT_KEYS).
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.config.update(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = load_secret_key(data_dir)

    if config is None:
        from companion.config import Config

        config = Config(data_dir=data_dir)
    app.config["TABLETOP_CONFIG"] = config

    pin = app.config["PIN"] or config.server_pin
    generated = pin is None
    if pin is None:
        pin = generate_pin(config.server_pin_digits)
    owns = service is None
    if service is None:
        from companion.local_service import start_simulated_service

        service = start_simulated_service(config, data_dir)
    app.extensions["tabletop"] = TableContext(service=service, pin=str(pin), pin_generated=generated, owns_service=owns)

    from web import api, auth, calibrate, errors, join, pad, pages, results, sim
    from companion.trust import PhoneTrust
    from web.security import PinLimiter, csrf_token, pin_fingerprint
    from web.games import register_game_blueprints

    app.extensions["tabletop_pin_limiter"] = PinLimiter(clock=app.config["PIN_CLOCK"] or time.monotonic)
    trust = PhoneTrust(data_dir)
    trust.bind_pin(pin_fingerprint(app.config["SECRET_KEY"], str(pin)))
    app.extensions["tabletop_trust"] = trust
    app.extensions["tabletop_streams"] = _stream_slots(app, config)
    app.jinja_env.globals["csrf_token"] = csrf_token
    errors.register(app)
    app.register_blueprint(pages.bp)
    app.register_blueprint(auth.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(sim.bp)
    app.register_blueprint(calibrate.bp)
    app.register_blueprint(join.bp)
    pad.stamp_sync_arrivals(app, service.source.now_us)
    app.register_blueprint(pad.bp)
    app.register_blueprint(results.bp)
    register_game_blueprints(app)
    return app


def _stream_slots(app: Flask, config: "Config") -> "StreamSlots":
    """The live-stream limits: the app config's SSE_* keys, else derived from ``server.*``."""
    from web.streams import StreamSlots, default_stream_limits

    total, reserve = default_stream_limits(config.server_threads)
    if config.server_max_streams is not None:
        total, reserve = config.server_max_streams, config.server_max_streams // 4
    if app.config["SSE_MAX_STREAMS"] is not None:
        total = int(app.config["SSE_MAX_STREAMS"])
        reserve = total // 4
    if app.config["SSE_TRUSTED_RESERVE"] is not None:
        reserve = int(app.config["SSE_TRUSTED_RESERVE"])
    per_client = app.config["SSE_STREAMS_PER_CLIENT"] or config.server_streams_per_client
    return StreamSlots(total, int(per_client), reserve, int(app.config["SSE_FULL_RETRY_AFTER_S"]))


def table_context(app: Flask) -> TableContext:
    """The :class:`TableContext` of an app made by :func:`create_app`."""
    return app.extensions["tabletop"]

"""``tabletop serve``: run the table service and its web app on the LAN.

Why waitress: it is pure Python (nothing to compile on a Pi), production
grade, and serves each request on a thread from a fixed pool, which suits
Server-Sent Events: a stream is a plain WSGI iterator whose every chunk is
handed to the socket at once (waitress flushes a streamed response as soon as
``send_bytes`` bytes are pending, 1 by default, and only pauses an iterator
when a slow client has more than ``outbuf_high_watermark`` bytes queued). The
price is one pool thread per open stream, so the app admits at most
``server.threads`` minus a third as streams and refuses the rest at once with
503 (web/streams.py): watchers never take the threads that commands, pages and
/api/health need.
"""

from __future__ import annotations

import argparse
import errno
import logging
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from companion.addresses import phone_urls

log = logging.getLogger(__name__)

#: A stuck phone may queue at most this much output before its stream pauses
#: (and its subscription falls back to a resync): bounds memory per client.
OUTBUF_HIGH_WATERMARK = 1 << 20

#: Open connections waitress accepts. Its default, 100, is reached by a burst of
#: watchers (each refused one holds its connection until it hangs up), and
#: waitress then stops accepting for seconds: new phones and commands time out.
CONNECTION_LIMIT = 1000


def connection_limit(wanted: int = CONNECTION_LIMIT) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` connections; the limit that fits.

    Keeps 64 descriptors for the log, the pads and the rest; never below waitress' default of 100.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + 64
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # pragma: no cover - a container that forbids it
            log.warning("cannot raise the open-files limit to %d; accepting fewer connections", target)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(100, min(wanted, soft - 64))


def add_parser(subparsers: Any) -> None:
    """Register ``tabletop serve``."""
    p = subparsers.add_parser(
        "serve",
        help="run the table service and the web app for phones",
        description="Run the table: pads, the event log and the web app for phones on the LAN.",
    )
    p.add_argument("--pads", choices=("sim", "gpio", "serial"), help="pad source (default: config pads.source, else sim)")
    p.add_argument("--host", help="address to listen on (default: config server.host, else 0.0.0.0 = the whole LAN)")
    p.add_argument("--port", type=int, help="TCP port (default: config server.port, else 8080; 0 picks a free port)")
    p.add_argument("--data", metavar="DIR", help="data directory for the event log and secret key")
    p.add_argument("--config", metavar="FILE", help="TOML config file (default: $TABLETOP_CONFIG or ~/.config/tabletop/config.toml)")
    p.add_argument("--serial-port", metavar="PORT", help="serial port of the pad box (with --pads serial)")
    p.add_argument("--no-qr", action="store_true", help="do not print the QR code")
    p.set_defaults(func=run)


def print_banner(out: TextIO, urls: list[str], pin: str, pin_generated: bool, pads: str, qr: bool) -> None:
    """What a person starting the table needs: where phones go, the PIN, a QR code."""
    print(f"Tabletop is running with {pads} pads.", file=out)
    print("Open on a phone on the same Wi-Fi:", file=out)
    for url in urls:
        print(f"  {url}", file=out)
    origin = "random for this run" if pin_generated else "from the config"
    print(f"Table PIN: {pin}  ({origin}; needed to change anything)", file=out)
    if qr and urls:
        try:
            import segno

            segno.make(urls[0], error="m").terminal(out=out, compact=True)
        except Exception as exc:  # a QR code is a convenience, never a reason to stop
            log.warning("could not print a QR code: %s", exc)
    print("Stop with Ctrl-C.", file=out, flush=True)


def run(args: argparse.Namespace) -> int:
    """Build config, pads, store, service and app, then serve until SIGTERM or Ctrl-C."""
    from companion.config import load_config, with_overrides
    from companion.datalock import DataDirLock
    from core.errors import ConfigError
    from companion.private import private_dir
    from companion.service import TableService
    from companion.store import EventStore
    from hardware.factory import open_source

    if args.port is not None and not 0 <= args.port <= 65535:
        # waitress would silently wrap 70000 to 4464.
        raise ConfigError(f"--port {args.port}: expected 1 to 65535 (or 0 for any free port)")
    if args.host is not None and not args.host.strip():
        raise ConfigError("--host is empty; give an address such as 0.0.0.0 (the whole LAN) or 127.0.0.1")
    config = load_config(args.config)
    config = with_overrides(
        config,
        pads_source=args.pads,
        server_host=args.host,
        server_port=args.port,
        data_dir=Path(args.data).expanduser() if args.data else None,
        serial_port=args.serial_port,
    )
    try:
        private_dir(config.data_dir)  # 0700: the log and the secret key are nobody else's business
    except OSError as exc:
        raise ConfigError(f"the data directory {config.data_dir} cannot be used ({exc.strerror}); "
                          "point --data (or data_dir in the config) at a directory you can write") from None

    # Before anything is opened (the log, the pads): a second service on this directory stops here.
    lock = DataDirLock(config.data_dir).acquire()
    try:
        # Refuses a log it cannot write (full disk, read-only file) with the reason.
        store = EventStore(config.database_path)
        try:
            source = open_source(config)
            service = TableService(store, source, config)
            service.start()
        except BaseException:
            store.close()
            raise
        try:
            return _serve(args, config, source, store, service)
        finally:
            service.stop()
            store.close()
    finally:
        lock.release()


def _serve(args: argparse.Namespace, config: Any, source: Any, store: Any, service: Any) -> int:
    """Run the web app on waitress until SIGTERM or Ctrl-C (the service is started and stopped by run)."""
    from waitress.server import create_server

    from core.errors import ConfigError
    from web import create_app, table_context

    server = None
    try:
        app = create_app(service=service, config=config)
        ctx = table_context(app)
        try:
            server = create_server(
                app,
                host=config.server_host,
                port=config.server_port,
                threads=config.server_threads,
                ident="tabletop",
                outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
                connection_limit=connection_limit(),
                # Keep reading while a request runs so a closed SSE connection is
                # noticed at once (waitress.client_disconnected), freeing its thread.
                channel_request_lookahead=1,
                asyncore_use_poll=True,
            )
        except (OSError, ValueError) as exc:
            # ValueError: waitress could not resolve the host; OSError: in use, not ours, no permission.
            if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
                hint = "another program (another tabletop?) uses that port; stop it or choose another --port"
            elif isinstance(exc, OSError):
                hint = f"{exc.strerror or exc}; choose another --port, or --host 0.0.0.0 for the whole LAN"
            else:
                hint = "that is not an address of this machine; use --host 0.0.0.0 for the whole LAN"
            raise ConfigError(f"cannot listen on {config.server_host} port {config.server_port}: {hint}") from None
        port = int(getattr(server, "effective_port", config.server_port))

        def _stop(signum: int, frame: FrameType | None) -> None:
            # End open streams first, so waitress' thread pool can drain.
            ctx.stopping.set()
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        print_banner(sys.stdout, phone_urls(config.server_host, port), ctx.pin, ctx.pin_generated, source.name, not args.no_qr)
        log.info("serving on %s:%d with %d threads", config.server_host, port, config.server_threads)
        try:
            server.run()  # waitress catches SystemExit/KeyboardInterrupt and drains its threads
        except (SystemExit, KeyboardInterrupt):
            pass
        ctx.stopping.set()
    finally:
        if server is not None:
            try:
                server.close()
            except Exception:  # pragma: no cover - closing a half-built server
                log.debug("closing the server", exc_info=True)
        service.stop()
    print("Tabletop stopped.", flush=True)
    return 0

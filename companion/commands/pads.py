"""``tabletop pads``: a live monitor of pad hits, for wiring and testing.

One line per hit: pad, player (from the config's ``[[players]]``), onset in
µs on the source's clock, kind, strength, and the gap since the previous hit
in ms. Source notices (connected, disconnected, dropped lines) are printed
between them. With simulated pads it reads keys from stdin (see
hardware.keyboard); with ``--script`` it replays a hit file and exits when
the file is done. With the serial pad box the header waits for the box's
HELLO (its pad count and resolution); no HELLO within ``--wait`` seconds is
a clear message and exit code 1. Ctrl-C exits cleanly.
"""

from __future__ import annotations

import argparse
import queue
import signal
import sys
import threading
from typing import Any, Mapping, TextIO

from companion.config import Config, load_config
from core.hits import PadHit
from hardware.source import PadSource, SourceNotice

#: How long the loop waits for an item before checking whether to stop.
_POLL_S = 0.2


def player_names(config: Config) -> dict[int, str]:
    """Pad number -> player name, for players in the config that have a pad."""
    return {p.pad: p.name for p in config.players if p.pad is not None}


def format_hit(hit: PadHit, previous_at_us: int | None, players: Mapping[int, str] | None = None) -> str:
    """One monitor line for a hit.

    ``previous_at_us`` is the onset of the hit printed before it (None for the
    first). A negative gap means this hit happened before the previous one
    but arrived after it; its timestamp, not its arrival, is what counts.
    """
    name = (players or {}).get(hit.pad, "")
    strength = "-" if hit.strength is None else f"{hit.strength:.2f}"
    if previous_at_us is None:
        gap = "first"
    else:
        gap = f"{(hit.at_us - previous_at_us) / 1000:+.3f} ms"
    return f"pad {hit.pad:>2}  {name:<12.12}  {hit.at_us:>14} us  {hit.kind.value:<5}  strength {strength:>4}  gap {gap}"


def format_notice(notice: SourceNotice) -> str:
    """One monitor line for a source notice (connected, disconnected, ...)."""
    return f"-- {notice.kind}: {notice.message}"


class PadMonitor:
    """Prints what a pad source produces until told to stop (or the source is done)."""

    def __init__(self, source: PadSource, out: TextIO, players: Mapping[int, str] | None = None) -> None:
        self.source = source
        self.out = out
        self.players = dict(players or {})
        self.previous_at_us: int | None = None
        self.done = threading.Event()
        self.hits = 0

    def handle(self, item: Any) -> None:
        """Print one queue item; a notice with ``finished`` in its details ends the monitor."""
        if isinstance(item, PadHit):
            self.out.write(format_hit(item, self.previous_at_us, self.players) + "\n")
            self.previous_at_us = item.at_us
            self.hits += 1
        elif isinstance(item, SourceNotice):
            self.out.write(format_notice(item) + "\n")
            if item.details.get("finished"):
                self.done.set()
        self.out.flush()

    def run(self) -> None:
        """Print items until :attr:`done` is set and the queue is empty."""
        while True:
            try:
                item = self.source.queue.get(timeout=_POLL_S)
            except queue.Empty:
                if self.done.is_set():
                    return
                continue
            self.handle(item)


def run(args: argparse.Namespace) -> int:
    """Open the chosen source, print hits until Ctrl-C (or end of script / keyboard input)."""
    from hardware.factory import open_source
    from hardware.keyboard import KEY_HELP, KeyboardReader
    from hardware.sim import SimulatedPads

    config = load_config(args.config)
    speed = None if args.fast else args.speed
    source = open_source(config, kind=args.pads, port=args.port, script=args.script, speed=speed)
    monitor = PadMonitor(source, sys.stdout, player_names(config))
    keyboard: KeyboardReader | None = None
    # SIGTERM (kill, systemd) ends the monitor like Ctrl-C: terminal restored, pins released.
    previous_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        if source.name == "serial":
            # Pad count and resolution come with the box's HELLO: no header until it has spoken.
            print("pads: serial pad box, waiting for its HELLO ...", flush=True)
            source.start()
            if not _wait_for_box(source, args.wait):
                return 1
        else:
            source.start()
        print(header(source), flush=True)
        if isinstance(source, SimulatedPads) and not args.script:
            keyboard = KeyboardReader(source, fd=sys.stdin.fileno(), on_eof=monitor.done.set)
            print(KEY_HELP if keyboard.is_terminal else "reading keys from stdin: " + KEY_HELP, flush=True)
            keyboard.start()
        monitor.run()
    except KeyboardInterrupt:
        print("", flush=True)
    finally:
        if keyboard is not None:
            keyboard.stop()
        source.stop()
        signal.signal(signal.SIGTERM, previous_term)
    return 0


def header(source: PadSource) -> str:
    """The first line: which source, how many pads, its timing resolution (and the box's firmware)."""
    status = source.status()
    where = ""
    if status.get("firmware"):
        where = f" (firmware {status['firmware']} on {status.get('port')})"
    return f"pads: {source.name}, {source.pad_count} pads, resolution {source.resolution_us} us{where}. Ctrl-C quits."


def _wait_for_box(source: PadSource, wait_s: float) -> bool:
    """Wait for the pad box's HELLO; False (after a message on stderr) when it does not come in time."""
    wait = getattr(source, "wait_connected", None)
    if wait is None:
        return True
    if wait_s <= 0:  # wait as long as it takes (Ctrl-C quits)
        while not wait(_POLL_S):
            pass
        return True
    if wait(wait_s):
        return True
    status = source.status()
    port = status.get("configured_port") or "any USB serial port"
    reason = status.get("error") or "no HELLO"
    print(
        f"pads: no pad box said HELLO within {wait_s:g} s on {port}: {reason}. "
        "Check the cable and the port (`tabletop doctor` lists the serial ports), "
        "or wait longer with --wait SECONDS (0: forever).",
        file=sys.stderr,
        flush=True,
    )
    return False


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def add_parser(subparsers: Any) -> None:
    """Register ``tabletop pads``."""
    p = subparsers.add_parser("pads", help="live monitor of pad hits (wiring and testing)", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pads", choices=("sim", "gpio", "serial"), default=None,
                   help="pad source (default: pads.source from the config, else sim)")
    p.add_argument("--port", default=None, help="serial port of the pad box (default: config, else search)")
    p.add_argument("--config", default=None, help="config file (default: $TABLETOP_CONFIG or ~/.config/tabletop/config.toml)")
    p.add_argument("--script", default=None, metavar="FILE", help="replay a file of timed hits (see docs/pads.md) and exit")
    p.add_argument("--speed", type=float, default=1.0, help="script replay speed (default 1.0: real time)")
    p.add_argument("--fast", action="store_true", help="replay the script as fast as possible")
    p.add_argument("--wait", type=float, default=10.0, metavar="SECONDS",
                   help="serial: how long to wait for the pad box's HELLO before giving up (default 10; 0: forever)")
    p.set_defaults(func=run)

"""``tabletop emulate``: a software pad box on a pseudo-terminal.

Prints the device path; open it with ``tabletop pads --pads serial --port
<path>`` (or ``serve``). The emulator speaks firmware/PROTOCOL.md exactly:
HELLO, heartbeats, hits, levels, replies to SET/SAVE/STREAM/CFG.

Keys (terminal): 1-8 slap pad 1-8; shift+1-8 (``!@#$%^&*``) or q-i touch pad
1-8. Key presses go through the pad's thresholds like a real piezo (a slap
peaks at 800, a touch at 120), so thresholds set from the host matter.
``--script FILE`` replays a hit file (format of ``hardware/script.py``) once
a host has connected, each hit stamped on the box clock.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

# `tabletop` builds every subcommand's parser on each start (`serve` too), so this
# module imports the emulator, the protocol, the keyboard and script readers only
# when `tabletop emulate` runs (docs/performance.md, "Footprint").
if TYPE_CHECKING:  # pragma: no cover
    from hardware.emulator import PadBoxEmulator

SLAP_PEAK = 800
TOUCH_PEAK = 120
#: hardware.protocol.MAX_PADS for the help text, which must not import the protocol;
#: tests/service/test_cli_startup.py checks the two agree.
MAX_PADS_HELP = 8


def add_parser(subparsers: Any) -> None:
    """Register ``tabletop emulate``."""
    parser = subparsers.add_parser(
        "emulate",
        help="run a software pad box on a pseudo-terminal",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--pads", type=int, default=4, help=f"pad count, 1 to {MAX_PADS_HELP} (default 4)")
    parser.add_argument("--script", metavar="FILE", help="hit script to replay once a host connects")
    parser.add_argument("--resolution-us", type=int, default=100, help="timing resolution reported in HELLO (default 100)")
    parser.add_argument("--mode", choices=("piezo", "button"), default="piezo", help="pad type reported in HELLO")
    parser.add_argument(
        "--clock-ppm", type=float, default=0.0, metavar="PPM",
        help="run the box clock PPM parts per million fast (negative: slow), like an off crystal (default 0)",
    )
    parser.add_argument("--exit-after-script", action="store_true", help="quit 1 s after the script's last hit")
    parser.add_argument("--no-keys", action="store_true", help="do not read keys from stdin")
    parser.set_defaults(func=run)


def _read_keys(emu: PadBoxEmulator, done: threading.Event, fd: int) -> None:
    """Turn key presses into strikes until ``done`` or input ends (Ctrl-D on a terminal quits)."""
    import select

    from hardware.keyboard import keys_to_hits

    tty_in = os.isatty(fd)
    while not done.is_set():
        try:
            ready, _, _ = select.select([fd], [], [], 0.2)
            data = os.read(fd, 64) if ready else None
        except OSError:
            data = b""
        if data is None:
            continue
        if not data or b"\x04" in data:
            if tty_in:
                done.set()
            return
        for pad, kind in keys_to_hits(data, emu.pads):
            peak = SLAP_PEAK if kind.value == "slap" else TOUCH_PEAK
            result = emu.strike(pad, peak)
            print(f"pad {pad}: {result or 'below touch threshold'} (peak {peak})", flush=True)


def run(args: argparse.Namespace) -> int:
    """Run the emulator until Ctrl-C (or the script is done with --exit-after-script)."""
    import termios

    from hardware import protocol as p
    from hardware.emulator import MAX_CLOCK_PPM, PadBoxEmulator
    from hardware.keyboard import KEY_HELP
    from hardware.script import load_script

    if not 1 <= args.pads <= p.MAX_PADS:
        print(f"tabletop emulate: --pads must be 1 to {p.MAX_PADS}, got {args.pads}", file=sys.stderr)
        return 2
    if not 1 <= args.resolution_us <= 65535:
        print(f"tabletop emulate: --resolution-us must be 1 to 65535, got {args.resolution_us}", file=sys.stderr)
        return 2
    if not -MAX_CLOCK_PPM <= args.clock_ppm <= MAX_CLOCK_PPM:
        print(f"tabletop emulate: --clock-ppm must be -{MAX_CLOCK_PPM} to {MAX_CLOCK_PPM}, got {args.clock_ppm:g}", file=sys.stderr)
        return 2
    script = load_script(args.script, pad_count=args.pads) if args.script else None
    emu = PadBoxEmulator(
        pads=args.pads, resolution_us=args.resolution_us, mode=args.mode, clock_ppm=args.clock_ppm
    ).start()
    done = threading.Event()
    fd = sys.stdin.fileno() if not args.no_keys and sys.stdin is not None else -1
    saved = None
    try:
        print(f"pad box emulator on {emu.path} ({args.pads} {args.mode} pads, {p.BAUD} baud, protocol {p.PROTOCOL_VERSION})", flush=True)
        print(f"connect with: tabletop pads --pads serial --port {emu.path}", flush=True)
        if fd >= 0:
            if os.isatty(fd):
                saved = termios.tcgetattr(fd)
                attrs = termios.tcgetattr(fd)
                attrs[3] &= ~(termios.ICANON | termios.ECHO)  # key at a time; ISIG kept for Ctrl-C
                termios.tcsetattr(fd, termios.TCSANOW, attrs)
                print(KEY_HELP.replace("Ctrl-C quits", "Ctrl-C or Ctrl-D quits"), flush=True)
            threading.Thread(target=_read_keys, args=(emu, done, fd), daemon=True).start()
        if script is not None:
            def play() -> None:
                print(f"script: {len(script)} hits, waiting for a host to connect", flush=True)
                while not emu.host_seen.wait(0.2):
                    if done.is_set():
                        return
                sent = emu.play(script, stop=done)
                print(f"script done: {sent} hits sent", flush=True)
                if args.exit_after_script and not done.wait(1.0):
                    done.set()
            threading.Thread(target=play, daemon=True).start()
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        done.set()
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        emu.stop()
    return 0

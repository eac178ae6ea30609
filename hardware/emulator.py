"""A software pad box on a pseudo-terminal, speaking firmware/PROTOCOL.md exactly.

The host opens the printed path with pyserial as if it were a USB pad box.
Tests use the class directly; people use ``tabletop emulate``::

    emu = PadBoxEmulator(pads=4).start()
    emu.path                      # '/dev/pts/7'
    emu.hit(2, "S", 800)          # a slap on pad 2, stamped now on the box clock
    emu.hit(1, "S", 700, at_us=emu.now_us() - 500)
    emu.send_raw(b"noise\\n")     # hostile bytes
    emu.unplug(); emu.replug()    # a pulled cable, back under a new path
    emu.stop()

Like the firmware, it keeps per-pad settings in memory (``SET``; ``SAVE``
copies them to its pretend EEPROM), answers HELLO and CFG, sends a
heartbeat every 500 ms and LVL lines while streaming. ``clock_ppm=500``
makes its clock run 500 ppm fast, like a real box's crystal may.
"""

from __future__ import annotations

import logging
import os
import random
import select
import threading
import time
from typing import TYPE_CHECKING

from hardware import protocol as p
from hardware.box_side import LineSplitter
from hardware.emulator_pty import PtyPort

if TYPE_CHECKING:
    from hardware.script import ScriptLine

log = logging.getLogger(__name__)

#: The pretend firmware version the emulator reports.
FIRMWARE = "emu-1.0"
#: The largest clock error the emulator accepts, in ppm (a UART 5 % off no longer works anyway).
MAX_CLOCK_PPM = 50_000


class PadBoxEmulator(PtyPort):
    """A pad box in software on a pseudo-terminal (see the module docstring).

    Args:
        pads: pad count reported in HELLO (1..8).
        resolution_us: timing resolution reported in HELLO.
        mode: ``piezo`` or ``button``.
        clock_start_us: the box clock's value at ``start()`` (32-bit; start near
            2**32 to exercise the wrap).
        say_hello: False makes a broken box that never says HELLO (but sends
            heartbeats and hits).
        announce: write the path where ``hardware.ports`` finds emulators.
        heartbeat_s / levels_s: periods of HB and LVL lines (``heartbeat_s``
            may be changed while running; it applies from the next heartbeat).
        clock_ppm: how fast the box clock runs against the host's monotonic
            clock, in parts per million (500: a crystal 500 ppm fast; negative:
            slow), as a real box's crystal or resonator does.
    """

    def __init__(
        self,
        pads: int = 4,
        resolution_us: int = 100,
        mode: str = "piezo",
        clock_start_us: int | None = None,
        say_hello: bool = True,
        announce: bool = True,
        heartbeat_s: float = p.HEARTBEAT_US / 1e6,
        levels_s: float = p.LEVELS_PERIOD_US / 1e6,
        firmware: str = FIRMWARE,
        clock_ppm: float = 0.0,
    ) -> None:
        if not 1 <= pads <= p.MAX_PADS:
            raise ValueError(f"pads must be 1..{p.MAX_PADS}, got {pads}")
        if not 1 <= resolution_us <= 65535:
            raise ValueError(f"resolution_us must be 1..65535, got {resolution_us}")
        if mode not in ("piezo", "button"):
            raise ValueError(f"mode must be piezo or button, got {mode!r}")
        if not -MAX_CLOCK_PPM <= clock_ppm <= MAX_CLOCK_PPM:
            raise ValueError(f"clock_ppm must be -{MAX_CLOCK_PPM}..{MAX_CLOCK_PPM}, got {clock_ppm!r}")
        self.clock_ppm = float(clock_ppm)
        self._rate = 1.0 + self.clock_ppm * 1e-6
        self.pads = pads
        self.resolution_us = resolution_us
        self.mode = mode
        self.firmware = firmware
        self.say_hello = say_hello
        self.announce = announce
        self.heartbeat_s = heartbeat_s
        self.levels_s = levels_s
        self._clock_start = (clock_start_us if clock_start_us is not None else random.randrange(1_000_000, 50_000_000)) % p.TIME_MOD
        self._boot_ns = time.monotonic_ns()
        self._lock = threading.RLock()
        self._seq = 0
        self._master: int | None = None
        self._slave: int | None = None
        self.path: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self.settings = {pad: {k: v[2] for k, v in p.PARAMS.items()} for pad in range(1, pads + 1)}
        self.eeprom = {pad: dict(s) for pad, s in self.settings.items()}
        self.streaming = False
        self._levels = [0] * pads
        self._peaks = [0] * pads
        self.commands: list[str] = []  # every host line received, for tests
        self.host_seen = threading.Event()  # set by the first valid host command
        self.lines_sent = 0
        self.lines_skipped = 0  # host not reading and the pty buffer full: seq still used up

    # ------------------------------------------------------------ lifecycle

    def start(self) -> "PadBoxEmulator":
        """Open the pseudo-terminal, say HELLO and start the box thread. Returns self."""
        self._open_pty()
        self._thread = threading.Thread(target=self._run, name="padbox-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the box and close its pseudo-terminal. Safe to call twice."""
        self._stop.set()
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._close_pty()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> "PadBoxEmulator":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def unplug(self) -> None:
        """Pull the cable: the pseudo-terminal disappears and the host's reads fail."""
        with self._lock:
            self._close_pty()

    def replug(self, new_path: bool = True) -> str:
        """Plug back in: a fresh pseudo-terminal (under a new path if asked), a reset box.

        Like an Arduino on USB, the box restarts: clock from zero, seq 0, HELLO.
        Returns the new path.
        """
        with self._lock:
            old = self.path
            self._close_pty()
            self._open_pty()
            if new_path and self.path == old:
                spare_master, spare_slave = self._master, self._slave
                self._master = self._slave = None
                self._open_pty()
                for fd in (spare_master, spare_slave):
                    if fd is not None:
                        os.close(fd)
                self._announce()
            self.reset()
            os.write(self._wake_w, b"x")
            assert self.path is not None
            return self.path

    def reset(self) -> None:
        """Restart the box as a reset would: clock near zero, seq 0, settings from EEPROM, HELLO."""
        with self._lock:
            self._clock_start = 0
            self._boot_ns = time.monotonic_ns()
            self._seq = 0
            self.streaming = False
            self.settings = {pad: dict(s) for pad, s in self.eeprom.items()}
            if self.say_hello:
                self._send_hello()

    # ------------------------------------------------------------ what the box does

    def now_us(self) -> int:
        """The box clock: 32-bit microseconds that wrap, like ``micros()``, ``clock_ppm`` off the host's."""
        elapsed = int((time.monotonic_ns() - self._boot_ns) * self._rate) // 1000
        return (self._clock_start + elapsed) % p.TIME_MOD

    def hit(self, pad: int, kind: str = "S", peak: int = 800, at_us: int | None = None) -> int:
        """Send a HIT line as given (no threshold logic). Returns the onset time sent.

        ``at_us`` is box-clock time (taken modulo 2**32); default now.
        """
        if kind not in ("S", "T"):
            raise ValueError(f"kind must be 'S' or 'T', got {kind!r}")
        t = (self.now_us() if at_us is None else at_us) % p.TIME_MOD
        with self._lock:
            self._note_level(pad, peak)
            self._send(f"HIT {t} {pad} {kind} {peak}")
        return t

    def strike(self, pad: int, peak: int) -> str | None:
        """A contact of strength ``peak`` judged by the pad's thresholds, as the firmware would.

        Returns ``S``, ``T`` or None (below the touch threshold: no line).
        """
        s = self.settings[pad]
        touch_on = 0 < s["touch"] < s["slap"]
        if peak >= s["slap"]:
            kind = "S"
        elif touch_on and peak >= s["touch"]:
            kind = "T"
        else:
            with self._lock:
                self._note_level(pad, peak)
            return None
        self.hit(pad, kind, peak)
        return kind

    def play(self, script: "list[ScriptLine]", stop: threading.Event | None = None) -> int:
        """Send a hit script in real time: each hit stamped (box clock) start + its time. Returns hits sent.

        Blocks until done or ``stop`` is set. Strength s becomes peak round(s * 1023);
        without one, slaps peak at 800 and touches at 120.
        """
        stop = stop or self._stop
        t0_box = self.now_us()
        t0 = time.monotonic()
        sent = 0
        for line in sorted(script, key=lambda ln: (ln.at_us, ln.pad)):
            delay = t0 + line.at_us / 1e6 - time.monotonic()
            if delay > 0 and stop.wait(delay):
                break
            if line.pad > self.pads:
                log.warning("emulator: script line %d: pad %d, box has %d pads; skipped", line.line, line.pad, self.pads)
                continue
            kind = "S" if line.kind.value == "slap" else "T"
            peak = round(line.strength * p.PEAK_MAX) if line.strength is not None else (800 if kind == "S" else 120)
            self.hit(line.pad, kind, peak, at_us=t0_box + line.at_us)
            sent += 1
        return sent

    def send_raw(self, data: bytes) -> None:
        """Write bytes to the host as they are (hostile input, partial lines)."""
        with self._lock:
            self._write(data)

    def send_line(self, body: str, seq: int | None = None) -> None:
        """Send a framed box line with the next seq (or the seq given, which does not advance it)."""
        with self._lock:
            if seq is None:
                self._send(body)
            else:
                self._write(p.encode_box_line(seq, body))

    def skip_seq(self, count: int = 1) -> None:
        """Use up sequence numbers without sending, so the host sees lines lost."""
        with self._lock:
            self._seq = (self._seq + count) % p.SEQ_MOD

    # ------------------------------------------------------------ internals

    def _send(self, body: str) -> None:
        line = p.encode_box_line(self._seq, body)
        self._seq = (self._seq + 1) % p.SEQ_MOD
        if self._write(line):
            self.lines_sent += 1
        else:
            self.lines_skipped += 1

    def _send_hello(self) -> None:
        self._send(f"HELLO {p.PROTOCOL_VERSION} {self.firmware} {self.pads} {self.resolution_us} {self.mode} {self.now_us()}")

    def _note_level(self, pad: int, peak: int) -> None:
        if 1 <= pad <= self.pads:
            self._levels[pad - 1] = max(0, min(p.PEAK_MAX, peak))
            self._peaks[pad - 1] = max(self._peaks[pad - 1], max(0, min(p.PEAK_MAX, peak)))

    def _handle(self, line: bytes) -> None:
        self.commands.append(line.decode("ascii", "replace"))
        parsed = p.parse_command(line, self.pads)
        if parsed is None:
            return
        if isinstance(parsed, p.CommandError):
            self._send(parsed.reply())
            return
        self.host_seen.set()
        if parsed.name == "HELLO":
            if self.say_hello:
                self._send_hello()
            return
        if parsed.name == "CFG":
            for pad in range(1, self.pads + 1):
                values = " ".join(str(self.settings[pad][k]) for k in p.CFG_FIELDS)
                self._send(f"CFG {pad} {values}")
        elif parsed.name == "SET":
            self.settings[int(parsed.args["pad"])][str(parsed.args["param"])] = int(parsed.args["value"])
        elif parsed.name == "SAVE":
            self.eeprom = {pad: dict(s) for pad, s in self.settings.items()}
        elif parsed.name == "DEFAULTS":
            self.settings = {pad: {k: v[2] for k, v in p.PARAMS.items()} for pad in self.settings}
        elif parsed.name == "STREAM":
            self.streaming = bool(parsed.args["on"])
        self._send(f"OK {parsed.echo()}")

    def _run(self) -> None:
        with self._lock:
            if self.say_hello:
                self._send_hello()
        lines = LineSplitter()
        next_hb = time.monotonic() + self.heartbeat_s
        next_lvl = time.monotonic() + self.levels_s
        while not self._stop.is_set():
            now = time.monotonic()
            timeout = max(0.0, min(next_hb, next_lvl if self.streaming else next_hb) - now)
            master = self._master
            fds = [self._wake_r] + ([master] if master is not None else [])
            try:
                readable, _, _ = select.select(fds, [], [], timeout)
            except (OSError, ValueError):
                readable = []  # the pty was closed under us (unplug): loop again
                time.sleep(0.01)
            if self._wake_r in readable:
                try:
                    os.read(self._wake_r, 64)
                except OSError:
                    pass
            if master is not None and master in readable:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    data = b""  # no host has the port open right now
                    time.sleep(0.01)
                with self._lock:
                    for line in lines.feed(data):
                        if line is None:
                            self._send("ERR LONG -")
                        else:
                            self._handle(line)
            now = time.monotonic()
            with self._lock:
                if now >= next_hb:
                    self._send(f"HB {self.now_us()}")
                    next_hb = now + self.heartbeat_s
                if self.streaming and now >= next_lvl:
                    self._send(f"LVL {self.now_us()} {p.hex_levels(self._levels)} {p.hex_levels(self._peaks)}")
                    self._peaks = list(self._levels)
                    self._levels = [v // 2 for v in self._levels]  # the level meter decays like a ringing piezo
                    next_lvl = now + self.levels_s
                elif not self.streaming:
                    next_lvl = now + self.levels_s

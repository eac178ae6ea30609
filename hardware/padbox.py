"""The serial pad box as a PadSource: pyserial transport around the I/O-free protocol.

One reader thread owns the port. It opens a candidate port (opening resets
an Arduino, so it asks for HELLO and waits for it), feeds every byte to
:class:`hardware.protocol.PadBoxProtocol`, turns hits into :class:`PadHit`
values and survives everything else: a pulled cable is reported as
``disconnected`` and the thread keeps searching (``hardware.ports``) until a
box answers HELLO again, under whatever name it came back.

Clock: source time = the box's unwrapped microsecond clock + ``offset_us``.
The offset is chosen at each new box session (first connect, reset,
reconnect) so that the source clock continues from where it was and never
goes backwards. Hit stamps are the box's own (plus the offset). To tell the
time *now* on that clock, :class:`hardware.boxclock.BoxClock` fits the box
clock's offset and rate against the host's monotonic clock from every timed
line (HELLO, HB, LVL) and the host time it was read at; ``now_us()`` is that
fit at the host's monotonic time now, and ``host_seconds_until()`` turns a
deadline on the source clock into host seconds at the fitted rate.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from typing import Any, Callable, ClassVar

import serial

from hardware import ports
from hardware import protocol as p
from hardware.boxclock import BoxClock, ClockFit
from hardware.padbox_clock import PadBoxClock
from hardware.padbox_commands import PadBoxCommands
from core.hits import HitKind, PadHit
from hardware.source import PadSource

log = logging.getLogger(__name__)

#: Refusals logged per reason before the log goes quiet (counters keep counting).
LOGGED_REFUSALS = 5


class SerialPadBox(PadBoxClock, PadBoxCommands, PadSource):
    """Pads on a pad box (Arduino Nano class, or ``tabletop emulate``) over USB serial.

    Args:
        port: device path or pyserial URL (``/dev/ttyUSB0``, ``loop://``); None searches.
        baud: 250000 per firmware/PROTOCOL.md.
        hello_timeout_s: how long a freshly opened port may take to say HELLO.
        pad_count: expected pads; None takes the count from the box's HELLO.
        sink: queue hits and notices go to (default: a new one).
        silence_timeout_s: no line for this long is reported (heartbeats are every 0.5 s).
        retry_s: pause between searches while no box answers.
        box_clock: the estimator relating the box clock to the host's (default
            ``BoxClock()``: a 60 s window, the rate fitted once it spans 10 s).
    """

    name: ClassVar[str] = "serial"
    supports_levels: ClassVar[bool] = True

    def __init__(
        self,
        port: str | None = None,
        baud: int = p.BAUD,
        hello_timeout_s: float = 5.0,
        pad_count: int | None = None,
        sink: "queue.Queue[Any] | None" = None,
        *,
        silence_timeout_s: float = 2.0,
        retry_s: float = 1.0,
        box_clock: BoxClock | None = None,
    ) -> None:
        super().__init__(pad_count or p.MAX_PADS, 1, sink)
        self.port = port
        self.baud = baud
        self.hello_timeout_s = hello_timeout_s
        self.expected_pads = pad_count
        self.silence_timeout_s = silence_timeout_s
        self.retry_s = retry_s
        self.protocol = p.PadBoxProtocol()
        self.serial: serial.Serial | None = None
        self.hello: p.Hello | None = None
        self.connected_port: str | None = None
        self.offset_us = 0
        self.error: str | None = None
        self.reconnects = 0
        self.streaming = False
        self._last_port: str | None = None
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        self._state = threading.Lock()
        self._command_lock = threading.Lock()
        self._replies: "queue.Queue[p.Event]" = queue.Queue()
        # Clock: the fit of box time against host monotonic µs (reader thread only), and
        # its latest result, read by every thread. Before any box: the host's own rate from 0.
        self.box_clock = box_clock if box_clock is not None else BoxClock()
        self._fit = ClockFit(
            host_ref_us=time.monotonic_ns() // 1000, box_ref_us=0.0, rate=1.0, rate_fitted=False, points=0, span_us=0
        )
        self._now_floor = 0
        self._last_hit_us: int | None = None
        self._last_line_ns = 0
        self._silence_reported = False
        self._levels: dict[str, Any] = {}
        self._level_listeners: list[Callable[[dict[str, Any]], None]] = []
        self._totals: dict[str, int] = {}
        self._logged: dict[str, int] = {}

    # ------------------------------------------------------------ PadSource

    def start(self) -> None:
        """Start the reader thread; it connects in the background (see ``wait_connected``)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="serial-padbox", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop reading and close the port. Safe to call twice."""
        port = self.serial
        if self.streaming and port is not None:
            try:  # best effort: a box that does not reset on open would otherwise keep streaming
                port.write(p.encode_stream(False))
            except Exception:
                pass
            self.streaming = False
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._close()

    def wait_connected(self, timeout: float) -> bool:
        """Block until a box has said HELLO (True) or ``timeout`` seconds pass (False)."""
        return self._connected.wait(timeout)

    @property
    def connected(self) -> bool:
        """Whether a box is connected and has said HELLO."""
        return self._connected.is_set()

    def status(self) -> dict[str, Any]:
        """Port, firmware, connection and the protocol's counters (summed over connections)."""
        base = super().status()
        hello = self.hello
        with self._state:
            counters = {k: self._totals.get(k, 0) + v for k, v in self.protocol.counters.items()}
        base.update(
            {
                "port": self.connected_port or self.port,
                "configured_port": self.port,
                "baud": self.baud,
                "connected": self.connected,
                "firmware": hello.firmware if hello else None,
                "protocol": hello.proto if hello else None,
                "mode": hello.mode if hello else None,
                "box_pads": hello.pads if hello else None,
                "offset_us": self.offset_us,
                "clock": self.box_clock.status(),
                "reconnects": self.reconnects,
                "streaming": self.streaming,
                "error": self.error,
                "counters": counters,
            }
        )
        return base

    # ------------------------------------------------------------ reader thread

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.serial is None:
                    if not self._connect():
                        self._stop.wait(self.retry_s)
                    continue
                self._read_once()
            except Exception as exc:  # the thread must survive anything and keep trying
                self._lost(f"pad box error on {self.connected_port}: {exc}")

    def _open(self, device: str) -> serial.Serial | None:
        try:
            # exclusive: a second reader on the same port would steal half the lines
            return serial.serial_for_url(device, baudrate=self.baud, timeout=0.05, write_timeout=1.0, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as exc:
            log.debug("cannot open %s: %s", device, exc)
            return None

    def _connect(self) -> bool:
        """Try each candidate port until one says HELLO. True when connected."""
        candidates = ports.candidate_ports(self.port, self._last_port)
        if not candidates:
            self._report_error("no serial port found: plug in the pad box, or set serial.port / --port")
            return False
        problems: list[str] = []
        for device in candidates:
            if self._stop.is_set():
                return False
            port = self._open(device)
            if port is None:
                problems.append(f"{device}: cannot open")
                continue
            problem = self._await_hello(port, device)
            if problem is None:
                return True
            problems.append(problem)
            try:
                port.close()
            except Exception:
                pass
        self._report_error("no pad box answered: " + "; ".join(problems))
        return False

    def _await_hello(self, port: serial.Serial, device: str) -> str | None:
        """Ask for HELLO (repeatedly: the board may be rebooting) until one arrives or time is up."""
        with self._state:
            self._bank_counters()
            self.protocol.reset()
        self.serial = port
        deadline = time.monotonic() + self.hello_timeout_s
        next_ask = 0.0
        received = 0
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                if time.monotonic() >= next_ask:
                    port.write(p.encode_hello())
                    next_ask = time.monotonic() + 1.0
                data = port.read(max(1, port.in_waiting))
                host_us = time.monotonic_ns() // 1000
            except (serial.SerialException, OSError) as exc:
                self.serial = None
                return f"{device}: {exc}"
            received += len(data)
            if data:
                self._handle(data, device, host_us)
            if self.connected:
                return None
        self.serial = None
        counts = {k: v for k, v in self.protocol.counters.items() if k in p.REFUSAL_REASONS and v}
        hint = ""
        if counts.get("crc") or counts.get("frame"):
            hint = f"; garbled lines suggest a wrong baud rate (the box must run at {p.BAUD})"
        elif counts.get("version"):
            hint = "; the box speaks another protocol version: update the firmware or tabletop"
        elif counts.get("nohello"):
            hint = "; it sends lines but never HELLO: reflash the firmware"
        return (
            f"{device}: no HELLO within {self.hello_timeout_s:g} s "
            f"({received} bytes, refused lines {counts or 'none'}){hint}"
        )

    def _read_once(self) -> None:
        port = self.serial
        assert port is not None
        try:
            data = port.read(max(1, port.in_waiting))
            host_us = time.monotonic_ns() // 1000  # when the bytes were read: the clock fit's host side
        except (serial.SerialException, OSError) as exc:
            self._lost(f"pad box on {self.connected_port} disconnected ({exc})")
            return
        if data:
            self._handle(data, self.connected_port or "?", host_us)
        silent_s = (time.monotonic_ns() - self._last_line_ns) / 1e9
        if silent_s > self.silence_timeout_s + self.hello_timeout_s:
            self._lost(f"pad box on {self.connected_port} silent for {silent_s:.1f} s; reopening the port")
        elif silent_s > self.silence_timeout_s and not self._silence_reported:
            self._silence_reported = True
            self.notify("error", f"pad box on {self.connected_port} silent for {silent_s:.1f} s (no heartbeat); asking for HELLO")
            try:
                port.write(p.encode_hello())
            except (serial.SerialException, OSError):
                pass

    def _handle(self, data: bytes, device: str, host_us: int) -> None:
        """Act on every event in ``data``, bytes read at host monotonic time ``host_us``."""
        for ev in self.protocol.data_received(data):
            if isinstance(ev, p.Refused):
                self._log_refusal(ev)
                continue
            if isinstance(ev, p.Dropped):
                self.notify("dropped", f"{ev.count} line(s) from the pad box lost before seq {ev.seq}", count=ev.count)
                continue
            self._last_line_ns = time.monotonic_ns()
            if self._silence_reported:
                self._silence_reported = False
                self.notify("info", f"pad box on {device} talking again")
            if isinstance(ev, p.Hello):
                self._on_hello(ev, device, host_us)
            elif isinstance(ev, p.Hit):
                self._on_hit(ev)  # an onset, not a send time: no use to the clock fit
            elif isinstance(ev, (p.Heartbeat, p.Levels)):
                self._reference(ev.device_us, host_us)
                if isinstance(ev, p.Levels):
                    self._on_levels(ev)
            else:  # OK / ERR / CFG: replies for the command waiting in _command
                self._replies.put(ev)

    def _on_hello(self, hello: p.Hello, device: str, host_us: int) -> None:
        if hello.new_session:
            # Continue the source clock from where it was (time passes while unplugged), never backwards.
            floor = self.now_us()
            if self._last_hit_us is not None:
                floor = max(floor, self._last_hit_us + 1)
            # A restarted (or another) box: its clock's offset and rate are fitted afresh.
            self.box_clock.reset()
            fit = self.box_clock.add(hello.device_us, host_us)
            with self._state:
                self.offset_us = floor - hello.device_us
                self._fit = fit
        else:
            self._reference(hello.device_us, host_us)
        self.hello = hello
        self.resolution_us = hello.resolution_us
        if self.expected_pads is None:
            self.pad_count = hello.pads
        elif hello.pads != self.expected_pads:
            self.notify(
                "error",
                f"pad box on {device} has {hello.pads} pads but {self.expected_pads} are configured; "
                f"hits on pads above {self.expected_pads} are ignored",
            )
        if not self.connected:
            was = self._last_port
            self.connected_port = device
            self._last_port = device
            self.error = None
            self._connected.set()
            if was is not None:
                self.reconnects += 1
            moved = f" (was {was})" if was and was != device else ""
            self.notify(
                "connected",
                f"pad box on {device}{moved}: firmware {hello.firmware}, {hello.pads} {hello.mode} pads, "
                f"resolution {hello.resolution_us} us",
                port=device,
                firmware=hello.firmware,
                pads=hello.pads,
            )
        elif hello.new_session:
            self.notify("info", f"pad box on {device} restarted (firmware {hello.firmware}); clock re-based")

    def _on_hit(self, hit: p.Hit) -> None:
        at_us = self.offset_us + hit.device_us
        self._last_hit_us = at_us if self._last_hit_us is None else max(self._last_hit_us, at_us)
        self.emit(
            PadHit(
                pad=hit.pad,
                at_us=at_us,
                kind=HitKind.SLAP if hit.kind == "S" else HitKind.TOUCH,
                strength=hit.peak / p.PEAK_MAX,
                resolution_us=self.resolution_us,
            )
        )

    def _log_refusal(self, ev: p.Refused) -> None:
        n = self._logged.get(ev.reason, 0) + 1
        self._logged[ev.reason] = n
        if n <= LOGGED_REFUSALS:
            quiet = " (further ones only counted)" if n == LOGGED_REFUSALS else ""
            log.warning("pad box line refused, %s: %s: %r%s", ev.reason, ev.detail, ev.line[:80], quiet)

    def _report_error(self, message: str) -> None:
        """Keep ``message`` for status(); notify only when it says something new (not just new counts)."""
        previous, self.error = self.error, message
        if previous is None or re.sub(r"\d+", "#", previous) != re.sub(r"\d+", "#", message):
            self.notify("error", message)

    def _bank_counters(self) -> None:
        """Keep the counts of the previous connection before the protocol is reset."""
        for k, v in self.protocol.counters.items():
            self._totals[k] = self._totals.get(k, 0) + v
            self.protocol.counters[k] = 0

    def _lost(self, message: str) -> None:
        was_connected = self.connected
        self._connected.clear()
        self._close()
        self.streaming = False
        if was_connected:
            self.error = message
            self.notify("disconnected", message, port=self.connected_port)
        else:
            self._report_error(message)

    def _close(self) -> None:
        port, self.serial = self.serial, None
        if port is not None:
            try:
                port.close()
            except Exception:
                pass

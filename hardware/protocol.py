"""The pad box wire protocol (firmware/PROTOCOL.md, version 1), with no I/O.

Like pyserial's ``serial.threaded.LineReader``, :class:`PadBoxProtocol` is fed
bytes (``data_received``) and returns what they meant as event values; it
never reads a port, sleeps or raises. The transport (``hardware/padbox.py``,
or a test) feeds it. The same module encodes host commands. The shared format
(limits, CRC, framing) is :mod:`hardware.framing`; the box's end (parsing host
commands for the emulator) is :mod:`hardware.box_side`. Both are re-exported
here, so ``hardware.protocol`` stays the one name for the whole protocol.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.checks import whole_number
from core.errors import InputError

from hardware.box_events import Dropped, Err, Event, Heartbeat, Hello, Hit, Levels, Ok, PadConfig, Refused
from hardware.box_side import Command, CommandError, encode_box_line, hex_levels, parse_command
from hardware.framing import (
    _CRC_FIELD,
    _FW,
    _HEX3,
    _PRINTABLE,
    BAUD,
    CFG_FIELDS,
    COMMANDS,
    ERROR_CODES,
    HEARTBEAT_US,
    LEVELS_PERIOD_US,
    MAX_BODY,
    MAX_LINE,
    MAX_PADS,
    PARAMS,
    PEAK_MAX,
    PROTOCOL_VERSION,
    REFUSAL_REASONS,
    SEQ_MOD,
    TIME_MOD,
    _number,
    crc16,
    frame,
)

__all__ = [
    "BAUD", "CFG_FIELDS", "COMMANDS", "ERROR_CODES", "HEARTBEAT_US", "LEVELS_PERIOD_US", "MAX_BODY", "MAX_LINE",
    "MAX_PADS", "PARAMS", "PEAK_MAX", "PROTOCOL_VERSION", "REFUSAL_REASONS", "SEQ_MOD", "TIME_MOD",
    "Command", "CommandError", "Dropped", "Err", "Event", "Hello", "Heartbeat", "Hit", "Levels", "Ok", "PadBoxProtocol",
    "PadConfig", "Refused", "check_param", "crc16", "encode_box_line", "encode_cfg", "encode_defaults", "encode_hello",
    "encode_save", "encode_set", "encode_stream", "frame", "hex_levels", "parse_command",
]

log = logging.getLogger(__name__)


#: Fields after ``<seq> <TYPE>`` per line type.
_FIELD_COUNTS = {"HELLO": 6, "HIT": 4, "HB": 1, "LVL": 3, "CFG": 7, "ERR": 2}


class _Refuse(Exception):
    """Internal: a line is refused for ``reason``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass
class _Session:
    """What one HELLO established: pad count, expected seq, clock unwrapping state."""

    hello: Hello
    expected_seq: int
    last_t: int
    last_us: int

    def unwrap(self, t: int) -> int:
        """Map raw 32-bit device time to 64-bit microseconds (only ever moves forward)."""
        d = (t - self.last_t) % TIME_MOD
        if d < TIME_MOD // 2:
            self.last_t = t
            self.last_us += d
            return self.last_us
        return self.last_us - (TIME_MOD - d)


class PadBoxProtocol:
    """Host side of the pad box protocol: bytes in, events out, never raises.

    Every refused line is counted in ``counters`` under its reason (see
    :data:`REFUSAL_REASONS`), plus ``lines`` (accepted lines), ``dropped``
    (lines lost, from sequence gaps), ``hits``, ``bytes`` and ``internal``
    (a bug in this parser, caught and logged; tests require it to stay 0).
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._discarding = False
        self._session: _Session | None = None
        self.counters: dict[str, int] = {
            name: 0 for name in ("bytes", "lines", "hits", "dropped", "internal", *REFUSAL_REASONS)
        }

    @property
    def hello(self) -> Hello | None:
        """The HELLO of the current session, or None before one (or after a refused one)."""
        return self._session.hello if self._session else None

    def reset(self) -> None:
        """Forget the partial line and the session (call when the port is reopened)."""
        self._buf.clear()
        self._discarding = False
        self._session = None

    def data_received(self, data: bytes) -> list[Event]:
        """Feed bytes as they came off the wire; returns the events of every completed line."""
        events: list[Event] = []
        try:
            self._feed(bytes(data), events)
        except Exception:  # a bug here must never take the reader thread down
            self.counters["internal"] += 1
            log.exception("pad box protocol: internal error; line buffer cleared")
            self._buf.clear()
            self._discarding = False
        return events

    def _feed(self, data: bytes, events: list[Event]) -> None:
        self.counters["bytes"] += len(data)
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            end = len(data) if nl < 0 else nl
            if self._discarding:
                if nl >= 0:
                    self._discarding = False
            else:
                self._buf += data[start:end]
                if len(self._buf) > MAX_LINE - 1:
                    self._refuse(events, "long", bytes(self._buf[:MAX_LINE]), f"line over {MAX_LINE} bytes")
                    self._buf.clear()
                    self._discarding = nl < 0
                elif nl >= 0:
                    line = bytes(self._buf)
                    self._buf.clear()
                    self._line(line, events)
            if nl < 0:
                break
            start = nl + 1

    def _refuse(self, events: list[Event], reason: str, line: bytes, detail: str) -> None:
        self.counters[reason] += 1
        log.debug("pad box line refused (%s: %s): %r", reason, detail, line)
        events.append(Refused(reason, line, detail))

    def _line(self, line: bytes, events: list[Event]) -> None:
        if line in (b"", b"\r"):
            return  # boards sometimes print a blank line after reset
        try:
            self._parse(line, events)
        except _Refuse as refusal:
            self._refuse(events, refusal.reason, line, refusal.detail)

    def _parse(self, line: bytes, events: list[Event]) -> None:
        raw = line[:-1] if line.endswith(b"\r") else line
        if not _PRINTABLE.fullmatch(raw):
            raise _Refuse("frame", "byte outside printable ASCII")
        body, star, checksum = raw.rpartition(b"*")
        if not star or b"*" in body:
            raise _Refuse("frame", "no single '*' before the checksum")
        if not _CRC_FIELD.fullmatch(checksum):
            raise _Refuse("frame", "checksum is not 4 uppercase hex digits")
        if crc16(body) != int(checksum, 16):
            raise _Refuse("crc", f"checksum {checksum.decode()} does not match {crc16(body):04X}")
        fields = body.decode("ascii").split(" ")
        seq = _number(fields[0], SEQ_MOD - 1)
        if seq is None:
            raise _Refuse("seq", f"sequence number {fields[0]!r} is not 0..65535")
        kind = fields[1] if len(fields) > 1 else ""
        if kind == "HELLO":
            self._hello(seq, fields[2:], events)
            return
        session = self._session
        if session is None:
            raise _Refuse("nohello", "line before the box said HELLO")
        d = (seq - session.expected_seq) % SEQ_MOD
        if d >= SEQ_MOD // 2:
            raise _Refuse("seq", f"sequence number {seq} goes back (expected {session.expected_seq})")
        session.expected_seq = (seq + 1) % SEQ_MOD
        if d:
            self.counters["dropped"] += d
            log.warning("pad box: %d line(s) lost before seq %d", d, seq)
            events.append(Dropped(d, seq))
        events.append(self._content(session, seq, kind, fields[2:]))
        self.counters["lines"] += 1

    def _hello(self, seq: int, args: list[str], events: list[Event]) -> None:
        previous = self._session
        self._session = None  # a refused HELLO ends the session
        if len(args) != _FIELD_COUNTS["HELLO"]:
            raise _Refuse("fields", f"HELLO needs {_FIELD_COUNTS['HELLO']} fields, got {len(args)}")
        proto_s, fw, pads_s, res_s, mode, t_s = args
        proto, pads, res, t = (_number(x) for x in (proto_s, pads_s, res_s, t_s))
        if None in (proto, pads, res, t):
            raise _Refuse("number", "HELLO field is not a number")
        assert proto is not None and pads is not None and res is not None and t is not None
        if proto != PROTOCOL_VERSION:
            raise _Refuse("version", f"box speaks protocol {proto}; this host speaks {PROTOCOL_VERSION}: update the firmware or the host")
        if not _FW.fullmatch(fw):
            raise _Refuse("value", f"firmware version {fw!r} is not 1-16 of 0-9 A-Z a-z . _ + -")
        if not 1 <= pads <= MAX_PADS:
            raise _Refuse("value", f"pad count {pads} is not 1..{MAX_PADS}")
        if not 1 <= res <= 65535:
            raise _Refuse("value", f"resolution {res} us is not 1..65535")
        if mode not in ("piezo", "button"):
            raise _Refuse("value", f"mode {mode!r} is not piezo or button")
        if t >= TIME_MOD:
            raise _Refuse("value", f"time {t} is not 32-bit")
        same = (
            previous is not None
            and seq == previous.expected_seq
            and (previous.hello.pads, previous.hello.mode) == (pads, mode)
        )
        if same:
            assert previous is not None
            session = previous
            device_us = session.unwrap(t)
        else:
            session = _Session(hello=None, expected_seq=0, last_t=t, last_us=t)  # type: ignore[arg-type]
            device_us = t
        hello = Hello(seq, proto, fw, pads, res, mode, t, device_us, new_session=not same)
        session.hello = hello
        session.expected_seq = (seq + 1) % SEQ_MOD
        self._session = session
        self.counters["lines"] += 1
        events.append(hello)

    def _content(self, session: _Session, seq: int, kind: str, args: list[str]) -> Event:
        if kind in ("OK",):
            if not args:
                raise _Refuse("fields", "OK needs the echoed command")
            if args[0] not in COMMANDS:
                raise _Refuse("value", f"OK for unknown command {args[0]!r}")
            return Ok(seq, " ".join(args))
        if kind not in _FIELD_COUNTS:
            raise _Refuse("type", f"unknown line type {kind!r}")
        if len(args) != _FIELD_COUNTS[kind]:
            raise _Refuse("fields", f"{kind} needs {_FIELD_COUNTS[kind]} fields, got {len(args)}")
        pads = session.hello.pads
        if kind == "ERR":
            code, cmd = args
            if code not in ERROR_CODES:
                raise _Refuse("value", f"unknown error code {code!r}")
            if cmd != "-" and cmd not in COMMANDS:
                raise _Refuse("value", f"ERR for unknown command {cmd!r}")
            return Err(seq, code, cmd)
        if kind == "LVL":
            t = self._time(args[0])
            levels = _hex_values(args[1], pads)
            peaks = _hex_values(args[2], pads)
            return Levels(seq, t, levels, peaks, session.unwrap(t), args[1], args[2])
        numbers = [_number(a) for a in (args if kind != "HIT" else (args[0], args[1], args[3]))]
        if None in numbers:
            raise _Refuse("number", f"{kind} field is not a canonical number")
        if kind == "HB":
            t = self._time(args[0])
            return Heartbeat(seq, t, session.unwrap(t))
        if kind == "HIT":
            t = self._time(args[0])
            pad, peak = int(args[1]), int(args[3])
            if not 1 <= pad <= pads:
                raise _Refuse("pad", f"pad {pad} is not 1..{pads}")
            if args[2] not in ("S", "T"):
                raise _Refuse("value", f"hit kind {args[2]!r} is not S or T")
            if peak > PEAK_MAX:
                raise _Refuse("value", f"peak {peak} is over {PEAK_MAX}")
            self.counters["hits"] += 1
            return Hit(seq, t, pad, args[2], peak, session.unwrap(t))
        # CFG
        pad = int(args[0])
        if not 1 <= pad <= pads:
            raise _Refuse("pad", f"pad {pad} is not 1..{pads}")
        settings = dict(zip(CFG_FIELDS, (int(a) for a in args[1:])))
        for name, value in settings.items():
            lo, hi, _ = PARAMS[name]
            if not lo <= value <= hi:
                raise _Refuse("value", f"{name} {value} is not {lo}..{hi}")
        return PadConfig(seq, pad, settings)

    @staticmethod
    def _time(text: str) -> int:
        value = _number(text)
        if value is None:
            raise _Refuse("number", f"time {text!r} is not a canonical number")
        if value >= TIME_MOD:
            raise _Refuse("value", f"time {value} is not 32-bit")
        return value


def _hex_values(text: str, pads: int) -> tuple[int, ...]:
    """Decode ``pads`` groups of 3 uppercase hex digits (000..3FF)."""
    if len(text) != 3 * pads or not _HEX3.fullmatch(text):
        raise _Refuse("value", f"{text!r} is not {pads} groups of 3 hex digits 000..3FF")
    return tuple(int(text[i:i + 3], 16) for i in range(0, len(text), 3))


# ---------------------------------------------------------------- host -> box commands


def check_param(name: str, value: int) -> None:
    """Raise InputError unless ``name`` is a SET parameter and ``value`` is in its range."""
    if name not in PARAMS:
        raise InputError(f"unknown pad parameter {name!r}; valid: {', '.join(PARAMS)}")
    lo, hi, _ = PARAMS[name]
    whole_number(value, lo, hi, f"pad parameter {name}")


def encode_hello() -> bytes:
    """Ask the box to say HELLO again."""
    return frame("HELLO")


def encode_cfg() -> bytes:
    """Ask for every pad's settings (CFG lines, then OK CFG)."""
    return frame("CFG")


def encode_set(pad: int, name: str, value: int) -> bytes:
    """Set one pad parameter now (not kept over a reset until SAVE)."""
    whole_number(pad, 1, MAX_PADS, "pad")
    check_param(name, value)
    return frame(f"SET {pad} {name} {value}")


def encode_save() -> bytes:
    """Keep the current settings in EEPROM."""
    return frame("SAVE")


def encode_stream(on: bool) -> bytes:
    """Start or stop LVL streaming."""
    return frame(f"STREAM {1 if on else 0}")


def encode_defaults() -> bytes:
    """Restore factory settings in RAM (SAVE keeps them)."""
    return frame("DEFAULTS")

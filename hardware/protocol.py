"""The pad box wire protocol (firmware/PROTOCOL.md, version 1), with no I/O.

Like pyserial's ``serial.threaded.LineReader``, :class:`PadBoxProtocol` is fed
bytes (``data_received``) and returns what they meant as event values; it
never reads a port, sleeps or raises. The transport (``hardware/padbox.py``,
or a test) feeds it. The same module encodes host commands, and parses them
on the box side for the emulator (``hardware/emulator.py``).
"""

from __future__ import annotations

import binascii
import logging
import re
from dataclasses import dataclass, field
from typing import Union

from core.errors import InputError

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
BAUD = 250000
#: Longest line, counting every byte including ``\r`` and ``\n``.
MAX_LINE = 80
#: Longest body (``MAX_LINE`` minus ``*CCCC`` and ``\n``).
MAX_BODY = MAX_LINE - 6
MAX_PADS = 8
SEQ_MOD = 1 << 16
TIME_MOD = 1 << 32
PEAK_MAX = 1023
HEARTBEAT_US = 500_000
LEVELS_PERIOD_US = 50_000

#: Per-pad parameters of ``SET``: name -> (lowest, highest, suggested default).
PARAMS: dict[str, tuple[int, int, int]] = {
    "slap": (1, 1023, 200),
    "touch": (0, 1023, 60),
    "scan": (0, 20_000, 2_000),
    "mask": (0, 1_000_000, 30_000),
    "xtalk": (0, 100, 50),
    "xwin": (0, 100_000, 5_000),
}
#: Order of the settings in a CFG line (after the pad number).
CFG_FIELDS: tuple[str, ...] = ("slap", "touch", "scan", "mask", "xtalk", "xwin")
COMMANDS: tuple[str, ...] = ("HELLO", "CFG", "SET", "SAVE", "STREAM", "DEFAULTS")
ERROR_CODES: tuple[str, ...] = ("LONG", "FRAME", "CRC", "UNKNOWN", "ARGS", "PAD", "PARAM", "RANGE", "EEPROM")
#: Why the host refuses a box line (the counters of PadBoxProtocol use these names).
REFUSAL_REASONS: tuple[str, ...] = (
    "long", "frame", "crc", "seq", "nohello", "version", "type", "fields", "number", "value", "pad",
)

_PRINTABLE = re.compile(rb"[\x20-\x7e]*")
_CRC_FIELD = re.compile(rb"[0-9A-F]{4}")
_NUMBER = re.compile(r"0|[1-9][0-9]*")
_FW = re.compile(r"[0-9A-Za-z._+-]{1,16}")
_HEX3 = re.compile(r"(?:[0-3][0-9A-F]{2})+")


def crc16(body: bytes) -> int:
    """CRC-16/XMODEM (poly 0x1021, init 0): avr-libc's ``_crc_xmodem_update``."""
    return binascii.crc_hqx(body, 0)


def frame(body: str | bytes) -> bytes:
    """One wire line: ``body*CCCC\\n``. Raises InputError if it would break the framing."""
    if isinstance(body, str) and not body.isascii():
        raise InputError(f"a line body must be printable ASCII, got {body!r}")
    raw = body.encode("ascii") if isinstance(body, str) else bytes(body)
    if not _PRINTABLE.fullmatch(raw) or b"*" in raw:
        raise InputError(f"a line body must be printable ASCII without '*', got {raw!r}")
    if len(raw) > MAX_BODY:
        raise InputError(f"a line body may be at most {MAX_BODY} bytes, got {len(raw)}")
    return raw + b"*" + f"{crc16(raw):04X}".encode("ascii") + b"\n"


def _number(text: str, hi: int | None = None) -> int | None:
    """A canonical decimal number (no larger than ``hi`` if given), else None."""
    if len(text) > MAX_LINE or not _NUMBER.fullmatch(text):
        return None
    value = int(text)
    return value if hi is None or value <= hi else None


# ---------------------------------------------------------------- box -> host events


@dataclass(frozen=True, slots=True)
class Hello:
    """The box introduced itself. ``new_session``: its clock (and seq) restarted."""

    seq: int
    proto: int
    firmware: str
    pads: int
    resolution_us: int
    mode: str
    t: int
    device_us: int
    new_session: bool


@dataclass(frozen=True, slots=True)
class Hit:
    """A hit line: onset ``t`` (raw 32-bit) and ``device_us`` (unwrapped, this session)."""

    seq: int
    t: int
    pad: int
    kind: str
    peak: int
    device_us: int


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """The box's clock now."""

    seq: int
    t: int
    device_us: int


@dataclass(frozen=True, slots=True)
class Levels:
    """Live levels and the peaks since the previous LVL line, pad 1 first."""

    seq: int
    t: int
    levels: tuple[int, ...]
    peaks: tuple[int, ...]
    device_us: int
    raw_levels: str = ""
    raw_peaks: str = ""


@dataclass(frozen=True, slots=True)
class PadConfig:
    """One pad's settings, in answer to ``CFG``."""

    seq: int
    pad: int
    settings: dict[str, int]


@dataclass(frozen=True, slots=True)
class Ok:
    """The box did a command; ``command`` is the body it echoed (``SET 3 slap 250``)."""

    seq: int
    command: str


@dataclass(frozen=True, slots=True)
class Err:
    """The box refused a command: ``code`` from PROTOCOL.md, ``command`` word or ``-``."""

    seq: int
    code: str
    command: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """``count`` lines never arrived (a gap in the sequence numbers before ``seq``)."""

    count: int
    seq: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A line the host did not believe. ``reason`` is one of REFUSAL_REASONS."""

    reason: str
    line: bytes
    detail: str = ""


Event = Union[Hello, Hit, Heartbeat, Levels, PadConfig, Ok, Err, Dropped, Refused]

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
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InputError(f"pad parameter {name} must be a whole number from {lo} to {hi}, got {value!r}")


def encode_hello() -> bytes:
    """Ask the box to say HELLO again."""
    return frame("HELLO")


def encode_cfg() -> bytes:
    """Ask for every pad's settings (CFG lines, then OK CFG)."""
    return frame("CFG")


def encode_set(pad: int, name: str, value: int) -> bytes:
    """Set one pad parameter now (not kept over a reset until SAVE)."""
    if isinstance(pad, bool) or not isinstance(pad, int) or not 1 <= pad <= MAX_PADS:
        raise InputError(f"pad must be a whole number from 1 to {MAX_PADS}, got {pad!r}")
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


# ---------------------------------------------------------------- box side (emulator)


@dataclass(frozen=True, slots=True)
class Command:
    """A host command as the box understood it. ``args`` by name (pad, param, value, on)."""

    name: str
    args: dict[str, int | str] = field(default_factory=dict)

    def echo(self) -> str:
        """The canonical body the box echoes in its OK reply."""
        if self.name == "SET":
            return f"SET {self.args['pad']} {self.args['param']} {self.args['value']}"
        if self.name == "STREAM":
            return f"STREAM {self.args['on']}"
        return self.name


@dataclass(frozen=True, slots=True)
class CommandError:
    """A host command the box refuses: reply ``ERR <code> <command>``."""

    code: str
    command: str = "-"

    def reply(self) -> str:
        """The reply body (without seq)."""
        return f"ERR {self.code} {self.command}"


def parse_command(line: bytes, pads: int) -> Command | CommandError | None:
    """Parse one host line (without ``\\n``) as the box does. None for an empty line.

    ``line`` longer than the limit is ``LONG``; the caller passes a truncated
    line with a flag or simply the whole line (both work here).
    """
    if line in (b"", b"\r"):
        return None
    if len(line) > MAX_LINE - 1:
        return CommandError("LONG")
    raw = line[:-1] if line.endswith(b"\r") else line
    if not _PRINTABLE.fullmatch(raw):
        return CommandError("FRAME")
    body, star, checksum = raw.rpartition(b"*")
    if not star or b"*" in body or not _CRC_FIELD.fullmatch(checksum):
        return CommandError("FRAME")
    if crc16(body) != int(checksum, 16):
        return CommandError("CRC")
    words = body.decode("ascii").split(" ")
    name, args = words[0], words[1:]
    if name not in COMMANDS:
        return CommandError("UNKNOWN")
    if name in ("HELLO", "CFG", "SAVE", "DEFAULTS"):
        return Command(name) if not args else CommandError("ARGS", name)
    if name == "STREAM":
        if len(args) != 1 or not _NUMBER.fullmatch(args[0]):
            return CommandError("ARGS", name)
        if args[0] not in ("0", "1"):
            return CommandError("RANGE", name)
        return Command(name, {"on": int(args[0])})
    # SET <pad> <param> <value>
    if len(args) != 3 or not _NUMBER.fullmatch(args[0]) or not _NUMBER.fullmatch(args[2]):
        return CommandError("ARGS", name)
    pad = int(args[0])
    if not 1 <= pad <= pads:
        return CommandError("PAD", name)
    if args[1] not in PARAMS:
        return CommandError("PARAM", name)
    value = int(args[2])
    lo, hi, _ = PARAMS[args[1]]
    if not lo <= value <= hi:
        return CommandError("RANGE", name)
    return Command(name, {"pad": pad, "param": args[1], "value": value})


def encode_box_line(seq: int, body: str) -> bytes:
    """A box->host line: ``<seq> <body>*CCCC\\n`` (used by the emulator)."""
    return frame(f"{seq % SEQ_MOD} {body}")


def hex_levels(values: list[int] | tuple[int, ...]) -> str:
    """Encode levels/peaks for an LVL line (3 uppercase hex digits per pad)."""
    return "".join(f"{max(0, min(PEAK_MAX, int(v))):03X}" for v in values)

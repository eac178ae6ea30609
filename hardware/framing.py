"""The pad box wire format shared by both ends: limits, parameters, CRC-16 and line framing (PROTOCOL.md)."""

from __future__ import annotations

import binascii
import re

from core.errors import InputError

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

#: Per-pad parameters of ``SET``: name -> (lowest, highest, suggested default). The suggested
#: thresholds are firmware 2.22.0's, for docs/wiring.md's front end with a capacitor across each
#: disc (its signal x 0.7 at the pin; 200 / 60 and xtalk 50 before, firmware/PROTOCOL.md); xtalk
#: is 2.32.0's (70 from 2.22.0).
PARAMS: dict[str, tuple[int, int, int]] = {
    "slap": (1, 1023, 140),
    "touch": (0, 1023, 42),
    "scan": (0, 20_000, 2_000),
    "mask": (0, 1_000_000, 30_000),
    "xtalk": (0, 100, 55),
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

"""The box's end of the wire protocol: parse host commands as the firmware does, encode box lines.

Used by the pad box emulator (``hardware/emulator.py``) and the protocol tests;
the host's end is :mod:`hardware.protocol`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hardware.framing import _CRC_FIELD, _NUMBER, _PRINTABLE, COMMANDS, MAX_LINE, PARAMS, PEAK_MAX, SEQ_MOD, crc16, frame

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


class LineSplitter:
    """Cut the host's bytes into lines as the box does (no I/O).

    A line longer than ``MAX_LINE - 1`` bytes (before its ``\n``) is refused
    once, as it grows past the limit, and the rest of it up to the next
    ``\n`` is dropped. :meth:`feed` returns the complete lines in order,
    None standing for each refused one (the box answers ``ERR LONG -``).
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes | None]:
        """The lines ``data`` completes (without ``\n``), None for each line too long."""
        out: list[bytes | None] = []
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            chunk = data[start:] if nl < 0 else data[start:nl]
            if not self._discarding:
                self._buf += chunk
                if len(self._buf) > MAX_LINE - 1:
                    out.append(None)
                    self._buf.clear()
                    self._discarding = nl < 0
                elif nl >= 0:
                    out.append(bytes(self._buf))
                    self._buf.clear()
            elif nl >= 0:
                self._discarding = False
            if nl < 0:
                break
            start = nl + 1
        return out

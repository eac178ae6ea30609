"""The shared protocol vectors (firmware/test-vectors/protocol.txt) against the host parser.

The firmware's host tests read the same file; see firmware/PROTOCOL.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from hardware import protocol as p

VECTORS = Path(__file__).resolve().parents[2] / "firmware" / "test-vectors" / "protocol.txt"


@dataclass(frozen=True)
class Vector:
    """One line of the vector file, with the stream lines before it (for seq/time context)."""

    tag: str
    line: bytes
    expect: str
    number: int
    before: tuple[bytes, ...] = ()
    pads: int = 0


def unescape(text: str) -> bytes:
    """Undo the file's escapes: \\xHH and \\\\."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "\\":
            if text[i + 1] == "\\":
                out.append(0x5C)
                i += 2
                continue
            assert text[i + 1] == "x", f"unknown escape in {text!r}"
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
            continue
        out.append(ord(text[i]))
        i += 1
    return bytes(out)


def load_vectors() -> list[Vector]:
    """Parse the vector file as PROTOCOL.md describes it."""
    vectors: list[Vector] = []
    stream: list[bytes] = []
    pads = 0
    for number, row in enumerate(VECTORS.read_text(encoding="ascii").splitlines(), start=1):
        if not row or row.startswith("#"):
            continue
        parts = row.split("\t")
        if parts[0] == "reset":
            stream = []
            continue
        if parts[0] == "pads":
            pads = int(parts[1])
            continue
        tag, line, expect = parts
        raw = unescape(line)
        vectors.append(Vector(tag, raw, expect, number, tuple(stream), pads))
        if tag in ("ok", "bad"):
            stream.append(raw)
    return vectors


ALL = load_vectors()
STREAM = [v for v in ALL if v.tag in ("ok", "bad")]
COMMANDS = [v for v in ALL if v.tag in ("cmd", "cmdbad")]


def describe(events: list[p.Event]) -> str:
    """Render the events of one accepted line the way the vector file writes them."""
    lost = ""
    text = ""
    for ev in events:
        if isinstance(ev, p.Dropped):
            lost = f" lost={ev.count}"
        elif isinstance(ev, p.Hello):
            text = f"HELLO seq={ev.seq} proto={ev.proto} fw={ev.firmware} pads={ev.pads} res={ev.resolution_us} mode={ev.mode} t={ev.t}"
        elif isinstance(ev, p.Hit):
            text = f"HIT seq={ev.seq} t={ev.t} pad={ev.pad} kind={ev.kind} peak={ev.peak}"
        elif isinstance(ev, p.Heartbeat):
            text = f"HB seq={ev.seq} t={ev.t}"
        elif isinstance(ev, p.Levels):
            text = f"LVL seq={ev.seq} t={ev.t} levels={ev.raw_levels} peaks={ev.raw_peaks}"
        elif isinstance(ev, p.PadConfig):
            text = f"CFG seq={ev.seq} pad={ev.pad} " + " ".join(f"{k}={v}" for k, v in ev.settings.items())
        elif isinstance(ev, p.Ok):
            text = f"OK seq={ev.seq} cmd={ev.command.replace(' ', '_')}"
        elif isinstance(ev, p.Err):
            text = f"ERR seq={ev.seq} code={ev.code} cmd={ev.command}"
        else:
            text = f"unexpected {ev!r}"
    return text + lost


def test_vector_file_has_every_kind_of_case() -> None:
    reasons = {v.expect for v in STREAM if v.tag == "bad"}
    assert reasons == set(p.REFUSAL_REASONS)
    assert {v.tag for v in ALL} == {"ok", "bad", "cmd", "cmdbad"}
    codes = {v.expect.split()[1] for v in COMMANDS if v.tag == "cmdbad"}
    assert codes == set(p.ERROR_CODES) - {"EEPROM"}


@pytest.mark.parametrize("vector", STREAM, ids=lambda v: f"L{v.number}-{v.tag}")
def test_box_line(vector: Vector) -> None:
    proto = p.PadBoxProtocol()
    for earlier in vector.before:
        proto.data_received(earlier + b"\n")
    before = dict(proto.counters)
    events = proto.data_received(vector.line + b"\n")
    if vector.tag == "ok":
        assert not [e for e in events if isinstance(e, p.Refused)]
        assert describe(events) == vector.expect
        assert proto.counters["lines"] == before["lines"] + 1
    else:
        assert [type(e) for e in events] == [p.Refused], events
        assert events[0].reason == vector.expect, events[0].detail
        assert proto.counters[vector.expect] == before[vector.expect] + 1
        assert proto.counters["hits"] == before["hits"]


@pytest.mark.parametrize("vector", COMMANDS, ids=lambda v: f"L{v.number}-{v.tag}")
def test_host_command(vector: Vector) -> None:
    parsed = p.parse_command(vector.line, vector.pads)
    if vector.tag == "cmd":
        assert isinstance(parsed, p.Command), parsed
        text = " ".join([parsed.name] + [f"{k}={v}" for k, v in parsed.args.items()])
        assert text == vector.expect
    else:
        assert isinstance(parsed, p.CommandError), parsed
        assert parsed.reply() == vector.expect


@pytest.mark.parametrize("vector", [v for v in COMMANDS if v.tag == "cmd" and b"\r" not in v.line],
                         ids=lambda v: f"L{v.number}")
def test_host_encoder_matches_vectors(vector: Vector) -> None:
    """Our command encoder produces the vector lines byte for byte."""
    parsed = p.parse_command(vector.line, vector.pads)
    assert isinstance(parsed, p.Command)
    encoders = {
        "HELLO": p.encode_hello, "CFG": p.encode_cfg, "SAVE": p.encode_save, "DEFAULTS": p.encode_defaults,
    }
    if parsed.name in encoders:
        wire = encoders[parsed.name]()
    elif parsed.name == "STREAM":
        wire = p.encode_stream(bool(parsed.args["on"]))
    else:
        wire = p.encode_set(int(parsed.args["pad"]), str(parsed.args["param"]), int(parsed.args["value"]))
    assert wire == vector.line + b"\n"


@pytest.mark.parametrize("vector", [v for v in STREAM if v.tag == "ok" and re.fullmatch(rb"[ -~]*", v.line)],
                         ids=lambda v: f"L{v.number}")
def test_ok_lines_are_canonical(vector: Vector) -> None:
    """Every plain ok line is exactly what the box-side encoder writes for its body."""
    body, _, _ = vector.line.partition(b"*")
    seq, _, rest = body.decode().partition(" ")
    assert p.encode_box_line(int(seq), rest) == vector.line + b"\n"

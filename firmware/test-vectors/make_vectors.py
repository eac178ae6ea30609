#!/usr/bin/env python3
"""Write protocol.txt, the shared protocol test vectors (see ../PROTOCOL.md).

The expectations below are written by hand from PROTOCOL.md, not computed by
the host parser, so the vectors test the parser instead of echoing it. This
script only adds checksums and escapes. Run it after editing the lists:

    python3 firmware/test-vectors/make_vectors.py
"""

from __future__ import annotations

import binascii
from pathlib import Path

OUT = Path(__file__).with_name("protocol.txt")


def crc(body: bytes) -> str:
    """CRC-16/XMODEM of ``body`` as 4 uppercase hex digits."""
    return f"{binascii.crc_hqx(body, 0):04X}"


def line(body: str | bytes, cr: bool = False) -> bytes:
    """A framed line (without its final newline)."""
    b = body.encode() if isinstance(body, str) else body
    return b + b"*" + crc(b).encode() + (b"\r" if cr else b"")


def wrong_crc(body: str) -> bytes:
    """A framed line whose checksum is off by one."""
    b = body.encode()
    value = (binascii.crc_hqx(b, 0) + 1) & 0xFFFF
    return b + b"*" + f"{value:04X}".encode()


def escape(raw: bytes) -> str:
    """Escape bytes that are not printable ASCII as \\xHH, and backslash as \\\\."""
    out = []
    for byte in raw:
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte <= 0x7E and byte != 0x09:
            out.append(chr(byte))
        else:
            out.append(f"\\x{byte:02X}")
    return "".join(out)


LONG_BODY = "5 FOO " + "x" * 68  # 74 bytes: the longest body, an 80-byte line
assert len(LONG_BODY) == 74
MAX_BODY = "37 FOO " + "x" * 67  # 74 bytes with the seq expected at that point
assert len(MAX_BODY) == 74

STREAMS: list[list[tuple[str, bytes, str]]] = [
    [
        ("bad", line("0 HB 1000"), "nohello"),
        ("bad", line("0 HIT 1000 1 S 900"), "nohello"),
        ("ok", line("0 HELLO 1 1.0.0 4 184 piezo 1052"), "HELLO seq=0 proto=1 fw=1.0.0 pads=4 res=184 mode=piezo t=1052"),
        ("ok", line("1 HB 500000"), "HB seq=1 t=500000"),
        ("ok", line("2 HIT 612345 3 S 812"), "HIT seq=2 t=612345 pad=3 kind=S peak=812"),
        ("ok", line("3 HIT 612400 1 T 140"), "HIT seq=3 t=612400 pad=1 kind=T peak=140"),
        ("ok", line("4 HB 1000000", cr=True), "HB seq=4 t=1000000"),
        ("bad", wrong_crc("5 HIT 1100000 2 S 900"), "crc"),
        ("bad", b"5 HB 1100000*" + crc(b"5 HB 1100000").lower().encode(), "frame"),  # lowercase hex
        ("bad", b"5 HIT 1100000 2 S 900", "frame"),
        ("bad", b"5 HIT 1100000 2 S 900*12", "frame"),
        ("bad", line("5 HIT 1100000 2 S 9\x0100"), "frame"),
        ("bad", line(b"5 HIT 1100000 2 S \xc3\xa9"), "frame"),
        ("bad", line("5 HIT 1100000 2 S 900*1"), "frame"),
        ("bad", line("5 HB 1100000") + b"\r\r", "frame"),
        ("bad", line(LONG_BODY + "x"), "long"),
        ("ok", line("5 HIT 1100000 2 S 900"), "HIT seq=5 t=1100000 pad=2 kind=S peak=900"),
        ("bad", line("6 HIT 1200000 0 S 900"), "pad"),
        ("bad", line("7 HIT 1200000 5 S 900"), "pad"),
        ("bad", line("8 HIT 12O0000 1 S 900"), "number"),
        ("bad", line("9 HIT 1200000 1 S"), "fields"),
        ("bad", line("10 HIT 1200000 1 X 900"), "value"),
        ("bad", line("11 HIT 1200000 1 S 1024"), "value"),
        ("bad", line("12 HIT 1200000 01 S 900"), "number"),
        ("bad", line("13 FOO 1"), "type"),
        ("bad", line("14 HB 4294967296"), "value"),
        ("bad", line("15 HB 1300000 7"), "fields"),
        ("bad", line("16 HB -1300000"), "number"),
        ("bad", line("17 HB  1300000"), "fields"),
        ("ok", line("18 HB 1500000"), "HB seq=18 t=1500000"),
        ("ok", line("22 HIT 1600000 4 S 300"), "HIT seq=22 t=1600000 pad=4 kind=S peak=300 lost=3"),
        ("bad", line("22 HB 1700000"), "seq"),
        ("bad", line("19 HB 1700000"), "seq"),
        ("ok", line("23 HB 1700000"), "HB seq=23 t=1700000"),
        ("bad", line("x HB 1750000"), "seq"),
        ("bad", line("65536 HB 1750000"), "seq"),
        ("bad", line("024 HB 1750000"), "seq"),
        ("ok", line("24 LVL 1750000 01A3FF000010 3FF3FF010020"), "LVL seq=24 t=1750000 levels=01A3FF000010 peaks=3FF3FF010020"),
        ("bad", line("25 LVL 1800000 01A3FF 3FF3FF010020"), "value"),
        ("bad", line("26 LVL 1800000 01a3ff000010 3FF3FF010020"), "value"),
        ("bad", line("27 LVL 1800000 01A400000010 3FF3FF010020"), "value"),
        ("ok", line("28 CFG 1 200 60 2000 30000 50 5000"), "CFG seq=28 pad=1 slap=200 touch=60 scan=2000 mask=30000 xtalk=50 xwin=5000"),
        ("bad", line("29 CFG 9 200 60 2000 30000 50 5000"), "pad"),
        ("bad", line("30 CFG 2 200 60 2000 30000 50"), "fields"),
        ("ok", line("31 OK SET 3 slap 250"), "OK seq=31 cmd=SET_3_slap_250"),
        ("ok", line("32 OK SAVE"), "OK seq=32 cmd=SAVE"),
        ("ok", line("33 ERR RANGE SET"), "ERR seq=33 code=RANGE cmd=SET"),
        ("ok", line("34 ERR UNKNOWN -"), "ERR seq=34 code=UNKNOWN cmd=-"),
        ("bad", line("35 ERR WHAT SET"), "value"),
        ("bad", line("36 OK"), "fields"),
        ("bad", line(MAX_BODY), "type"),  # exactly 80 bytes: framing fine, type unknown
        ("bad", line(MAX_BODY, cr=True), "long"),  # 81 bytes with the tolerated \r
        ("bad", line("38 HB 1800000", cr=True) + b"x", "frame"),
        ("ok", line("38 HIT 1800000 1 S 1023"), "HIT seq=38 t=1800000 pad=1 kind=S peak=1023"),
        ("ok", line("39 HIT 1800100 4 S 0"), "HIT seq=39 t=1800100 pad=4 kind=S peak=0"),
        ("ok", line("40 HELLO 1 1.0.0 4 184 piezo 1900000"), "HELLO seq=40 proto=1 fw=1.0.0 pads=4 res=184 mode=piezo t=1900000"),
        ("ok", line("41 HB 2000000"), "HB seq=41 t=2000000"),
        ("bad", line("42 HELLO 2 2.0.0 4 184 piezo 2100000"), "version"),
        ("bad", line("43 HB 2200000"), "nohello"),
    ],
    [
        ("bad", line("0 HELLO 1 1.0.0 9 184 piezo 1052"), "value"),
        ("bad", line("0 HELLO 1 1.0.0 0 184 piezo 1052"), "value"),
        ("bad", line("0 HELLO 1 1.0.0 8 0 piezo 1052"), "value"),
        ("bad", line("0 HELLO 1 1.0.0 8 184 drum 1052"), "value"),
        ("bad", line("0 HELLO 1 1.0.0! 8 184 piezo 1052"), "value"),
        ("bad", line("0 HELLO 1 1.0.0 8 184 piezo"), "fields"),
        ("bad", line("0 HELLO 1 1.0.0 8 1x4 piezo 1052"), "number"),
        ("ok", line("65534 HELLO 1 2.1.0-rc1 8 96 button 4294967000"), "HELLO seq=65534 proto=1 fw=2.1.0-rc1 pads=8 res=96 mode=button t=4294967000"),
        ("ok", line("65535 HB 4294967295"), "HB seq=65535 t=4294967295"),
        ("ok", line("0 HIT 200 8 S 1023"), "HIT seq=0 t=200 pad=8 kind=S peak=1023"),
        ("ok", line("1 LVL 300 0000000000000000003FF000 0000000000000000003FF3FF"), "LVL seq=1 t=300 levels=0000000000000000003FF000 peaks=0000000000000000003FF3FF"),
        ("ok", line("2 HB 400000"), "HB seq=2 t=400000"),
        ("ok", line("0 HELLO 1 2.1.0-rc1 8 96 button 1100"), "HELLO seq=0 proto=1 fw=2.1.0-rc1 pads=8 res=96 mode=button t=1100"),
        ("ok", line("1 HIT 2000 8 S 1023"), "HIT seq=1 t=2000 pad=8 kind=S peak=1023"),
    ],
]

COMMAND_PADS = 4
COMMANDS: list[tuple[str, bytes, str]] = [
    ("cmd", line("HELLO"), "HELLO"),
    ("cmd", line("CFG"), "CFG"),
    ("cmd", line("SAVE"), "SAVE"),
    ("cmd", line("DEFAULTS"), "DEFAULTS"),
    ("cmd", line("STREAM 1"), "STREAM on=1"),
    ("cmd", line("STREAM 0"), "STREAM on=0"),
    ("cmd", line("SET 3 slap 250"), "SET pad=3 param=slap value=250"),
    ("cmd", line("SET 1 touch 0"), "SET pad=1 param=touch value=0"),
    ("cmd", line("SET 4 mask 1000000"), "SET pad=4 param=mask value=1000000"),
    ("cmd", line("SET 2 scan 20000"), "SET pad=2 param=scan value=20000"),
    ("cmd", line("SET 2 xtalk 100"), "SET pad=2 param=xtalk value=100"),
    ("cmd", line("SET 2 xwin 0"), "SET pad=2 param=xwin value=0"),
    ("cmd", line("SET 1 slap 1023", cr=True), "SET pad=1 param=slap value=1023"),
    ("cmdbad", line("SET 0 slap 250"), "ERR PAD SET"),
    ("cmdbad", line("SET 5 slap 250"), "ERR PAD SET"),
    ("cmdbad", line("SET 9 loud 5"), "ERR PAD SET"),
    ("cmdbad", line("SET 3 slap 1024"), "ERR RANGE SET"),
    ("cmdbad", line("SET 3 slap 0"), "ERR RANGE SET"),
    ("cmdbad", line("SET 3 mask 1000001"), "ERR RANGE SET"),
    ("cmdbad", line("SET 3 scan 99999999999"), "ERR RANGE SET"),
    ("cmdbad", line("SET 3 loud 5"), "ERR PARAM SET"),
    ("cmdbad", line("SET 3 slap"), "ERR ARGS SET"),
    ("cmdbad", line("SET 3 slap 2x0"), "ERR ARGS SET"),
    ("cmdbad", line("SET 3 slap 0250"), "ERR ARGS SET"),
    ("cmdbad", line("SET x slap 250"), "ERR ARGS SET"),
    ("cmdbad", line("STREAM 2"), "ERR RANGE STREAM"),
    ("cmdbad", line("STREAM"), "ERR ARGS STREAM"),
    ("cmdbad", line("SAVE 1"), "ERR ARGS SAVE"),
    ("cmdbad", line("HELLO 1"), "ERR ARGS HELLO"),
    ("cmdbad", line("RESET"), "ERR UNKNOWN -"),
    ("cmdbad", line("set 3 slap 200"), "ERR UNKNOWN -"),
    ("cmdbad", wrong_crc("SET 3 slap 250"), "ERR CRC -"),
    ("cmdbad", b"SET 3 slap 250", "ERR FRAME -"),
    ("cmdbad", line("SET 3 slap 25\x070"), "ERR FRAME -"),
    ("cmdbad", line("SET 3 " + "x" * 70), "ERR LONG -"),
]

HEADER = """\
# Shared protocol test vectors, protocol version 1. Format: ../PROTOCOL.md, "Test vectors".
# Fields are separated by one TAB. Generated by make_vectors.py (checksums, escapes); edit there.
# Read by tests/hardware/test_protocol_vectors.py (host) and by the firmware's host tests (box).
"""


def main() -> None:
    """Write protocol.txt next to this script."""
    rows: list[str] = [HEADER]
    for number, stream in enumerate(STREAMS, start=1):
        rows.append(f"# box->host stream {number}")
        rows.append("reset")
        rows.extend(f"{tag}\t{escape(raw)}\t{expect}" for tag, raw, expect in stream)
        rows.append("")
    rows.append("# host->box commands")
    rows.append(f"pads\t{COMMAND_PADS}")
    rows.extend(f"{tag}\t{escape(raw)}\t{expect}" for tag, raw, expect in COMMANDS)
    OUT.write_text("\n".join(rows) + "\n", encoding="ascii")


if __name__ == "__main__":
    main()

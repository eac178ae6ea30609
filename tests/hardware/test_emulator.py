"""The pad-box emulator speaks the protocol over a real pty, and port discovery finds it."""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
import serial
from helpers.padbox import private_emulator_dir  # noqa: F401

from companion.commands import emulate as emulate_cmd
from hardware import ports
from hardware import protocol as p
from hardware.emulator import PadBoxEmulator
from test_protocol_vectors import COMMANDS  # tests/ is on sys.path (no package)

WAIT_S = 10.0
#: Events parsed but not yet looked at, per protocol object.
PENDING: dict[int, list[p.Event]] = {}


@pytest.fixture
def wire() -> Iterator[tuple[PadBoxEmulator, serial.SerialBase, p.PadBoxProtocol]]:
    """An emulator with 4 pads, its pty opened with pyserial, and a host parser that saw HELLO."""
    box = PadBoxEmulator(pads=4).start()
    port = serial.serial_for_url(box.path, baudrate=p.BAUD, timeout=0.05)
    proto = p.PadBoxProtocol()
    port.write(p.encode_hello())
    # The box's own start-up HELLO used seq 0 (whether or not opening the port flushed it): ours is seq 1.
    read_until(port, proto, lambda e: isinstance(e, p.Hello) and e.seq == 1)
    yield box, port, proto
    PENDING.pop(id(proto), None)
    port.close()
    box.stop()


def read_until(port: serial.SerialBase, proto: p.PadBoxProtocol, want, timeout: float = WAIT_S) -> list[p.Event]:  # type: ignore[no-untyped-def]
    """Events until one matches ``want`` (which is included last); later ones wait for the next call."""
    pending: list[p.Event] = PENDING.setdefault(id(proto), [])
    out: list[p.Event] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pending:
            pending.extend(proto.data_received(port.read(max(1, port.in_waiting))))
        while pending:
            ev = pending.pop(0)
            out.append(ev)
            if want(ev):
                return out
    pytest.fail(f"timed out waiting; got {out!r}")


def reply_to(wire, line: bytes) -> p.Event:  # type: ignore[no-untyped-def]
    """Send one host line and return the box's reply (OK / ERR / HELLO), skipping heartbeats."""
    box, port, proto = wire
    port.write(line)
    events = read_until(port, proto, lambda e: isinstance(e, (p.Ok, p.Err, p.Hello)))
    return events[-1]


@pytest.mark.parametrize("vector", [v for v in COMMANDS if v.pads == 4], ids=lambda v: f"L{v.number}-{v.tag}")
def test_emulator_answers_every_command_vector(wire, vector) -> None:  # type: ignore[no-untyped-def]
    reply = reply_to(wire, vector.line + b"\n")
    if vector.tag == "cmdbad":
        assert isinstance(reply, p.Err)
        assert f"ERR {reply.code} {reply.command}" == vector.expect
    elif vector.expect == "HELLO":
        assert isinstance(reply, p.Hello) and not reply.new_session  # same box, same clock
    else:
        parsed = p.parse_command(vector.line, 4)
        assert isinstance(parsed, p.Command) and isinstance(reply, p.Ok)
        assert reply.command == parsed.echo()


def test_over_long_command_split_over_writes_is_refused_once(wire) -> None:  # type: ignore[no-untyped-def]
    box, port, proto = wire
    port.write(b"SET 1 slap " + b"9" * 60)
    port.flush()
    time.sleep(0.05)
    port.write(b"9" * 60 + b"\n")
    reply = reply_to(wire, p.encode_set(1, "slap", 321))
    assert isinstance(reply, p.Err) and reply.code == "LONG"
    reply = read_until(port, proto, lambda e: isinstance(e, p.Ok))[-1]
    assert isinstance(reply, p.Ok) and reply.command == "SET 1 slap 321"
    assert box.settings[1]["slap"] == 321


def test_heartbeats_and_levels_flow(wire) -> None:  # type: ignore[no-untyped-def]
    box, port, proto = wire
    assert isinstance(reply_to(wire, p.encode_stream(True)), p.Ok)
    box.hit(3, "S", 700)
    events = read_until(port, proto, lambda e: isinstance(e, p.Levels) and e.peaks[2] == 700)
    events += read_until(port, proto, lambda e: isinstance(e, p.Heartbeat))
    assert not [e for e in events if isinstance(e, (p.Refused, p.Dropped))]
    assert proto.counters["dropped"] == 0


def test_strike_follows_the_thresholds_set_from_the_host(wire) -> None:  # type: ignore[no-untyped-def]
    box, port, proto = wire
    assert isinstance(reply_to(wire, p.encode_set(1, "slap", 500)), p.Ok)
    assert isinstance(reply_to(wire, p.encode_set(1, "touch", 100)), p.Ok)
    assert box.strike(1, 600) == "S"
    assert box.strike(1, 300) == "T"
    assert box.strike(1, 50) is None
    hits = [e for e in read_until(port, proto, lambda e: isinstance(e, p.Hit) and e.kind == "T") if isinstance(e, p.Hit)]
    assert [(h.kind, h.peak) for h in hits] == [("S", 600), ("T", 300)]
    assert isinstance(reply_to(wire, p.encode_set(1, "touch", 0)), p.Ok)
    assert box.strike(1, 300) is None  # touches off


def test_reset_restores_saved_settings_and_says_hello_with_seq_0(wire) -> None:  # type: ignore[no-untyped-def]
    box, port, proto = wire
    reply_to(wire, p.encode_set(2, "slap", 400))
    reply_to(wire, p.encode_save())
    reply_to(wire, p.encode_set(2, "slap", 999))
    box.reset()
    hello = read_until(port, proto, lambda e: isinstance(e, p.Hello))[-1]
    assert isinstance(hello, p.Hello) and hello.seq == 0 and hello.new_session
    assert box.settings[2]["slap"] == 400


def test_unplug_makes_reads_fail_and_replug_gives_a_new_path() -> None:
    box = PadBoxEmulator(pads=2).start()
    try:
        port = serial.serial_for_url(box.path, baudrate=p.BAUD, timeout=0.05)
        old = box.path
        box.unplug()
        with pytest.raises(serial.SerialException):
            for _ in range(100):
                port.read(10)
        assert not ports.emulator_ports()  # an unplugged box is not announced
        new = box.replug(new_path=True)
        assert new != old and [i.device for i in ports.emulator_ports()] == [new]
        port.close()
    finally:
        box.stop()


def test_candidate_ports_order_and_known_bridges(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    usb = [
        ports.PortInfo("/dev/ttyUSB0", 0x1A86, 0x7523, "USB Serial", None, "CH340"),
        ports.PortInfo("/dev/ttyACM0", 0x1234, 0x0001, "a modem", None, None),
    ]
    monkeypatch.setattr(ports, "usb_ports", lambda: usb)
    stale = ports.emulator_dir()
    stale.mkdir(parents=True)
    (stale / "1-dead.port").write_text("/dev/pts/does-not-exist 1\n", encoding="utf-8")
    (stale / "2-gone.port").write_text("/dev/null 999999999\n", encoding="utf-8")  # process gone
    assert ports.candidate_ports("/dev/ttyX", "/dev/ttyY") == ["/dev/ttyX", "/dev/ttyY", "/dev/ttyUSB0"]
    assert ports.bridge_name(0x2341, 0x0043) == "Arduino"
    assert ports.bridge_name(0x10C4, 0xEA60) == "Silicon Labs CP210x"
    assert ports.bridge_name(0x1234, 0x0001) is None
    assert usb[0].usb_id == "1a86:7523" and usb[0].likely_pad_box and not usb[1].likely_pad_box


def test_emulate_keys_strike_pads(capsys: pytest.CaptureFixture[str]) -> None:
    box = PadBoxEmulator(pads=4, announce=False).start()
    r, w = os.pipe()
    done = threading.Event()
    try:
        os.write(w, b"1!q9x")  # slap 1, touch 1, touch 1, pad 9 ignored, x ignored
        os.close(w)
        thread = threading.Thread(target=emulate_cmd._read_keys, args=(box, done, r))
        thread.start()
        thread.join(WAIT_S)
        out = capsys.readouterr().out.splitlines()
        assert out == ["pad 1: S (peak 800)", "pad 1: T (peak 120)", "pad 1: T (peak 120)"]
    finally:
        done.set()
        os.close(r)
        box.stop()


def test_clock_ppm_makes_the_box_clock_run_fast_or_slow() -> None:
    """Each box reading lies between two host readings, so the bounds hold however the threads are scheduled."""
    for ppm in (50_000, -50_000, 500):
        box = PadBoxEmulator(pads=1, announce=False, clock_ppm=ppm, clock_start_us=0)
        rate = 1 + ppm * 1e-6
        h0 = time.monotonic_ns()
        b0 = box.now_us()
        h1 = time.monotonic_ns()
        time.sleep(0.1)
        h2 = time.monotonic_ns()
        b1 = box.now_us()
        h3 = time.monotonic_ns()
        box.stop()  # never started: this closes its wake-up pipe
        assert rate * (h2 - h1) / 1000 - 2 <= b1 - b0 <= rate * (h3 - h0) / 1000 + 2
    with pytest.raises(ValueError):
        PadBoxEmulator(clock_ppm=60_000)


def test_emulate_refuses_a_clock_ppm_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(pads=4, resolution_us=100, mode="piezo", clock_ppm=1e6, script=None)
    assert emulate_cmd.run(args) == 2
    assert "--clock-ppm" in capsys.readouterr().err

"""The serial pad box source through real pyserial: over ``loop://`` and on the emulator's pty."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from pytest_mock import MockerFixture
from helpers.padbox import emu, private_emulator_dir  # noqa: F401
from helpers.procs import stop_process

from core.errors import InputError, PadSourceError
from hardware import ports
from hardware import protocol as p
from hardware.emulator import PadBoxEmulator
from core.hits import HitKind, PadHit
from hardware.padbox import SerialPadBox
from hardware.source import SourceNotice

#: Bounds a hang only; things normally happen within milliseconds.
WAIT_S = 10.0


def collect(src: SerialPadBox, until: Callable[[list[Any]], bool], timeout: float = WAIT_S) -> list[Any]:
    """Items from the source's queue until ``until(items)`` holds (fails after ``timeout``)."""
    items: list[Any] = []
    deadline = time.monotonic() + timeout
    while not until(items):
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"timed out; got {items!r}; status {src.status()!r}")
        try:
            items.append(src.queue.get(timeout=min(left, 0.2)))
        except queue.Empty:
            pass
    return items


def hits_of(items: list[Any]) -> list[PadHit]:
    return [i for i in items if isinstance(i, PadHit)]


def notices(items: list[Any], kind: str) -> list[SourceNotice]:
    return [i for i in items if isinstance(i, SourceNotice) and i.kind == kind]


@pytest.fixture
def source(emu: PadBoxEmulator) -> Iterator[SerialPadBox]:
    assert emu.path is not None
    src = SerialPadBox(port=emu.path, hello_timeout_s=3.0, retry_s=0.1)
    src.start()
    assert src.wait_connected(WAIT_S), src.status()
    yield src
    src.stop()


# ---------------------------------------------------------------- loop://


def test_loop_url_hits_through_real_pyserial() -> None:
    """pyserial's loop:// echoes what is written: box lines written to it reach the parser."""
    src = SerialPadBox(port="loop://", hello_timeout_s=WAIT_S, retry_s=0.1)
    src.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while src.serial is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert src.serial is not None
        src.serial.write(
            p.encode_box_line(0, "HELLO 1 1.0.0 3 200 piezo 1000000")
            + p.encode_box_line(1, "HIT 1000500 3 S 1023")
            + b"garbage\n"
            + p.encode_box_line(2, "HIT 1000400 1 T 300")
        )
        items = collect(src, lambda xs: len(hits_of(xs)) == 2)
        first, second = hits_of(items)
        assert (first.pad, first.kind, first.strength, first.resolution_us) == (3, HitKind.SLAP, 1.0, 200)
        assert second.at_us - first.at_us == -100
        assert sorted(hits_of(items), key=PadHit.sort_key)[0].pad == 1
        status = src.status()
        assert status["connected"] and status["box_pads"] == 3 and src.pad_count == 3
        assert status["counters"]["frame"] == 1
        assert status["counters"]["seq"] >= 1  # our own HELLO request echoed back is refused, never believed
    finally:
        src.stop()


# ---------------------------------------------------------------- emulator on a pty


def test_hits_arrive_with_device_timestamps_across_the_clock_wrap() -> None:
    box = PadBoxEmulator(pads=4, clock_start_us=p.TIME_MOD - 400_000).start()
    try:
        src = SerialPadBox(port=box.path, hello_timeout_s=3.0, retry_s=0.1)
        src.start()
        try:
            assert src.wait_connected(WAIT_S)
            before = box.hit(1, "S", 600, at_us=p.TIME_MOD - 1_000)
            after = box.hit(2, "T", 100, at_us=5_000)  # after the wrap
            items = collect(src, lambda xs: len(hits_of(xs)) == 2)
            a, b = hits_of(items)
            assert b.at_us - a.at_us == 6_000 == (after - before) % p.TIME_MOD
            assert a.at_us - src.offset_us == p.TIME_MOD - 1_000  # the box's own clock, unwrapped
            assert (b.kind, b.resolution_us, b.strength) == (HitKind.TOUCH, 100, pytest.approx(100 / 1023))
        finally:
            src.stop()
    finally:
        box.stop()


def test_out_of_order_arrival_keeps_true_order_when_sorted(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    t0 = emu.now_us()
    emu.hit(3, at_us=t0 + 900)
    emu.hit(1, at_us=t0 + 100)
    emu.hit(2, at_us=t0 + 500)
    items = collect(source, lambda xs: len(hits_of(xs)) == 3)
    assert [h.pad for h in hits_of(items)] == [3, 1, 2]  # arrival order
    ordered = sorted(hits_of(items), key=PadHit.sort_key)
    assert [h.pad for h in ordered] == [1, 2, 3]
    assert [h.at_us - ordered[0].at_us for h in ordered] == [0, 400, 800]


def test_unplug_reports_and_replug_under_a_new_path_reconnects(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    old_path = emu.path
    emu.hit(1)
    before = hits_of(collect(source, lambda xs: len(hits_of(xs)) == 1))[0]
    emu.unplug()
    items = collect(source, lambda xs: bool(notices(xs, "disconnected")))
    assert old_path in notices(items, "disconnected")[0].message
    assert not source.connected
    with pytest.raises(PadSourceError, match="no pad box connected"):
        source.set_param(1, "slap", 100)
    new_path = emu.replug(new_path=True)
    assert new_path != old_path
    items = collect(source, lambda xs: bool(notices(xs, "connected")))
    assert new_path in notices(items, "connected")[0].message
    emu.hit(2)
    after = hits_of(collect(source, lambda xs: len(hits_of(xs)) == 1))[0]
    assert after.pad == 2 and after.at_us > before.at_us  # the source clock never goes back
    status = source.status()
    assert status["port"] == new_path and status["reconnects"] == 1 and status["connected"]


def test_box_that_never_says_hello_is_reported_and_nothing_is_believed() -> None:
    box = PadBoxEmulator(pads=4, say_hello=False, heartbeat_s=0.05).start()
    try:
        src = SerialPadBox(port=box.path, hello_timeout_s=0.5, retry_s=0.1)
        src.start()
        try:
            for _ in range(5):
                box.hit(1)
            items = collect(src, lambda xs: bool(notices(xs, "error")))
            message = notices(items, "error")[0].message
            assert "no HELLO" in message and box.path in message and "nohello" in message
            assert not hits_of(items) and not src.connected
            assert src.status()["error"] == message
        finally:
            src.stop()  # returns: no hang while the box keeps talking
    finally:
        box.stop()


def test_lost_lines_are_reported_and_the_next_hit_still_counts(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    emu.skip_seq(3)
    emu.hit(4)
    items = collect(source, lambda xs: len(hits_of(xs)) == 1)
    dropped = notices(items, "dropped")
    assert dropped and dropped[0].details["count"] == 3
    assert source.status()["counters"]["dropped"] == 3


def test_hostile_bytes_are_counted_and_never_hits(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    emu.send_raw(b"\x00\xff\xfe garbage\n")
    emu.send_raw(b"Z" * 500 + b"\n")
    emu.send_raw(b"9 HIT 1 1 S 900*0000\n")
    emu.send_raw(p.encode_box_line(60000, "HIT 1 1 S 900"))  # seq far behind: a replayed line
    emu.send_line("HIT 1000 9 S 900")  # pad 9 on a 4-pad box
    emu.send_raw(b"1 HIT 12")  # half a line, completed by nothing sensible
    emu.send_raw(b"\n")
    emu.hit(2, "S", 900)
    items = collect(source, lambda xs: any(h.pad == 2 for h in hits_of(xs)))
    counters = source.status()["counters"]
    assert counters["frame"] >= 2 and counters["long"] == 1 and counters["crc"] == 1
    assert counters["seq"] == 1 and counters["pad"] == 1
    assert [h.pad for h in hits_of(items)] == [2]


def test_box_reset_rebases_so_the_clock_never_goes_back(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    emu.hit(1)
    first = hits_of(collect(source, lambda xs: len(hits_of(xs)) == 1))[0]
    emu.reset()  # clock restarts near 0, seq 0, HELLO
    items = collect(source, lambda xs: bool(notices(xs, "info")))
    assert "restarted" in notices(items, "info")[0].message
    emu.hit(2, at_us=emu.now_us())
    second = hits_of(collect(source, lambda xs: len(hits_of(xs)) == 1))[0]
    assert second.at_us > first.at_us
    assert source.now_us() >= second.at_us - 1_000_000  # now_us follows the box clock


def test_calibration_commands_reach_the_box(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    source.set_threshold(2, slap=300, touch=80)
    source.set_param(3, "mask", 45000)
    assert emu.settings[2]["slap"] == 300 and emu.settings[2]["touch"] == 80
    config = source.read_config()
    assert sorted(config) == [1, 2, 3, 4]
    assert config[3]["mask"] == 45000 and config[1] == {k: v[2] for k, v in p.PARAMS.items()}
    source.save()
    assert emu.eeprom[2]["slap"] == 300
    source.stream_levels(True)
    assert emu.strike(1, 250) == "S"
    deadline = time.monotonic() + WAIT_S
    while not (source.latest_levels().get("peaks") or [0])[0] and time.monotonic() < deadline:
        time.sleep(0.02)
    levels = source.latest_levels()
    assert levels["peaks"][0] == 250 and len(levels["levels"]) == 4
    source.stream_levels(False)
    assert not emu.streaming and source.status()["streaming"] is False


def test_levels_listener_gets_every_lvl_line_and_survives_its_own_bugs(emu: PadBoxEmulator, source: SerialPadBox) -> None:
    frames: list[dict[str, Any]] = []
    got_enough = threading.Event()

    def listener(frame: dict[str, Any]) -> None:
        frames.append(frame)
        if any(f["peaks"][1] == 30 for f in frames) and len(frames) >= 5:
            got_enough.set()

    def broken(frame: dict[str, Any]) -> None:
        raise RuntimeError("a listener bug")

    source.add_levels_listener(broken)
    source.add_levels_listener(listener)
    source.add_levels_listener(listener)  # twice is once
    source.stream_levels(True)
    assert emu.strike(2, 30) is None  # below the touch threshold: a level, no hit line
    assert got_enough.wait(WAIT_S), frames
    source.remove_levels_listener(broken)
    at = [f["at_us"] for f in frames]
    assert at == sorted(set(at))  # each line once, in order: the repeated add did not double them
    assert set(frames[-1]) == {"at_us", "levels", "peaks"} and len(frames[-1]["levels"]) == 4
    emu.hit(1, "S", 900)  # the broken listener did not stop the reader thread
    assert hits_of(collect(source, lambda xs: len(hits_of(xs)) == 1))[0].pad == 1
    source.remove_levels_listener(listener)
    source.remove_levels_listener(listener)  # unknown now: ignored
    count = len(frames)
    last_at = source.latest_levels()["at_us"]
    deadline = time.monotonic() + WAIT_S
    seen: set[int] = set()
    while len(seen) < 3 and time.monotonic() < deadline:  # three more LVL lines arrive...
        seen.add(source.latest_levels()["at_us"])
        seen.discard(last_at)
        time.sleep(0.01)
    assert len(seen) >= 3
    assert len(frames) == count  # ...and none reached the removed listener
    source.stream_levels(False)


def test_refused_command_is_a_clear_error() -> None:
    box = PadBoxEmulator(pads=4).start()
    try:
        src = SerialPadBox(port=box.path, pad_count=8, hello_timeout_s=3.0)  # config says 8, box has 4
        src.start()
        try:
            assert src.wait_connected(WAIT_S)
            items = collect(src, lambda xs: bool(notices(xs, "error")))
            assert "4 pads but 8 are configured" in notices(items, "error")[0].message
            with pytest.raises(PadSourceError, match="PAD"):
                src.set_param(6, "slap", 100)
            with pytest.raises(InputError, match="slap"):
                src.set_param(1, "slap", 5000)
            with pytest.raises(InputError, match="valid"):
                src.set_param(1, "volume", 5)
            assert box.settings[1]["slap"] == p.PARAMS["slap"][2]  # nothing changed
        finally:
            src.stop()
    finally:
        box.stop()


def test_silent_box_is_reported() -> None:
    box = PadBoxEmulator(pads=2, heartbeat_s=3600).start()
    try:
        src = SerialPadBox(port=box.path, hello_timeout_s=3.0, silence_timeout_s=0.3)
        src.start()
        try:
            assert src.wait_connected(WAIT_S)
            items = collect(src, lambda xs: any("silent" in n.message for n in notices(xs, "error")))
            assert not hits_of(items)
            # the source asked for HELLO; the box answered, so it is talking again
            collect(src, lambda xs: any("talking again" in n.message for n in notices(xs, "info")))
            assert src.connected
        finally:
            src.stop()
    finally:
        box.stop()


def test_no_port_at_all_is_reported(mocker: MockerFixture) -> None:
    mocker.patch.object(ports, "usb_ports", return_value=[])
    src = SerialPadBox(port=None, hello_timeout_s=0.5, retry_s=0.1)
    src.start()
    try:
        items = collect(src, lambda xs: bool(notices(xs, "error")))
        assert "no serial port found" in notices(items, "error")[0].message
        assert not src.connected
    finally:
        src.stop()


def test_search_finds_a_running_emulator_without_a_configured_port(mocker: MockerFixture) -> None:
    mocker.patch.object(ports, "usb_ports", return_value=[])
    box = PadBoxEmulator(pads=3).start()
    try:
        src = SerialPadBox(port=None, hello_timeout_s=3.0, retry_s=0.1)
        src.start()
        try:
            assert src.wait_connected(WAIT_S)
            assert src.status()["port"] == box.path and src.status()["firmware"] == "emu-1.0"
        finally:
            src.stop()
    finally:
        box.stop()


def test_emulate_command_replays_a_script_with_exact_gaps(tmp_path: Path) -> None:
    script = tmp_path / "hits.txt"
    script.write_text("# t_ms pad kind strength\n0 1\n100 2 touch\n150.5 3 slap 0.5\n", encoding="utf-8")
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion.cli", "emulate", "--pads", "3", "--script", str(script),
         "--exit-after-script", "--no-keys", "--resolution-us", "250"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("pad box emulator on /dev/"), first + proc.stderr.read() if proc.stderr else first
        path = first.split()[4]
        src = SerialPadBox(port=path, hello_timeout_s=5.0)
        src.start()
        try:
            items = collect(src, lambda xs: len(hits_of(xs)) == 3)
        finally:
            src.stop()
        hits = hits_of(items)
        assert [(h.pad, h.kind) for h in hits] == [(1, HitKind.SLAP), (2, HitKind.TOUCH), (3, HitKind.SLAP)]
        assert [h.at_us - hits[0].at_us for h in hits] == [0, 100_000, 150_500]
        assert hits[2].strength == pytest.approx(512 / 1023) and hits[0].resolution_us == 250
        assert proc.wait(timeout=WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_pads_monitor_shows_emulator_hits_through_the_serial_path(tmp_path: Path) -> None:
    """The done-when check: ``tabletop emulate`` box + ``tabletop pads --pads serial --port <pty>``."""
    import signal

    box = PadBoxEmulator(pads=4).start()
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")  # all defaults, whatever the developer's own config says
    env = dict(os.environ, TABLETOP_CONFIG=str(config))
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion.cli", "pads", "--pads", "serial", "--port", str(box.path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        out = proc.stdout

        def read() -> None:
            for line in out:
                lines.append(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + WAIT_S
        while not any("connected" in ln for ln in lines) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert any("connected" in ln for ln in lines), (lines, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        t = box.hit(2, "S", 1023)
        box.hit(3, "T", 100, at_us=t + 2500)
        while sum(ln.startswith("pad ") for ln in lines) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        hit_lines = [ln for ln in lines if ln.startswith("pad ")]
        assert len(hit_lines) == 2, lines
        assert hit_lines[0].split()[:2] == ["pad", "2"] and "slap" in hit_lines[0] and "1.00" in hit_lines[0]
        assert hit_lines[1].split()[:2] == ["pad", "3"] and "touch" in hit_lines[1] and "+2.500 ms" in hit_lines[1]
    finally:
        stop_process(proc, signal.SIGINT, timeout=WAIT_S)
        box.stop()

"""``tabletop pads``: the line format, and the command end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from companion.cli import main
from companion.commands.pads import format_hit, format_notice, player_names
from companion.config import parse_config
from core.hits import HitKind, PadHit
from hardware.source import SourceNotice

LINE = re.compile(
    r"^pad +(?P<pad>\d+) +(?P<name>\S*) +(?P<us>\d+) us +(?P<kind>slap|touch) +strength +(?P<strength>\S+) +gap (?P<gap>.+)$"
)


def test_format_first_hit() -> None:
    line = format_hit(PadHit(2, 1_234_567, HitKind.SLAP), None, {2: "Ann"})
    m = LINE.match(line)
    assert m, line
    assert m.groupdict() == {"pad": "2", "name": "Ann", "us": "1234567", "kind": "slap", "strength": "-", "gap": "first"}


def test_format_gap_strength_and_no_player() -> None:
    line = format_hit(PadHit(3, 1_500_000, HitKind.TOUCH, 0.25), 1_249_500, {2: "Ann"})
    m = LINE.match(line)
    assert m, line
    assert (m["pad"], m["name"], m["us"], m["kind"], m["strength"], m["gap"]) == (
        "3", "", "1500000", "touch", "0.25", "+250.500 ms"
    )


def test_format_a_hit_that_arrived_late_shows_a_negative_gap() -> None:
    line = format_hit(PadHit(1, 1_000_000), 1_000_300)
    assert line.endswith("gap -0.300 ms")


def test_format_notice_and_players() -> None:
    assert format_notice(SourceNotice("disconnected", "pad box unplugged")) == "-- disconnected: pad box unplugged"
    config = parse_config({"players": [{"name": "Ann", "pad": 2}, {"name": "Bo"}]})
    assert player_names(config) == {2: "Ann"}


SCRIPT = "# two players\n0 1\n120 2 slap 0.5\n95.25 1 touch\n"


def hit_lines(text: str) -> list[dict[str, str]]:
    return [m.groupdict() for m in map(LINE.match, text.splitlines()) if m]


def test_main_replays_a_script_and_exits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "hits.txt"
    script.write_text(SCRIPT)
    config = tmp_path / "config.toml"
    config.write_text('[[players]]\nname = "Ann"\npad = 1\n\n[[players]]\nname = "Bo"\npad = 2\n')
    assert main(["pads", "--config", str(config), "--script", str(script), "--fast"]) == 0
    out = capsys.readouterr().out
    lines = hit_lines(out)
    assert [(l["pad"], l["name"], l["kind"], l["strength"], l["gap"]) for l in lines] == [
        ("1", "Ann", "slap", "-", "first"),
        ("1", "Ann", "touch", "-", "+95.250 ms"),
        ("2", "Bo", "slap", "0.50", "+24.750 ms"),
    ]
    us = [int(l["us"]) for l in lines]
    assert [u - us[0] for u in us] == [0, 95_250, 120_000]
    assert "-- connected: replaying 3 hits" in out
    assert "-- info: script finished: 3 hits replayed" in out


def test_bad_script_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "hits.txt"
    script.write_text("0 1\n5 nine\n")
    assert main(["pads", "--script", str(script)]) == 2
    assert f"{script} line 2: pad 'nine'" in capsys.readouterr().err


def run_tabletop(*args: str, stdin: bytes = b"", tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TABLETOP_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text("")
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", *args],
        input=stdin.decode(), capture_output=True, text=True, timeout=60, env=env,
    )


def test_subprocess_script_in_real_time(tmp_path: Path) -> None:
    script = tmp_path / "hits.txt"
    script.write_text("0 2\n40 1 touch 0.9\n")
    proc = run_tabletop("pads", "--script", str(script), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = hit_lines(proc.stdout)
    assert [(l["pad"], l["kind"], l["strength"], l["gap"]) for l in lines] == [
        ("2", "slap", "-", "first"),
        ("1", "touch", "0.90", "+40.000 ms"),
    ]


def test_subprocess_sim_reads_keys_from_stdin(tmp_path: Path) -> None:
    proc = run_tabletop("pads", "--pads", "sim", stdin=b"13!9w", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "keys: 1-8 slap" in proc.stdout
    lines = hit_lines(proc.stdout)
    # 9 is beyond the 4 pads of the default config
    assert [(l["pad"], l["kind"]) for l in lines] == [("1", "slap"), ("3", "slap"), ("1", "touch"), ("2", "touch")]


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_ctrl_c_exits_cleanly_and_restores_the_terminal(tmp_path: Path, signame: str) -> None:
    import pty
    import signal
    import termios

    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "TABLETOP_CONFIG": str(tmp_path / "none.toml")}
    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        proc = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "pads"],
            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        assert proc.stdout is not None
        for line in proc.stdout:  # wait until it is reading keys
            if line.startswith("keys:"):
                break
        os.write(master, b"2")
        hit = proc.stdout.readline()
        assert LINE.match(hit.strip()) and LINE.match(hit.strip())["pad"] == "2"
        proc.send_signal(getattr(signal, signame))
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert termios.tcgetattr(slave)[3] == before[3]
    finally:
        os.close(master)
        os.close(slave)


def test_serial_pads_through_the_emulator_and_real_pyserial(tmp_path: Path) -> None:
    import signal

    from hardware.emulator import PadBoxEmulator

    (tmp_path / "none.toml").write_text('[[players]]\nname = "Cy"\npad = 3\n')
    env = {**os.environ, "TABLETOP_CONFIG": str(tmp_path / "none.toml")}
    with PadBoxEmulator(announce=False, pads=4) as box:
        assert box.path is not None
        proc = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "pads", "--pads", "serial", "--port", box.path],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        try:
            assert proc.stdout is not None
            before_connected = []
            for line in proc.stdout:
                if line.startswith("-- connected:"):
                    break
                before_connected.append(line.strip())
            box.hit(3, "S", 1023)
            box.hit(1, "T", 300)
            lines = [LINE.match(proc.stdout.readline().strip()) for _ in range(2)]
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert [(m["pad"], m["name"], m["kind"], m["strength"]) for m in lines if m] == [
        ("3", "Cy", "slap", "1.00"),
        ("1", "", "touch", "0.29"),
    ]
    # The header waits for HELLO: it shows the box's own pad count and resolution, not defaults.
    assert before_connected[0].startswith("pads: serial pad box, waiting for its HELLO")
    assert before_connected[-1] == (
        f"pads: serial, 4 pads, resolution {box.resolution_us} us (firmware {box.firmware} on {box.path}). Ctrl-C quits."
    )


def test_serial_pads_gives_up_clearly_when_no_box_says_hello(tmp_path: Path) -> None:
    import pty

    (tmp_path / "config.toml").write_text("[pads.serial]\nhello_timeout_s = 0.3\n")
    env = {**os.environ, "TABLETOP_CONFIG": str(tmp_path / "config.toml")}
    master, slave = pty.openpty()  # a terminal nobody answers on: a box that never says HELLO
    try:
        port = os.ttyname(slave)
        proc = subprocess.run(
            [sys.executable, "-m", "companion.cli", "pads", "--pads", "serial", "--port", port, "--wait", "1"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60,
        )
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 1, proc.stderr
    assert f"no pad box said HELLO within 1 s on {port}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "resolution" not in proc.stdout  # no header with made-up figures

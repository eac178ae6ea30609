"""``tabletop doctor``: each check as data, and the checklist with its exit code."""

from __future__ import annotations

import os
import sys
import types
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from companion.cli import main
from companion.commands import doctor
from companion.commands.doctor import (
    FAIL, OK, WARN, Check, check_config, check_data_dir, check_packages, check_pad_box,
    check_pin_factory, check_python, check_serial_ports, exit_code, format_report, gpio_present, run_checks,
)
from companion.config import Config, parse_config
from hardware.ports import PortInfo
from hardware.source import SourceNotice


@pytest.fixture
def good_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n[pads.gpio]\npin_factory = "mock"\n')
    return path


def test_python_and_packages_report_versions() -> None:
    py = check_python()
    assert py.status == OK and py.summary.startswith("Python 3.")
    pk = check_packages()
    assert pk.status == OK
    assert pk.data["versions"]["gpiozero"] == metadata.version("gpiozero")
    assert any(line.startswith("pyserial ") for line in pk.details)


def test_a_missing_required_package_fails() -> None:
    def version_of(name: str) -> str:
        if name == "pyserial":
            raise metadata.PackageNotFoundError(name)
        return metadata.version(name)

    pk = check_packages(version_of)
    assert pk.status == FAIL and "pyserial" in pk.summary


def test_package_lines_required_and_optional_present_and_missing() -> None:
    # Required and optional packages share one look-up: pin every line it writes.
    absent = {"pyserial", "lgpio", "pigpio"}

    def version_of(name: str) -> str:
        if name in absent:
            raise metadata.PackageNotFoundError(name)
        return "9.9" if name == doctor.DISTRIBUTION else "1.0"

    pk = check_packages(version_of)
    required = [line.split()[0] for line in pk.details[1:] if "GPIO backend" not in line]
    assert pk.details[0] == f"{doctor.DISTRIBUTION} 9.9"
    assert "pyserial MISSING (pip install -e . in the project's venv)" in pk.details
    assert f"{required[0]} 1.0" in pk.details
    # A present optional backend gets its note; a missing one no line at all.
    assert "RPi.GPIO 1.0 (GPIO backend)" in pk.details and "rpi-lgpio 1.0 (GPIO backend)" in pk.details
    assert not any(line.startswith(("lgpio ", "pigpio ")) for line in pk.details)
    assert pk.data["versions"]["lgpio"] is None and pk.data["versions"]["pyserial"] is None
    assert pk.data["versions"]["RPi.GPIO"] == "1.0"


def test_one_look_up_serves_required_and_optional_packages() -> None:
    versions: dict[str, str | None] = {}
    lines: list[str] = []

    def version_of(name: str) -> str:
        if name == "b":
            raise metadata.PackageNotFoundError(name)
        return "2.0"

    assert doctor._look_up(("a", "b"), version_of, versions, lines, " (note)", None) == ["b"]
    assert lines == ["a 2.0 (note)"] and versions == {"a": "2.0", "b": None}
    assert doctor._look_up(("b",), version_of, versions, lines, "", "MISSING") == ["b"]
    assert lines[-1] == "b MISSING"


def test_bad_config_file_fails_with_the_config_error_text(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[pads]\nsource = \"usb\"\n")
    check, config = check_config(path)
    assert check.status == FAIL
    assert str(path) in check.summary and "pads.source" in check.summary and "'usb'" in check.summary
    assert config == Config()  # the other checks go on with the defaults


def test_missing_and_broken_toml_config(tmp_path: Path) -> None:
    check, _ = check_config(tmp_path / "nope.toml")
    assert check.status == FAIL and "does not exist" in check.summary
    broken = tmp_path / "broken.toml"
    broken.write_text("[pads\n")
    check, _ = check_config(broken)
    assert check.status == FAIL and "not valid TOML" in check.summary


def test_no_config_file_means_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TABLETOP_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(doctor, "find_config_file", lambda path: None)
    check, config = check_config(None)
    assert check.status == OK and "defaults" in check.summary


def test_good_config_is_named(good_config: Path) -> None:
    check, config = check_config(good_config)
    assert check.status == OK and check.summary == str(good_config)
    assert config.gpio_pin_factory == "mock"


def test_data_dir_checks(tmp_path: Path) -> None:
    assert check_data_dir(tmp_path).status == OK
    assert "will be created" in check_data_dir(tmp_path / "new" / "dir").summary
    file = tmp_path / "file"
    file.write_text("x")
    assert check_data_dir(file).status == FAIL


def test_a_data_dir_open_to_other_users_is_a_warning(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    check = check_data_dir(shared)
    assert check.status == WARN and "open to other users (mode 0755)" in check.summary
    assert "makes it 0700" in check.details[0]
    shared.chmod(0o700)
    assert check_data_dir(shared).status == OK


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_data_dir_fails(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert check_data_dir(locked).status == FAIL
        assert check_data_dir(locked / "sub").status == FAIL
    finally:
        locked.chmod(0o700)


def test_gpio_present_reads_gpiochips_and_model(tmp_path: Path) -> None:
    assert gpio_present(tmp_path) == (False, "no /dev/gpiochip* on this machine")
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "gpiochip0").touch()
    (tmp_path / "proc/device-tree").mkdir(parents=True)
    (tmp_path / "proc/device-tree/model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert gpio_present(tmp_path) == (True, "gpiochip0 on Raspberry Pi 5 Model B Rev 1.0")


def test_no_gpio_warns_for_sim_and_fails_for_gpio(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    try:
        import lgpio  # noqa: F401
        pytest.skip("lgpio is installed here")
    except ImportError:
        pass
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    sim = check_pin_factory(parse_config({"pads": {"gpio": {"pin_factory": "lgpio"}}}), root=tmp_path)
    assert sim.status == WARN
    assert sim.data == {"requested": "lgpio", "present": False, "factory": None}
    assert any("install lgpio" in d for d in sim.details)
    gpio = check_pin_factory(parse_config({"pads": {"source": "gpio", "gpio": {"pin_factory": "lgpio"}}}), root=tmp_path)
    assert gpio.status == FAIL


def test_pin_factory_from_environment_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    check = check_pin_factory(Config(), root=tmp_path)
    assert check.status == OK and check.data["factory"] == "mock"
    assert "chosen by $GPIOZERO_PIN_FACTORY=mock" in check.details


PORTS = [
    PortInfo("/dev/ttyS0", None, None, "n/a"),
    PortInfo("/dev/ttyUSB0", 0x1A86, 0x7523, "USB2.0-Serial", bridge="CH340"),
    PortInfo("/dev/pts/9", description="tabletop pad-box emulator", bridge="emulator"),
]


def test_serial_ports_listed_with_usb_ids() -> None:
    check = check_serial_ports(Config(), ports=PORTS)
    assert check.status == OK
    assert check.details == (
        "/dev/ttyS0: not USB",
        "/dev/ttyUSB0: USB 1a86:7523 [CH340] USB2.0-Serial",
        "/dev/pts/9: pseudo-terminal [emulator] tabletop pad-box emulator",
    )
    assert check.summary == "3 serial port(s), 2 could be a pad box"


def test_missing_port_fails_when_asked_for(tmp_path: Path) -> None:
    missing = str(tmp_path / "ttyNOPE")
    check = check_serial_ports(Config(), port=missing, ports=PORTS)
    assert check.status == FAIL and f"port {missing} does not exist" in check.summary
    box = check_pad_box(Config(), port=missing)
    assert box.status == FAIL and "does not exist" in box.summary


def test_missing_configured_port_only_warns_when_pads_are_not_serial(tmp_path: Path) -> None:
    config = parse_config({"pads": {"serial": {"port": str(tmp_path / "ttyACM9")}}})
    assert check_serial_ports(config, ports=[]).status == WARN
    serial = parse_config({"pads": {"source": "serial", "serial": {"port": str(tmp_path / "ttyACM9")}}})
    assert check_serial_ports(serial, ports=[]).status == FAIL


def test_pad_box_not_needed_and_none_plugged_in_is_fine() -> None:
    check = check_pad_box(Config(), ports=PORTS[:1])
    assert check.status == OK and "none plugged in" in check.summary


def fake_padbox(monkeypatch: pytest.MonkeyPatch, answer: bool) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    class FakeBox:
        def __init__(self, port: str | None, baud: int, hello_timeout_s: float, pad_count: int | None = None, sink: Any = None) -> None:
            seen.update(port=port, baud=baud, hello_timeout_s=hello_timeout_s)
            self.sink = sink

        def start(self) -> None:
            if answer:
                self.sink.put(SourceNotice("connected", "pad box on loop://", {"firmware": "1.0.0"}))
            else:
                self.sink.put(SourceNotice("error", "no HELLO from loop:// after 0.1 s"))

        def status(self) -> dict[str, Any]:
            return {"port": seen["port"]}

        def stop(self) -> None:
            seen["stopped"] = True

    module = types.ModuleType("hardware.padbox")
    module.SerialPadBox = FakeBox  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hardware.padbox", module)
    return seen


def test_pad_box_that_answers_reports_its_firmware(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = fake_padbox(monkeypatch, answer=True)
    check = check_pad_box(Config(), port="loop://", wait_s=0.5)
    assert check.status == OK
    assert check.summary == "pad box on loop:// answers, firmware 1.0.0"
    assert seen["stopped"] and seen["hello_timeout_s"] == 0.5


def test_pad_box_that_never_says_hello_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = fake_padbox(monkeypatch, answer=False)
    check = check_pad_box(Config(), port="loop://", wait_s=0.1)
    assert check.status == FAIL and "no HELLO" in check.summary
    assert "error: no HELLO from loop:// after 0.1 s" in check.details
    assert seen["stopped"]


def test_report_marks_and_exit_code() -> None:
    checks = [Check("a", OK, "fine"), Check("b", WARN, "hmm", ("detail",)), Check("c", FAIL, "broken")]
    text = format_report(checks)
    assert text.splitlines() == ["[ ok ] a: fine", "[warn] b: hmm", "       detail", "[FAIL] c: broken",
                                 "1 failed, 1 warning(s), 1 ok"]
    assert exit_code(checks) == 1
    assert exit_code(checks[:2]) == 0


def test_doctor_command_good_config_exits_0(good_config: Path, capsys: pytest.CaptureFixture[str],
                                            mocker: MockerFixture) -> None:
    mocker.patch.object(doctor, "list_serial_ports", return_value=PORTS[:1])
    assert main(["doctor", "--config", str(good_config)]) == 0
    out = capsys.readouterr().out
    assert f"[ ok ] config: {good_config}" in out
    assert "[ ok ] gpio: pin factory mock" in out
    assert "0 failed" in out


def test_doctor_command_bad_config_and_missing_port_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[pads]\ncount = 99\n")
    assert main(["doctor", "--config", str(bad), "--port", str(tmp_path / "ttyNOPE")]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] config:" in out and "'pads.count': 99" in out
    assert "[FAIL] pad box: port" in out


def test_run_checks_order(good_config: Path) -> None:
    names = [c.name for c in run_checks(str(good_config))]
    assert names == ["python", "packages", "config", "data dir", "gpio", "serial ports", "pad box"]


def test_doctor_json_output(good_config: Path, capsys: pytest.CaptureFixture[str], mocker: MockerFixture) -> None:
    import json

    mocker.patch.object(doctor, "list_serial_ports", return_value=PORTS[:2])
    mocker.patch.object(doctor, "check_pad_box", return_value=Check("pad box", OK, "stub"))
    assert main(["doctor", "--config", str(good_config), "--json"]) == 0
    checks = json.loads(capsys.readouterr().out)
    assert {c["name"]: c["status"] for c in checks}["config"] == "ok"
    assert checks[5]["data"]["ports"][1]["vid"] == 0x1A86


def test_real_emulated_pad_box_answers_with_its_firmware() -> None:
    from hardware.emulator import PadBoxEmulator

    with PadBoxEmulator(announce=False, firmware="9.8.7") as box:
        assert box.path is not None
        check = check_pad_box(Config(), port=box.path)
    assert check.status == OK, check
    assert check.summary == f"pad box on {box.path} answers, firmware 9.8.7"
    assert check.data["firmware"] == "9.8.7"


def test_real_emulated_box_that_never_says_hello_fails() -> None:
    from hardware.emulator import PadBoxEmulator

    with PadBoxEmulator(announce=False, say_hello=False) as box:
        check = check_pad_box(Config(), port=box.path, wait_s=1.0)
    assert check.status == FAIL and "no HELLO" in check.summary

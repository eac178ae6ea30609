"""install-service / uninstall-service: the unit file written, checked by systemd-analyze where present."""

from __future__ import annotations

import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from companion.cli import main
from companion.systemd import ServiceSpec, render_avahi_service, render_unit


def ordinary_user() -> str:
    for entry in pwd.getpwall():
        if entry.pw_uid >= 1 and entry.pw_name in ("nobody", "daemon", "pi"):
            return entry.pw_name
    pytest.skip("no ordinary user on this machine to run the service as")


def install(tmp_path: Path, *extra: str) -> int:
    return main(["install-service", "--user", ordinary_user(), "--unit-dir", str(tmp_path / "units"),
                 "--avahi-dir", str(tmp_path / "avahi"), "--no-start", "--data", str(tmp_path / "data"), *extra])


def test_unit_runs_as_ordinary_user_in_gpio_and_dialout_restarts_and_logs_to_journal(tmp_path: Path) -> None:
    spec = ServiceSpec(user="pi", executable=Path("/home/pi/venv/bin/tabletop"), data_dir=Path("/home/pi/.local/share/tabletop"), port=8080)
    unit = render_unit(spec)
    assert "User=pi\n" in unit
    assert "SupplementaryGroups=gpio dialout\n" in unit
    assert "Restart=on-failure\n" in unit
    assert "UMask=0077\n" in unit  # files the service makes are its user's alone
    assert "StandardOutput=journal\n" in unit and "StandardError=journal\n" in unit
    assert "ExecStart=/home/pi/venv/bin/tabletop serve --data /home/pi/.local/share/tabletop --port 8080\n" in unit
    assert "WantedBy=multi-user.target" in unit


def test_paths_with_spaces_are_quoted(tmp_path: Path) -> None:
    spec = ServiceSpec(user="pi", executable=Path("/opt/t t/bin/tabletop"), data_dir=Path("/srv/my data"), pads="serial")
    assert "ExecStart='/opt/t t/bin/tabletop' serve --data '/srv/my data' --port 8080 --pads serial" in render_unit(spec)


def test_install_writes_unit_and_avahi_record_and_uninstall_removes_them(tmp_path: Path, capsys) -> None:
    assert install(tmp_path, "--port", "8090") == 0
    unit = (tmp_path / "units" / "tabletop.service").read_text()
    assert f"User={ordinary_user()}" in unit and "--port 8090" in unit
    avahi = (tmp_path / "avahi" / "tabletop.service").read_text()
    assert "<port>8090</port>" in avahi and "_http._tcp" in avahi
    assert main(["uninstall-service", "--unit-dir", str(tmp_path / "units"), "--avahi-dir", str(tmp_path / "avahi"), "--no-stop"]) == 0
    assert not (tmp_path / "units" / "tabletop.service").exists()
    assert not (tmp_path / "avahi" / "tabletop.service").exists()


def test_install_refuses_root_and_unknown_users(tmp_path: Path, capsys) -> None:
    assert main(["install-service", "--user", "root", "--unit-dir", str(tmp_path), "--no-start"]) == 2
    assert "ordinary user, not root" in capsys.readouterr().err
    assert main(["install-service", "--user", "no-such-user-xyz", "--unit-dir", str(tmp_path), "--no-start"]) == 2
    assert "no such user" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_avahi_record_is_well_formed_xml() -> None:
    import xml.etree.ElementTree as ET

    root = ET.fromstring(render_avahi_service(8080).split("\n", 2)[2])
    assert root.find("service/port").text == "8080"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    assert install(tmp_path) == 0
    unit = tmp_path / "units" / "tabletop.service"
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    # verify prints problems about *this* unit prefixed with its path; other units' noise is not ours.
    ours = [line for line in (result.stdout + result.stderr).splitlines() if "tabletop.service" in line]
    assert ours == [], ours

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


def test_kiosk_autostarts_the_screen_in_chromium_kiosk_mode_and_uninstall_removes_it(tmp_path: Path, capsys) -> None:
    home = tmp_path / "home"
    assert install(tmp_path, "--kiosk", "--home", str(home), "--port", "8091") == 0
    desktop = home / ".config" / "autostart" / "tabletop-screen.desktop"
    script = home / ".local" / "bin" / "tabletop-screen"
    entry = desktop.read_text()
    assert "[Desktop Entry]\nType=Application\n" in entry.replace("# Written by `tabletop install-service --kiosk`; removed by `tabletop uninstall-service`.\n", "")
    assert f"Exec={script}\n" in entry
    text = script.read_text()
    assert script.stat().st_mode & 0o777 == 0o755 and text.startswith("#!/bin/sh\n")
    assert "url=http://localhost:8091/screen\n" in text
    for flag in ("--kiosk", "--noerrdialogs", "--autoplay-policy=no-user-gesture-required", "--disable-session-crashed-bubble"):
        assert flag in text
    # The script is valid shell, waits for the service and finds Chromium under either name.
    assert subprocess.run(["sh", "-n", str(script)]).returncode == 0
    assert "command -v chromium-browser || command -v chromium" in text
    assert main(["uninstall-service", "--unit-dir", str(tmp_path / "units"), "--avahi-dir", str(tmp_path / "avahi"),
                 "--home", str(home), "--no-stop"]) == 0
    assert not desktop.exists() and not script.exists()


def test_kiosk_script_waits_for_the_service_then_opens_the_screen(tmp_path: Path) -> None:
    """Run the script with a stand-in curl (answers on the third try) and browser: the URL and flags it is given."""
    from companion.kiosk import render_script

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "curl").write_text('#!/bin/sh\nn=$(cat "$0.count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0.count"; [ $n -ge 3 ]\n')
    for name in ("chromium-browser", "chromium"):  # whichever the script finds first
        (bin_dir / name).write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/opened"\n')
    for tool in ("curl", "chromium-browser", "chromium"):
        (bin_dir / tool).chmod(0o755)
    script = tmp_path / "tabletop-screen"
    script.write_text(render_script(8080).replace("sleep 1", "sleep 0"))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    assert subprocess.run(["sh", str(script)], env=env, timeout=30).returncode == 0
    assert (bin_dir / "curl.count").read_text().strip() == "3"
    opened = (bin_dir / "opened").read_text().split()
    assert opened[0] == "--kiosk" and opened[-1] == "http://localhost:8080/screen"

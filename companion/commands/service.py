"""``tabletop install-service`` / ``uninstall-service``: start the companion on boot with systemd."""

from __future__ import annotations

import argparse
import grp
import logging
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from companion.config import DEFAULT_DATA_DIR
from core.errors import ConfigError, PermissionDeniedError

# `tabletop` builds every subcommand's parser on each start (`serve` too): the unit and
# avahi templates (companion.systemd, through xml.sax) load only when these commands run.
if TYPE_CHECKING:  # pragma: no cover
    from companion.systemd import ServiceSpec

log = logging.getLogger(__name__)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register install-service and uninstall-service."""
    p = sub.add_parser("install-service", help="start the companion on boot (systemd), announced on the LAN (avahi)")
    p.add_argument("--user", help="the ordinary user the service runs as (default: the user who ran sudo)")
    p.add_argument("--data", help=f"data directory (default: that user's {DEFAULT_DATA_DIR})")
    p.add_argument("--config", help="config file the service reads")
    p.add_argument("--pads", choices=("sim", "gpio", "serial"), help="pad source (default: the config's)")
    p.add_argument("--port", type=int, default=8080, help="web port (default 8080)")
    p.add_argument("--unit-dir", default="/etc/systemd/system", help=argparse.SUPPRESS)
    p.add_argument("--avahi-dir", default="/etc/avahi/services", help=argparse.SUPPRESS)
    p.add_argument("--kiosk", action="store_true",
                   help="also open the table screen full screen on this Pi's display at login (Raspberry Pi OS desktop)")
    p.add_argument("--home", help=argparse.SUPPRESS)  # the user's home for --kiosk (tests)
    p.add_argument("--no-start", action="store_true", help="write the files but do not enable or start the service")
    p.add_argument("--print", dest="print_only", action="store_true", help="print the unit file and change nothing")
    p.set_defaults(func=install)

    u = sub.add_parser("uninstall-service", help="stop the service and remove what install-service wrote")
    u.add_argument("--unit-dir", default="/etc/systemd/system", help=argparse.SUPPRESS)
    u.add_argument("--avahi-dir", default="/etc/avahi/services", help=argparse.SUPPRESS)
    u.add_argument("--user", help="whose kiosk autostart to remove too (default: the user who ran sudo)")
    u.add_argument("--home", help=argparse.SUPPRESS)
    u.add_argument("--no-stop", action="store_true", help="remove the files without calling systemctl")
    u.set_defaults(func=uninstall)


def default_user() -> str:
    """The person behind sudo, else whoever runs the command."""
    return os.environ.get("SUDO_USER") or pwd.getpwuid(os.getuid()).pw_name


def tabletop_executable() -> Path:
    """The ``tabletop`` script of the running environment (a venv on the Pi)."""
    beside = Path(sys.executable).with_name("tabletop")
    if beside.exists():
        return beside
    found = shutil.which("tabletop")
    if found:
        return Path(found).resolve()
    raise ConfigError("cannot find the 'tabletop' command; run install-service from the virtual environment it is installed in")


def build_spec(args: argparse.Namespace) -> ServiceSpec:
    """Check the arguments and work out what the unit will run."""
    from companion.systemd import ServiceSpec

    user = args.user or default_user()
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise ConfigError(f"--user {user!r}: no such user on this machine") from None
    if entry.pw_uid == 0:
        raise ConfigError("the service must run as an ordinary user, not root: "
                          "run `sudo tabletop install-service` from your own account, or pass --user NAME")
    if not 1 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: expected 1 to 65535")
    data = Path(args.data).expanduser() if args.data else Path(entry.pw_dir) / DEFAULT_DATA_DIR.removeprefix("~/")
    config = Path(args.config).expanduser().resolve() if args.config else None
    if config is not None and not config.is_file():
        raise ConfigError(f"--config {config}: no such file")
    return ServiceSpec(user=user, executable=tabletop_executable(), data_dir=data, config=config, pads=args.pads, port=args.port)


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except PermissionError:
        raise PermissionDeniedError(f"cannot write {path}: run the command with sudo") from None


def _systemctl(*words: str) -> None:
    if shutil.which("systemctl") is None:
        print(f"systemctl not found: run `systemctl {' '.join(words)}` yourself where systemd runs")
        return
    result = subprocess.run(["systemctl", *words], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"systemctl {' '.join(words)} failed: {result.stderr.strip()}", file=sys.stderr)


def install(args: argparse.Namespace) -> int:
    """Write the unit (and the avahi record), then enable and start the service."""
    from companion.systemd import AVAHI_NAME, GROUPS, UNIT_NAME, render_avahi_service, render_unit

    spec = build_spec(args)
    unit = render_unit(spec)
    if args.print_only:
        print(unit, end="")
        return 0
    missing = [g for g in GROUPS if not _group_exists(g)]
    for group in missing:
        print(f"warning: group {group!r} does not exist here; on Raspberry Pi OS it does (GPIO and serial access)")
    if missing:
        present = " ".join(g for g in GROUPS if g not in missing)
        unit = unit.replace(f"SupplementaryGroups={' '.join(GROUPS)}", f"SupplementaryGroups={present}")
    unit_path = Path(args.unit_dir) / UNIT_NAME
    _write(unit_path, unit)
    print(f"wrote {unit_path}")
    # avahi reads this directory when it starts; without avahi the file is harmless.
    avahi_path = Path(args.avahi_dir) / AVAHI_NAME
    _write(avahi_path, render_avahi_service(spec.port))
    print(f"wrote {avahi_path} (the page is announced on the LAN as an mDNS web service)")
    if args.kiosk:
        install_kiosk(spec, _home_of(args, spec.user))
    if not args.no_start:
        _systemctl("daemon-reload")
        _systemctl("enable", "--now", UNIT_NAME)
        print(f"the service starts on boot; follow its log with: journalctl -u {UNIT_NAME.removesuffix('.service')} -f")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    """Stop and disable the service, then remove the files install-service wrote."""
    from companion.systemd import AVAHI_NAME, UNIT_NAME

    unit_path = Path(args.unit_dir) / UNIT_NAME
    if not args.no_stop:
        _systemctl("disable", "--now", UNIT_NAME)
    removed = 0
    for path in (unit_path, Path(args.avahi_dir) / AVAHI_NAME, *kiosk_paths(_home_of(args, args.user or default_user()))):
        try:
            path.unlink()
            print(f"removed {path}")
            removed += 1
        except FileNotFoundError:
            pass
        except PermissionError:
            raise PermissionDeniedError(f"cannot remove {path}: run the command with sudo") from None
    if not args.no_stop:
        _systemctl("daemon-reload")
    if not removed:
        print("nothing to remove: the service was not installed")
    return 0


def _home_of(args: argparse.Namespace, user: str) -> Path:
    """The home directory whose desktop gets the kiosk autostart: ``--home``, else the user's."""
    if args.home:
        return Path(args.home).expanduser()
    try:
        return Path(pwd.getpwnam(user).pw_dir)
    except KeyError:
        raise ConfigError(f"--user {user!r}: no such user on this machine") from None


def kiosk_paths(home: Path) -> tuple[Path, Path]:
    """Where ``--kiosk`` writes: the autostart entry and the script it runs."""
    from companion.kiosk import DESKTOP_NAME, SCRIPT_NAME

    return home / ".config" / "autostart" / DESKTOP_NAME, home / ".local" / "bin" / SCRIPT_NAME


def install_kiosk(spec: "ServiceSpec", home: Path) -> None:
    """Write the autostart entry and its script into ``home``, owned by the service's user."""
    from companion.kiosk import render_desktop_entry, render_script

    desktop, script = kiosk_paths(home)
    _write(script, render_script(spec.port))
    script.chmod(0o755)
    _write(desktop, render_desktop_entry(script))
    if os.geteuid() == 0:
        # Written through sudo: the files and the folders made for them belong to the user, not root.
        entry = pwd.getpwnam(spec.user)
        for path in (script, script.parent, desktop, desktop.parent):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    print(f"wrote {desktop} and {script}: at login the desktop opens the table screen full screen")
    if shutil.which("chromium-browser") is None and shutil.which("chromium") is None:
        print("warning: Chromium is not installed here; on the Pi: sudo apt install chromium-browser")


def _group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True

"""``tabletop doctor``: what a maker needs to know when something does not work.

Checks Python and package versions, gpiozero's pin factory (and whether this
machine has GPIO at all), serial ports with their USB ids, whether a pad box
answers with its HELLO (and its firmware version), the config file in use and
any problem in it, and whether the data directory is writable. Each check is a
function returning a :class:`Check`, so tests and the web page can use them;
the command prints them as a checklist and exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import re
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Sequence

from companion.config import Config, find_config_file, load_config
from core.errors import CompanionError, ConfigError
from hardware.ports import PortInfo

OK, WARN, FAIL = "ok", "warn", "fail"
_MARKS = {OK: "[ ok ]", WARN: "[warn]", FAIL: "[FAIL]"}

DISTRIBUTION = "tabletop-companion"
#: Optional packages worth reporting: the GPIO backends gpiozero can use.
OPTIONAL_PACKAGES = ("lgpio", "rpi-lgpio", "RPi.GPIO", "pigpio")

#: How long doctor waits for a pad box's HELLO at most (a board resets when opened: ~1-2 s).
HELLO_WAIT_S = 3.0


@dataclass(frozen=True)
class Check:
    """One line of the checklist: what was checked, ok/warn/fail, a summary and detail lines."""

    name: str
    status: str
    summary: str
    details: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


# -- Python and packages -------------------------------------------------


def check_python() -> Check:
    """Python version and interpreter (3.11 or newer is required)."""
    version = platform.python_version()
    ok = sys.version_info >= (3, 11)
    return Check(
        "python",
        OK if ok else FAIL,
        f"Python {version}" + ("" if ok else " (tabletop needs 3.11 or newer)"),
        (f"interpreter {sys.executable}", f"platform {platform.platform()}"),
        {"version": version, "executable": sys.executable},
    )


def _requirement_names(requires: Sequence[str] | None) -> list[str]:
    names = []
    for req in requires or ():
        if "extra ==" in req:
            continue  # test and pi extras are optional
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m:
            names.append(m.group(1))
    return names


def _look_up(names: Sequence[str], version_of: Callable[[str], str], versions: dict[str, str | None],
             lines: list[str], note: str, missing_line: str | None) -> list[str]:
    """Record each package's version (None if absent) in ``versions`` and a line in ``lines``:
    "name version" plus ``note``, or "name " plus ``missing_line`` when absent (no line if
    that is None, as for optional packages). Returns the absent ones."""
    missing: list[str] = []
    for name in names:
        try:
            versions[name] = version_of(name)
            lines.append(f"{name} {versions[name]}{note}")
        except metadata.PackageNotFoundError:
            versions[name] = None
            missing.append(name)
            if missing_line is not None:
                lines.append(f"{name} {missing_line}")
    return missing


def check_packages(version_of: Callable[[str], str] = metadata.version) -> Check:
    """Versions of this package, its required dependencies and the optional GPIO backends."""
    lines: list[str] = []
    versions: dict[str, str | None] = {}
    try:
        ours = version_of(DISTRIBUTION)
        required = _requirement_names(metadata.requires(DISTRIBUTION))
    except metadata.PackageNotFoundError:
        ours = None
        required = ["gpiozero", "pyserial", "flask"]
    versions[DISTRIBUTION] = ours
    lines.append(f"{DISTRIBUTION} {ours or 'not installed (running from a source tree?)'}")
    missing = _look_up(required, version_of, versions, lines, "", "MISSING (pip install -e . in the project's venv)")
    _look_up(OPTIONAL_PACKAGES, version_of, versions, lines, " (GPIO backend)", None)
    if missing:
        return Check("packages", FAIL, f"missing required packages: {', '.join(missing)}", tuple(lines), {"versions": versions})
    summary = f"{DISTRIBUTION} {ours or '(source tree)'}, {len(required)} required packages present"
    return Check("packages", OK, summary, tuple(lines), {"versions": versions})


# -- config and data dir -------------------------------------------------


def check_config(path: str | os.PathLike[str] | None) -> tuple[Check, Config]:
    """The config file in use and whether it is valid. Returns the Config to use for other checks
    (the defaults when the file is broken, so the other checks still run)."""
    found = find_config_file(path)
    if found is None:
        return Check("config", OK, "no config file: defaults (simulated pads)", (), {"path": None}), Config()
    try:
        config = load_config(found)
    except ConfigError as exc:
        failed = Check("config", FAIL, f"{found}: {exc}", ("the other checks use the defaults",),
                       {"path": str(found), "error": str(exc)})
        return failed, Config()
    details = (f"pads: {config.pads_source}, {config.pads_count} pads", f"data dir: {config.data_dir}")
    return Check("config", OK, f"{found}", details, {"path": str(found)}), config


def check_data_dir(data_dir: Path) -> Check:
    """Whether the data directory exists (or can be created), is writable, and is the user's alone."""
    data_dir = Path(data_dir).expanduser()
    if data_dir.exists() and not data_dir.is_dir():
        return Check("data dir", FAIL, f"{data_dir} exists but is not a directory; move it away or set data_dir", (),
                     {"path": str(data_dir)})
    if data_dir.is_dir():
        try:
            with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-"):
                pass
        except OSError as exc:
            return Check("data dir", FAIL, f"{data_dir} is not writable: {exc.strerror}; fix its owner or set data_dir",
                         (), {"path": str(data_dir)})
        mode = data_dir.stat().st_mode & 0o777
        if mode & 0o077:
            return Check("data dir", WARN, f"{data_dir} is writable but open to other users (mode {mode:04o})",
                         ("tabletop serve makes it 0700 (and its files 0600) when it next starts",),
                         {"path": str(data_dir), "mode": f"{mode:04o}"})
        return Check("data dir", OK, f"{data_dir} is writable and private", (), {"path": str(data_dir)})
    parent = data_dir.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if os.access(parent, os.W_OK | os.X_OK):
        return Check("data dir", OK, f"{data_dir} will be created on first start", (), {"path": str(data_dir)})
    return Check("data dir", FAIL, f"{data_dir} cannot be created ({parent} is not writable); set data_dir", (), {"path": str(data_dir)})


# -- GPIO ----------------------------------------------------------------


def gpio_present(root: str | os.PathLike[str] = "/") -> tuple[bool, str]:
    """Whether this machine has GPIO (a gpiochip device) and what board it says it is."""
    root = Path(root)
    chips = sorted(p.name for p in (root / "dev").glob("gpiochip*")) if (root / "dev").is_dir() else []
    model = ""
    model_file = root / "proc/device-tree/model"
    try:
        model = model_file.read_bytes().rstrip(b"\x00").decode("utf-8", "replace").strip()
    except OSError:
        pass
    if chips:
        return True, f"{', '.join(chips)}" + (f" on {model}" if model else "")
    return False, model or "no /dev/gpiochip* on this machine"


def check_pin_factory(config: Config, root: str | os.PathLike[str] = "/") -> Check:
    """Which gpiozero pin factory would be used and whether it loads (then closes it again)."""
    from hardware.gpio import PIN_FACTORY_ENV, RESOLUTION_US, factory_name, load_pin_factory, requested_factory_name

    requested = requested_factory_name(config.gpio_pin_factory)
    if config.gpio_pin_factory:
        how = f"pads.gpio.pin_factory = {config.gpio_pin_factory!r}"
    elif os.environ.get(PIN_FACTORY_ENV):
        how = f"${PIN_FACTORY_ENV}={os.environ[PIN_FACTORY_ENV]}"
    else:
        how = "gpiozero's automatic choice (lgpio, rpigpio, pigpio, native)"
    present, board = gpio_present(root)
    details = [f"chosen by {how}", f"GPIO hardware: {board}"]
    needed = config.pads_source == "gpio"
    try:
        factory = load_pin_factory(requested)
    except CompanionError as exc:
        details.append(str(exc))
        status = FAIL if needed else WARN
        summary = "no GPIO pin factory can be loaded" + ("" if needed else " (fine: the pads are not on GPIO)")
        return Check("gpio", status, summary, tuple(details), {"requested": requested, "present": present, "factory": None})
    name = factory_name(factory)
    try:
        resolution = RESOLUTION_US.get(name, 1000)
        details.append(f"edge timing resolution {resolution} us")
        if name in ("rpigpio", "native"):
            details.append("this factory gives no edge timestamps; install lgpio for kernel edge times")
        status = OK if (present or name == "mock" or not needed) else WARN
        summary = f"pin factory {name}" + ("" if present else " (no GPIO hardware here)")
    finally:
        try:
            factory.close()
        except Exception:  # closing a half-working factory must not break the report
            pass
    return Check("gpio", status, summary, tuple(details), {"requested": requested, "present": present, "factory": name})


# -- serial --------------------------------------------------------------


def list_serial_ports() -> list[PortInfo]:
    """Serial ports from ``serial.tools.list_ports`` (with USB ids and known bridges), then running emulators."""
    from hardware.ports import list_serial_ports as listed

    return listed()


def check_serial_ports(config: Config, port: str | None = None, ports: list[PortInfo] | None = None) -> Check:
    """Serial ports with USB ids; fails when the port asked for (``--port``/config) is not there."""
    ports = list_serial_ports() if ports is None else ports
    wanted = port or config.serial_port
    details = []
    for p in ports:
        usb = f"USB {p.usb_id}" if p.usb_id else ("pseudo-terminal" if p.bridge == "emulator" else "not USB")
        board = f" [{p.bridge}]" if p.bridge else ""
        description = "" if p.description in ("", "n/a") else f" {p.description}"
        details.append(f"{p.device}: {usb}{board}{description}")
    data = {"ports": [asdict(p) for p in ports], "wanted": wanted}
    needed = config.pads_source == "serial" or port is not None
    if wanted and not _port_exists(wanted, ports):
        return Check("serial ports", FAIL if needed else WARN,
                     f"port {wanted} does not exist" + (" (plugged in? see the list)" if ports else ""), tuple(details), data)
    if not ports:
        return Check("serial ports", FAIL if needed and not wanted else (WARN if needed else OK),
                     "no serial ports found" + ("" if needed else " (fine: the pads are not on serial)"), (), data)
    likely = [p for p in ports if p.likely_pad_box]
    summary = f"{len(ports)} serial port(s)" + (f", {len(likely)} could be a pad box" if likely else "")
    return Check("serial ports", OK, summary, tuple(details), data)


def _port_exists(port: str, ports: list[PortInfo]) -> bool:
    if "://" in port:
        return True  # a pyserial URL (loop://, socket://): nothing to look for
    return any(p.device == port for p in ports) or os.path.exists(port)


def _firmware_of(*sources: dict[str, Any]) -> str | None:
    for src in sources:
        for key in ("firmware", "firmware_version", "fw"):
            if src.get(key):
                return str(src[key])
    return None


def check_pad_box(config: Config, port: str | None = None, wait_s: float = HELLO_WAIT_S,
                  ports: list[PortInfo] | None = None) -> Check:
    """Open the pad box briefly and wait for its HELLO; report its firmware version.

    The port is ``port``, else ``pads.serial.port``, else the search of
    SerialPadBox (known USB bridges, running emulators). Fails only when the
    pads are meant to be on serial (or --port was given); otherwise a missing
    box is a warning, and no likely port at all is fine.
    """
    wanted = port or config.serial_port
    needed = config.pads_source == "serial" or port is not None
    bad = FAIL if needed else WARN
    if wanted is None and not needed:
        ports = list_serial_ports() if ports is None else ports
        if not any(p.likely_pad_box for p in ports):
            return Check("pad box", OK, "none plugged in (not needed: pads.source is not serial)")
    if wanted and "://" not in wanted and not os.path.exists(wanted):
        return Check("pad box", bad, f"port {wanted} does not exist; is the box plugged in?", (), {"port": wanted})
    try:
        from hardware.padbox import SerialPadBox
    except ImportError as exc:
        return Check("pad box", bad, f"the serial pad box backend is not available: {exc}", (), {"port": wanted})
    sink: queue.Queue[Any] = queue.Queue()
    hello_timeout = min(config.serial_hello_timeout_s, wait_s)
    notes: list[str] = []
    box = None
    try:
        box = SerialPadBox(wanted, config.serial_baud, hello_timeout, sink=sink)
        box.start()
        deadline = time.monotonic() + hello_timeout + 1.0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                item = sink.get(timeout=remaining)
            except queue.Empty:
                break
            kind = getattr(item, "kind", None)
            if kind is None or not isinstance(kind, str):
                continue  # a hit: someone slapped while doctor ran
            notes.append(f"{kind}: {item.message}")
            if kind == "connected":
                status = box.status()
                firmware = _firmware_of(item.details, status)
                where = status.get("port") or wanted or "auto"
                summary = f"pad box on {where} answers" + (f", firmware {firmware}" if firmware else "")
                return Check("pad box", OK, summary, tuple(notes), {"port": where, "firmware": firmware, "status": status})
    except CompanionError as exc:
        return Check("pad box", bad, f"no pad box: {exc}", tuple(notes), {"port": wanted})
    except OSError as exc:
        return Check("pad box", bad, f"cannot open {wanted or 'a pad box'}: {exc}", tuple(notes), {"port": wanted})
    finally:
        if box is not None:
            box.stop()
    return Check("pad box", bad, f"no HELLO from {wanted or 'any port'} within {hello_timeout + 1.0:.1f} s",
                 tuple(notes) + ("check the cable, the baud rate (pads.serial.baud) and the firmware",), {"port": wanted})


# -- all of it -----------------------------------------------------------


def run_checks(config_path: str | None = None, port: str | None = None) -> list[Check]:
    """Every check, in the order the checklist shows them."""
    config_check, config = check_config(config_path)
    ports = list_serial_ports()
    return [
        check_python(),
        check_packages(),
        config_check,
        check_data_dir(config.data_dir),
        check_pin_factory(config),
        check_serial_ports(config, port, ports),
        check_pad_box(config, port, ports=ports),
    ]


def format_report(checks: Sequence[Check]) -> str:
    """The checklist for people: one mark and summary per check, details indented, a total at the end."""
    lines = []
    for c in checks:
        lines.append(f"{_MARKS[c.status]} {c.name}: {c.summary}")
        lines.extend(f"       {d}" for d in c.details)
    fails = sum(c.status == FAIL for c in checks)
    warns = sum(c.status == WARN for c in checks)
    lines.append(f"{fails} failed, {warns} warning(s), {len(checks) - fails - warns} ok")
    return "\n".join(lines)


def exit_code(checks: Sequence[Check]) -> int:
    """0 when nothing failed, 1 otherwise."""
    return 1 if any(c.status == FAIL for c in checks) else 0


def run(args: argparse.Namespace) -> int:
    """Print the checklist (or JSON) and return the exit code."""
    checks = run_checks(args.config, args.port)
    if args.json:
        print(json.dumps([asdict(c) for c in checks], indent=2, default=str))
    else:
        print(format_report(checks))
    return exit_code(checks)


def add_parser(subparsers: Any) -> None:
    """Register ``tabletop doctor``."""
    p = subparsers.add_parser("doctor", help="check this machine: versions, GPIO, serial ports, pad box, config",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=None, help="config file (default: $TABLETOP_CONFIG or ~/.config/tabletop/config.toml)")
    p.add_argument("--port", default=None, help="serial port to ask for a pad box's HELLO")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=run)

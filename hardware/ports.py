"""Finding the pad box: the configured port, USB serial adapters we know, running emulators.

A candidate is only a guess: :class:`hardware.padbox.SerialPadBox` confirms
each one by its HELLO before believing anything from it. Boards come back
under a new name after a replug (``/dev/ttyUSB0`` becomes ``/dev/ttyUSB1``),
so the search is repeated on every reconnect.

Running pad-box emulators (``tabletop emulate``) announce their pseudo-terminal
in a small directory (``$TABLETOP_EMULATOR_DIR``, default
``$XDG_RUNTIME_DIR/tabletop-emulators`` or the temp dir), the way a USB
device shows up in ``serial.tools.list_ports``.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: USB ids of the serial bridges found on Arduino Nano class boards: (vid, pid or None for any) -> name.
KNOWN_USB_IDS: dict[tuple[int, int | None], str] = {
    (0x2341, None): "Arduino",
    (0x2A03, None): "Arduino (arduino.org)",
    (0x1A86, 0x7523): "CH340",
    (0x1A86, 0x5523): "CH341",
    (0x1A86, 0x55D4): "CH9102",
    (0x0403, 0x6001): "FTDI FT232R",
    (0x0403, 0x6015): "FTDI FT231X",
    (0x10C4, 0xEA60): "Silicon Labs CP210x",
}

EMULATOR_DIR_ENV = "TABLETOP_EMULATOR_DIR"


@dataclass(frozen=True, slots=True)
class PortInfo:
    """One serial port as ``tabletop doctor`` shows it."""

    device: str
    vid: int | None = None
    pid: int | None = None
    description: str = ""
    serial_number: str | None = None
    bridge: str | None = None  # name from KNOWN_USB_IDS, or "emulator"

    @property
    def usb_id(self) -> str | None:
        """``VID:PID`` in lowercase hex, as lsusb prints it."""
        return None if self.vid is None or self.pid is None else f"{self.vid:04x}:{self.pid:04x}"

    @property
    def likely_pad_box(self) -> bool:
        """Whether this port is worth asking for a HELLO."""
        return self.bridge is not None


def bridge_name(vid: int | None, pid: int | None) -> str | None:
    """The known bridge for a USB id, or None."""
    if vid is None:
        return None
    return KNOWN_USB_IDS.get((vid, pid)) or KNOWN_USB_IDS.get((vid, None))


def emulator_dir() -> Path:
    """Where running emulators announce their pseudo-terminal path."""
    configured = os.environ.get(EMULATOR_DIR_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / "tabletop-emulators"


def emulator_ports() -> list[PortInfo]:
    """Pseudo-terminals of running emulators (stale announcements are skipped)."""
    found: list[PortInfo] = []
    try:
        entries = sorted(emulator_dir().glob("*.port"))
    except OSError:
        return found
    for entry in entries:
        try:
            device, _, pid = entry.read_text(encoding="utf-8").strip().partition(" ")
        except OSError:
            continue
        # A killed emulator leaves its file behind, and its pty number may now be someone's
        # terminal: only believe announcements of a process that is still running.
        if device and os.path.exists(device) and _alive(pid):
            found.append(PortInfo(device, description="tabletop pad-box emulator", bridge="emulator"))
    return found


def _alive(pid: str) -> bool:
    """Whether process ``pid`` (text) is running."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def usb_ports() -> list[PortInfo]:
    """Every serial port pyserial lists, with its USB id and known bridge."""
    try:
        from serial.tools import list_ports
        listed = list_ports.comports()
    except Exception as exc:  # a broken sysfs entry must not stop the search
        log.warning("listing serial ports failed: %s", exc)
        return []
    return [
        PortInfo(p.device, p.vid, p.pid, p.description or "", p.serial_number, bridge_name(p.vid, p.pid))
        for p in sorted(listed, key=lambda p: p.device)
    ]


def list_serial_ports() -> list[PortInfo]:
    """All ports: USB serial ports first, then running emulators."""
    return usb_ports() + emulator_ports()


def candidate_ports(configured: str | None = None, last: str | None = None) -> list[str]:
    """Ports to try, best first: the configured one, the last good one, emulators, known USB bridges.

    Each is only a candidate until it answers HELLO.
    """
    out: list[str] = []
    for device in (configured, last):
        if device and device not in out:
            out.append(device)
    for info in emulator_ports() + [p for p in usb_ports() if p.likely_pad_box]:
        if info.device not in out:
            out.append(info.device)
    return out

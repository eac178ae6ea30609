"""The systemd unit and avahi service record that start the companion on boot.

Pure text rendering here; ``companion.commands.service`` writes the files and
calls systemctl.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

UNIT_NAME = "tabletop.service"
AVAHI_NAME = "tabletop.service"
#: Groups the service user needs: GPIO pads and the USB pad box.
GROUPS = ("gpio", "dialout")


@dataclass(frozen=True)
class ServiceSpec:
    """What the unit runs, and as whom."""

    user: str
    executable: Path
    data_dir: Path
    config: Path | None = None
    pads: str | None = None
    port: int = 8080

    def command_line(self) -> str:
        """The ExecStart line: absolute executable, every argument quoted for systemd."""
        args = [str(self.executable), "serve", "--data", str(self.data_dir), "--port", str(self.port)]
        if self.config is not None:
            args += ["--config", str(self.config)]
        if self.pads is not None:
            args += ["--pads", self.pads]
        return " ".join(shlex.quote(a) for a in args)


def render_unit(spec: ServiceSpec) -> str:
    """The text of /etc/systemd/system/tabletop.service."""
    return f"""\
# Written by `tabletop install-service`; remove with `tabletop uninstall-service`.
[Unit]
Description=tabletop-companion table service
Documentation=file://{spec.data_dir}
Wants=network-online.target avahi-daemon.service
After=network-online.target avahi-daemon.service

[Service]
Type=simple
User={spec.user}
SupplementaryGroups={' '.join(GROUPS)}
ExecStart={spec.command_line()}
Environment=PYTHONUNBUFFERED=1
Restart=on-failure
RestartSec=2
# Output goes to the journal: journalctl -u tabletop -f
StandardOutput=journal
StandardError=journal
SyslogIdentifier=tabletop
# A hung shutdown must not block a reboot for long.
TimeoutStopSec=10
NoNewPrivileges=yes
# Whatever the table writes is its user's alone (the service sets its data directory's modes too).
UMask=0077
ProtectSystem=full
PrivateTmp=yes

[Install]
WantedBy=multi-user.target
"""


def render_avahi_service(port: int, name: str = "Tabletop companion on %h") -> str:
    """An avahi static service file announcing the web page as _http._tcp (path /)."""
    return f"""\
<?xml version="1.0" standalone='no'?>
<!DOCTYPE service-group SYSTEM "avahi-service.dtd">
<!-- Written by `tabletop install-service`. -->
<service-group>
  <name replace-wildcards="yes">{escape(name)}</name>
  <service>
    <type>_http._tcp</type>
    <port>{int(port)}</port>
    <txt-record>path=/</txt-record>
  </service>
</service-group>
"""

"""The kiosk: the Pi opens the table screen full screen on its own display at boot.

Pure text rendering here (an XDG autostart entry and the script it runs);
``companion.commands.service`` writes them for ``tabletop install-service
--kiosk``. Raspberry Pi OS Bookworm's desktop starts every entry in
``~/.config/autostart`` when the user logs in (X11 with LXDE, Wayfire and labwc
alike, through ``lxsession-xdg-autostart``), so one file serves all three.
"""

from __future__ import annotations

import shlex
from pathlib import Path

#: The autostart entry, in the user's ``~/.config/autostart``.
DESKTOP_NAME = "tabletop-screen.desktop"
#: The script the entry runs, beside the user's data (``~/.local/bin``).
SCRIPT_NAME = "tabletop-screen"

#: Chromium's flags for a table screen nobody touches: full screen with no way out
#: but a keyboard, no first-run or crash bubbles, no translate bar, sound without a
#: tap first (the verdict flash's Web Audio), no update nags, no pinch zoom.
CHROMIUM_FLAGS = (
    "--kiosk",
    "--noerrdialogs",
    "--disable-infobars",
    "--no-first-run",
    "--disable-session-crashed-bubble",
    "--disable-features=Translate",
    "--autoplay-policy=no-user-gesture-required",
    "--check-for-update-interval=31536000",
    "--disable-pinch",
    "--overscroll-history-navigation=0",
)


def screen_url(port: int) -> str:
    """The table screen on the Pi itself (loopback: it shows the PIN even with ``pin_on_screen = false``)."""
    return f"http://localhost:{int(port)}/screen"


def render_script(port: int) -> str:
    """The shell script: wait until the service answers (at most 90 s), then open the screen in Chromium."""
    url = screen_url(port)
    flags = " ".join(shlex.quote(f) for f in CHROMIUM_FLAGS)
    return f"""\
#!/bin/sh
# Written by `tabletop install-service --kiosk`; removed by `tabletop uninstall-service`.
# Opens the table screen full screen on this Pi's display once the service answers.
url={shlex.quote(url)}
i=0
while [ "$i" -lt 90 ] && ! curl -s -o /dev/null "$url"; do
    i=$((i + 1))
    sleep 1
done
# Raspberry Pi OS calls it chromium-browser; Debian calls it chromium.
browser=$(command -v chromium-browser || command -v chromium)
if [ -z "$browser" ]; then
    echo "tabletop-screen: no chromium-browser or chromium installed (sudo apt install chromium-browser)" >&2
    exit 1
fi
exec "$browser" {flags} "$url"
"""


def render_desktop_entry(script: Path) -> str:
    """The XDG autostart entry that runs ``script`` when the desktop session starts."""
    return f"""\
[Desktop Entry]
# Written by `tabletop install-service --kiosk`; removed by `tabletop uninstall-service`.
Type=Application
Name=Tabletop table screen
Comment=Opens the tabletop companion's table screen full screen
Exec={shlex.quote(str(script))}
Terminal=false
X-GNOME-Autostart-enabled=true
"""

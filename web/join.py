"""Joining from a phone: the address phones should open, as text and as a QR code.

``GET /join.svg`` is a segno QR code of that address (the table screen shows
it), ``GET /api/join`` the same as JSON. The address is the one the screen
itself was opened under when that is a LAN address (a tablet on the Wi-Fi),
else the Pi's LAN address worked out as ``tabletop serve`` prints it
(:func:`companion.addresses.phone_urls`), so the screen on the Pi's own
display (``127.0.0.1``) still shows an address a phone can reach.
"""

from __future__ import annotations

import io
import ipaddress
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from companion.addresses import phone_urls

bp = Blueprint("join", __name__)

#: How the PIN is found, for the screen and /api/join.
PIN_ON_SCREEN = "The PIN is shown on this screen."
PIN_ASK = "Ask the table for the PIN (it is shown on the table screen and in the terminal)."


def _is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.endswith(".localhost")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _host_of(url_or_host: str) -> str:
    """``http://10.0.0.5:8080/`` or ``10.0.0.5:8080`` or ``[::1]:80`` -> the host part."""
    netloc = url_or_host.split("//", 1)[-1].split("/", 1)[0]
    if netloc.startswith("["):
        return netloc.split("]", 1)[0] + "]"
    return netloc.rsplit(":", 1)[0]


def join_urls() -> list[str]:
    """Addresses for phones, best first (needs a request: uses the address the page was opened under).

    An IP address is preferred over a name: many Android phones do not resolve
    ``.local`` names, and a phone that has never seen the Pi knows no other.
    """
    opened = request.host_url
    opened_host = _host_of(request.host)
    port = int(request.environ.get("SERVER_PORT") or 80)
    urls: list[str] = []
    if _is_ip(opened_host) and not _is_loopback(opened_host):
        urls.append(opened)  # the tablet reached the table under this address: phones on its Wi-Fi can too
    config = current_app.config.get("TABLETOP_CONFIG")
    bind = getattr(config, "server_host", "0.0.0.0")
    for url in phone_urls(bind, port):
        if url not in urls and not _is_loopback(_host_of(url)):
            urls.append(url)
    if not _is_loopback(opened_host) and opened not in urls:
        urls.append(opened)  # a name the tablet resolved (hostname.local): last, as a fallback
    if not urls:  # bound to loopback only: phones cannot reach this table
        urls.append(opened)
    return urls


def join_info(pin_shown: bool = False) -> dict[str, Any]:
    """``{"url", "urls", "pin_hint"}`` for the current request."""
    urls = join_urls()
    return {"url": urls[0], "urls": urls, "pin_hint": PIN_ON_SCREEN if pin_shown else PIN_ASK}


def qr_svg(url: str) -> str:
    """A QR code of ``url`` as a standalone SVG (dark on white, with a quiet zone; title = the URL)."""
    import segno  # only when a QR code is asked for: keeps start-up light

    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="svg", scale=6, border=2, dark="#000", light="#fff",
                                    title=url, xmldecl=False, svgclass="join-qr", nl=False)
    return buf.getvalue().decode("utf-8")


@bp.get("/join.svg")
def join_svg() -> ResponseReturnValue:
    """The QR code phones scan to open the table."""
    url = join_info()["url"]
    response = Response(qr_svg(url), mimetype="image/svg+xml")
    response.headers["X-Join-Url"] = url
    # The address can change (another Wi-Fi, DHCP): never cache for long.
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/api/join")
def join_api() -> ResponseReturnValue:
    """Where phones should go and how to get the PIN."""
    return jsonify(join_info())


@bp.app_context_processor
def _join_globals() -> dict[str, Any]:
    # Templates (the table screen) call join_info() when they render.
    return {"join_info": join_info}

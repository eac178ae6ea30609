"""Joining from a phone: the address phones should open, as text and as a QR code.

``GET /join.svg`` is a segno QR code of that address (the table screen shows
it), ``GET /api/join`` the same as JSON. The address is the one the screen
itself was opened under when that is a LAN address (a tablet on the Wi-Fi),
else the Pi's LAN address worked out as ``tabletop serve`` prints it
(:func:`companion.commands.serve.phone_urls`), so the screen on the Pi's own
display (``127.0.0.1``) still shows an address a phone can reach.
"""

from __future__ import annotations

import io
import ipaddress
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from companion.commands.serve import phone_urls

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


def join_urls() -> list[str]:
    """Addresses for phones, best first (needs a request: uses the address the page was opened under)."""
    hostname = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") else request.host
    port = int(request.environ.get("SERVER_PORT") or 80)
    urls: list[str] = []
    if not _is_loopback(hostname):
        urls.append(request.host_url)
    config = current_app.config.get("TABLETOP_CONFIG")
    bind = getattr(config, "server_host", "0.0.0.0")
    for url in phone_urls(bind, port):
        if url not in urls and not _is_loopback(url.split("//", 1)[1].rsplit(":", 1)[0]):
            urls.append(url)
    if not urls:  # bound to loopback only: phones cannot reach this table
        urls.append(request.host_url)
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

"""Where phones reach this table: the LAN address and the URLs to show (the serve banner, the join screen)."""

from __future__ import annotations

import socket


def lan_address() -> str | None:
    """This machine's address on the LAN (the one phones can reach), or None."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        # A UDP connect sends nothing; it only asks the kernel which interface would route there.
        probe.connect(("10.254.254.254", 1))
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def phone_urls(host: str, port: int) -> list[str]:
    """Addresses to print for phones: the LAN IP and hostname.local (not 0.0.0.0)."""
    if host in ("0.0.0.0", "::", ""):
        urls = []
        ip = lan_address()
        if ip:
            urls.append(f"http://{ip}:{port}/")
        urls.append(f"http://{socket.gethostname()}.local:{port}/")
        urls.append(f"http://127.0.0.1:{port}/")
        return urls
    shown = f"[{host}]" if ":" in host else host
    return [f"http://{shown}:{port}/"]

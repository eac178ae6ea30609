"""Joining from a phone: the QR code and address the table screen shows (Flask test client)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import segno
from flask import Flask
from pytest_mock import MockerFixture

from companion import addresses as serve
from web.join import PIN_ASK, PIN_ON_SCREEN

from helpers.browser import TEST_PIN

SVG = "{http://www.w3.org/2000/svg}"


def svg_modules(svg: str) -> tuple[set[tuple[int, int]], int]:
    """The dark modules (row, col) drawn by segno's SVG path, and the border width.

    segno draws each run of dark modules as ``h<n>`` on a line at y + 0.5, with
    relative moves ``m dx dy`` between runs (scale in a <g> transform).
    """
    root = ET.fromstring(svg)
    paths = [el for el in root.iter(f"{SVG}path") if el.get("class") == "qrline"]
    assert len(paths) == 1, svg[:300]
    tokens = re.findall(r"[MmHh]|-?\d+(?:\.\d+)?", paths[0].get("d", ""))
    x = y = 0.0
    dark: set[tuple[int, int]] = set()
    i = 0
    while i < len(tokens):
        op = tokens[i]
        if op in "Mm":
            dx, dy = float(tokens[i + 1]), float(tokens[i + 2])
            x, y = (dx, dy) if op == "M" else (x + dx, y + dy)
            i += 3
        elif op in "Hh":
            n = float(tokens[i + 1])
            end = n if op == "H" else x + n
            for col in range(int(x), int(end)):
                dark.add((int(y - 0.5), col))
            x = end
            i += 2
        else:  # pragma: no cover - a format change must fail loudly
            raise AssertionError(f"unexpected path token {op!r}")
    border = min(c for _, c in dark)  # the finder pattern touches the top-left corner
    return {(r - border, c - border) for r, c in dark}, border


def expected_modules(url: str) -> set[tuple[int, int]]:
    """The dark modules of the QR code segno makes for ``url`` (version and mask chosen by segno)."""
    qr = segno.make(url, error="m")
    return {(r, c) for r, row in enumerate(qr.matrix) for c, bit in enumerate(row) if bit & 1}


def test_join_svg_is_a_qr_code_of_the_address_phones_can_reach(app: Flask) -> None:
    client = app.test_client()
    # The screen on a tablet opened the table under its LAN address: phones use the same.
    response = client.get("/join.svg", base_url="http://192.168.1.20:8080")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    svg = response.get_data(as_text=True)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    url = "http://192.168.1.20:8080/"
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}title").text == url  # type: ignore[union-attr]
    assert response.headers["X-Join-Url"] == url
    modules, border = svg_modules(svg)
    assert border >= 2  # a quiet zone, so phone cameras find it
    assert modules == expected_modules(url)
    assert modules != expected_modules("http://192.168.1.20:8081/")  # the check can tell addresses apart
    assert client.get("/api/join", base_url="http://192.168.1.20:8080").get_json()["url"] == url


def test_on_the_pi_itself_the_lan_address_is_shown(app: Flask, mocker: MockerFixture) -> None:
    # The screen on the Pi's own display opens 127.0.0.1, which a phone cannot use:
    # the LAN address is worked out as `tabletop serve` prints it.
    mocker.patch.object(serve, "lan_address", return_value="10.11.12.13")
    client = app.test_client()
    info = client.get("/api/join", base_url="http://127.0.0.1:8080").get_json()
    assert info["url"] == "http://10.11.12.13:8080/"
    assert all("127.0.0.1" not in u and "localhost" not in u for u in info["urls"])
    assert any(u.endswith(".local:8080/") for u in info["urls"])
    response = client.get("/join.svg", base_url="http://127.0.0.1:8080")
    assert svg_modules(response.get_data(as_text=True))[0] == expected_modules("http://10.11.12.13:8080/")


def test_without_a_lan_address_the_hostname_is_used(app: Flask, mocker: MockerFixture) -> None:
    mocker.patch.object(serve, "lan_address", return_value=None)
    mocker.patch.object(serve.socket, "gethostname", return_value="tablepi")
    info = app.test_client().get("/api/join", base_url="http://localhost:8080").get_json()
    assert info["url"] == "http://tablepi.local:8080/"


def test_screen_shows_qr_address_and_how_to_get_the_pin(app: Flask, mocker: MockerFixture) -> None:
    mocker.patch.object(serve, "lan_address", return_value="10.11.12.13")
    # On the Pi (loopback) the screen shows the PIN itself.
    html = app.test_client().get("/screen", base_url="http://127.0.0.1:8080").get_data(as_text=True)
    assert 'id="join-qr"' in html and 'src="/join.svg"' in html
    assert re.search(r'id="join-url"[^>]*>http://10\.11\.12\.13:8080/</strong>', html)
    assert PIN_ON_SCREEN in html and f'id="screen-pin">{TEST_PIN}<' in html

    # With server.pin_on_screen = false a stranger's device on the Wi-Fi does not
    # see the PIN: it is told to ask for it.
    from dataclasses import replace

    app.config["TABLETOP_CONFIG"] = replace(app.config["TABLETOP_CONFIG"], server_pin_on_screen=False)
    stranger = app.test_client()
    html = stranger.get("/screen", base_url="http://10.11.12.13:8080",
                        environ_base={"REMOTE_ADDR": "10.11.12.99"}).get_data(as_text=True)
    assert PIN_ASK in html and TEST_PIN not in html
    assert re.search(r'id="join-url"[^>]*>http://10\.11\.12\.13:8080/</strong>', html)


def test_an_ip_address_is_preferred_to_a_local_name(app: Flask, mocker: MockerFixture) -> None:
    # The tablet opened tablepi.local, but many Android phones cannot resolve .local names.
    mocker.patch.object(serve, "lan_address", return_value="10.11.12.13")
    info = app.test_client().get("/api/join", base_url="http://tablepi.local:8080").get_json()
    assert info["url"] == "http://10.11.12.13:8080/"
    assert "http://tablepi.local:8080/" in info["urls"]

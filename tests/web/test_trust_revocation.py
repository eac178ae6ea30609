"""Trust is revocable on the server: logout, "forget all phones" and a new PIN end every copy of a cookie.

Issue 13, item 4: a session cookie copied before ``POST /api/logout`` still
wrote for 12 h, because trust lived only in the signed cookie. Each test copies
a trusted phone's cookie to a second client (as someone who read it off the
phone or the network would) and checks the copy is refused after the
revocation, against a real waitress server.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator

import pytest

from companion.cli import main as cli_main
from companion.service import TableService
from companion.trust import TRUST_FILE, PhoneTrust

from helpers.browser import TEST_PIN, HttpSession, LiveServer, make_app, start_live_server, table_service  # noqa: F401


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def server(data_dir: Path, table_service: TableService) -> Iterator[LiveServer]:
    live = start_live_server(make_app(table_service, data_dir), table_service, threads=8)
    try:
        yield live
    finally:
        live.stop()


def trusted_phone(port: int) -> HttpSession:
    phone = HttpSession(port)
    phone.login()
    return phone


def copy_of(phone: HttpSession) -> HttpSession:
    """Another client holding the same cookie and CSRF token (a copied cookie)."""
    thief = HttpSession(phone.port)
    thief.cookie, thief.csrf = phone.cookie, phone.csrf
    return thief


def writes(session: HttpSession, name: str) -> int:
    """The status of one write (add a player)."""
    return session.request("POST", "/api/command", {"name": "add_player", "args": {"name": name}})[0]


def test_logout_ends_every_copy_of_the_cookie(server: LiveServer) -> None:
    phone = trusted_phone(server.port)
    thief = copy_of(phone)
    assert writes(thief, "Ann") == 200  # the copy works while the phone is trusted
    assert phone.request("POST", "/api/logout", {})[1] == {"trusted": False}
    assert writes(thief, "Bob") == 403
    assert thief.request("GET", "/api/session")[1]["trusted"] is False
    assert writes(phone, "Cy") == 403
    assert [p["name"] for p in server.service.snapshot()[1]["players"]] == ["Ann"]


def test_forget_all_phones_from_a_trusted_phone(server: LiveServer) -> None:
    host, other, third = (trusted_phone(server.port) for _ in range(3))
    host_copy, other_copy = copy_of(host), copy_of(other)
    status, body = host.request("POST", "/api/phones/forget", {})
    assert status == 200
    assert body["forgotten"] == 2 and body["trusted"] is True
    for session in (other, third, host_copy, other_copy):
        assert writes(session, "Zed") == 403
    # The asking phone stays trusted, under a new id: only its own fresh cookie works.
    assert writes(host, "Ann") == 200
    assert [p["name"] for p in server.service.snapshot()[1]["players"]] == ["Ann"]


def test_forget_all_phones_can_include_the_asking_one(server: LiveServer) -> None:
    host = trusted_phone(server.port)
    status, body = host.request("POST", "/api/phones/forget", {"keep_this_phone": False})
    assert status == 200 and body == {"forgotten": 1, "trusted": False, "trusted_until": None}
    assert writes(host, "Ann") == 403


def test_forget_all_phones_needs_the_pin(server: LiveServer) -> None:
    trusted = trusted_phone(server.port)
    guest = HttpSession(server.port)
    guest.start()
    status, body = guest.request("POST", "/api/phones/forget", {})
    assert status == 403 and "PIN" in body["error"]
    assert writes(trusted, "Ann") == 200
    assert guest.request("POST", "/api/phones/forget", {"keep_this_phone": "no"})[0] == 403
    assert trusted.request("POST", "/api/phones/forget", {"keep_this_phone": "no"})[0] == 400
    assert trusted.request("POST", "/api/phones/forget", {"everyone": True})[0] == 400
    assert writes(trusted, "Bob") == 200


def test_forget_phones_from_the_cli_while_the_table_runs(server: LiveServer, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    phone = trusted_phone(server.port)
    thief = copy_of(phone)
    assert writes(thief, "Ann") == 200
    assert cli_main(["forget-phones", "--data", str(data_dir)]) == 0
    assert "1 trusted phone" in capsys.readouterr().out
    assert writes(phone, "Bob") == 403
    assert writes(thief, "Cy") == 403
    # The PIN still works afterwards.
    phone.login()
    assert writes(phone, "Dee") == 200


def test_a_new_pin_ends_every_copy_even_when_the_old_pin_comes_back(data_dir: Path, table_service: TableService) -> None:
    first = start_live_server(make_app(table_service, data_dir, PIN="11111"), table_service, threads=8)
    try:
        phone = HttpSession(first.port)
        phone.login("11111")
        cookie, csrf = phone.cookie, phone.csrf
    finally:
        first.stop()
    # Restarted with the same PIN: trust survives the restart.
    same = start_live_server(make_app(table_service, data_dir, PIN="11111"), table_service, threads=8)
    try:
        again = HttpSession(same.port)
        again.cookie, again.csrf = cookie, csrf
        assert writes(again, "Ann") == 200
    finally:
        same.stop()
    # A new PIN: the old cookie is refused, and stays refused when the old PIN returns.
    for pin in ("22222", "11111"):
        restarted = start_live_server(make_app(table_service, data_dir, PIN=pin), table_service, threads=8)
        try:
            copy = HttpSession(restarted.port)
            copy.cookie, copy.csrf = cookie, csrf
            assert writes(copy, f"Pin{pin}") == 403, pin
        finally:
            restarted.stop()


def test_the_trust_record_is_private_and_a_damaged_one_trusts_nobody(tmp_path: Path) -> None:
    clock = [1000.0]
    trust = PhoneTrust(tmp_path, clock=lambda: clock[0])
    trust.bind_pin("fp1")
    token = trust.grant(until=2000.0)
    assert trust.is_trusted(token) and not trust.is_trusted("forged") and not trust.is_trusted(None)
    path = tmp_path / TRUST_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert token not in path.read_text()  # only a hash is stored
    clock[0] = 2000.0
    assert not trust.is_trusted(token)  # the evening is over
    clock[0] = 1500.0
    path.write_text("{not json")
    assert not trust.is_trusted(token)
    fresh = trust.grant(until=1800.0)
    assert trust.is_trusted(fresh)

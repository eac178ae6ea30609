"""The JSON API through Flask's test client, on a real TableService and EventStore.

Every bad input gets a 4xx with a JSON ``error`` that names what to fix, and
leaves the table exactly as it was.
"""

from __future__ import annotations

import json
import logging
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from core.errors import RuleError
from companion.service import TableService
from web import create_app, load_secret_key, table_context

from helpers.browser import TEST_PIN, make_app, make_service, stop_service, table_service, trust  # noqa: F401
from helpers.browser import csrf_headers as csrf
from helpers.browser import wait_until as wait_for


@pytest.fixture
def app(tmp_path: Path, table_service: TableService) -> Flask:
    return make_app(table_service, tmp_path / "data", SSE_POLL_S=0.05, SSE_KEEPALIVE_S=0.2)


@pytest.fixture
def trusted(client: FlaskClient) -> FlaskClient:
    """A client that entered the PIN; its requests carry the CSRF header."""
    headers = trust(client)
    client.environ_base["HTTP_X_CSRF_TOKEN"] = headers["X-CSRF-Token"]
    return client


def command(client: FlaskClient, command_name: str, **args: Any) -> Any:
    return client.post("/api/command", json={"name": command_name, "args": args})


def snapshot(service: TableService) -> tuple[int, str]:
    seq, state = service.snapshot()
    return seq, json.dumps(state, sort_keys=True)


def rejected(service: TableService, send: Any, status: int, fragment: str) -> dict[str, Any]:
    """Send a bad request; assert its status, JSON error and that the table did not change."""
    before = snapshot(service)
    response = send()
    body = response.get_json()
    assert response.status_code == status, (response.status_code, body)
    assert response.mimetype == "application/json"
    assert isinstance(body, dict) and fragment.lower() in body["error"].lower(), body
    time.sleep(0.02)  # a wrongly queued hit would be folded by now
    assert snapshot(service) == before
    return body


# ---------------------------------------------------------------- factory ----
def test_secret_key_is_created_once_with_owner_only_permissions(tmp_path: Path) -> None:
    key = load_secret_key(tmp_path / "d")
    path = tmp_path / "d" / "secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_secret_key(tmp_path / "d") == key
    assert len(key) >= 64


def test_app_takes_its_secret_key_from_the_data_dir(tmp_path: Path, table_service: TableService) -> None:
    a = create_app({"DATA_DIR": tmp_path / "x"}, service=table_service)
    b = create_app({"DATA_DIR": tmp_path / "x"}, service=table_service)
    assert a.config["SECRET_KEY"] == b.config["SECRET_KEY"] == (tmp_path / "x" / "secret_key").read_text().strip()


def test_without_a_configured_pin_a_random_four_digit_pin_is_made(tmp_path: Path, table_service: TableService) -> None:
    app = create_app({"DATA_DIR": tmp_path / "x"}, service=table_service)
    ctx = table_context(app)
    assert ctx.pin_generated and len(ctx.pin) == 4 and ctx.pin.isdigit()


# ----------------------------------------------------------------- reading ----
def test_health_reports_the_running_table(client: FlaskClient) -> None:
    body = client.get("/api/health").get_json()
    assert body["status"] == "ok"
    assert body["table"]["running"] is True
    assert body["pads"]["source"] == "sim"


def test_state_is_the_services_snapshot(client: FlaskClient, table_service: TableService) -> None:
    body = client.get("/api/state").get_json()
    assert body == table_service.snapshot()[1]
    assert {"seq", "players", "pads", "recent_hits", "game", "games_available"} <= set(body)


@pytest.mark.parametrize("path", ["/", "/screen", "/pads", "/pin"])
def test_pages_render_with_a_csrf_token(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'name="csrf-token"' in html and 'name="viewport"' in html
    assert "/static/app.js" in html


def test_by_default_the_table_screen_shows_the_pin_to_whoever_looks(client: FlaskClient) -> None:
    # On a headless Pi the tablet in the middle is the only place to read it.
    tablet = client.get("/screen", environ_base={"REMOTE_ADDR": "192.168.1.50"}).get_data(as_text=True)
    assert TEST_PIN in tablet


@pytest.fixture
def strict_client(app: Flask) -> FlaskClient:
    """A client of an app configured with server.pin_on_screen = false."""
    from dataclasses import replace

    app.config["TABLETOP_CONFIG"] = replace(app.config["TABLETOP_CONFIG"], server_pin_on_screen=False)
    return app.test_client()


def test_pin_on_screen_off_shows_it_on_the_pi_itself_but_not_to_strangers(strict_client: FlaskClient) -> None:
    assert TEST_PIN in strict_client.get("/screen").get_data(as_text=True)
    stranger = strict_client.get("/screen", environ_base={"REMOTE_ADDR": "192.168.1.50"}).get_data(as_text=True)
    assert TEST_PIN not in stranger
    # A tablet that entered the PIN once sees it again.
    headers = csrf(strict_client)
    strict_client.post("/api/pin", json={"pin": TEST_PIN}, headers=headers)
    html = strict_client.get("/screen", environ_base={"REMOTE_ADDR": "192.168.1.50"}).get_data(as_text=True)
    assert TEST_PIN in html


def test_static_files_are_served(client: FlaskClient) -> None:
    for name in ("app.js", "app.css", "pads.js", "screen.js", "table.js"):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        response.close()


# ---------------------------------------------------------- PIN and trust ----
def test_right_pin_trusts_the_session(client: FlaskClient) -> None:
    headers = csrf(client)
    assert client.get("/api/session").get_json()["trusted"] is False
    body = client.post("/api/pin", json={"pin": TEST_PIN}, headers=headers).get_json()
    assert body["trusted"] is True and body["trusted_until"] > time.time() + 11 * 3600
    assert client.get("/api/session").get_json()["trusted"] is True


def test_pin_needs_a_csrf_token(client: FlaskClient, table_service: TableService) -> None:
    rejected(table_service, lambda: client.post("/api/pin", json={"pin": TEST_PIN}), 403, "CSRF")
    assert client.get("/api/session").get_json()["trusted"] is False


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ({"pin": "1111"}, 403, "wrong PIN"),
        ({}, 400, "'pin' is missing"),
        ({"pin": 2468}, 400, "as a string"),
        ({"pin": "24x8"}, 400, "digits"),
        ({"pin": TEST_PIN, "remember": True}, 400, "unknown field 'remember'"),
    ],
)
def test_bad_pins_are_refused(client: FlaskClient, table_service: TableService, body: Any, status: int, fragment: str) -> None:
    headers = csrf(client)
    rejected(table_service, lambda: client.post("/api/pin", json=body, headers=headers), status, fragment)
    assert client.get("/api/session").get_json()["trusted"] is False


def test_wrong_pins_are_rate_limited_per_client(client: FlaskClient, app: Flask, table_service: TableService) -> None:
    headers = csrf(client)
    for _ in range(app.config["PIN_ATTEMPTS"]):
        assert client.post("/api/pin", json={"pin": "0000"}, headers=headers).status_code == 403
    response = client.post("/api/pin", json={"pin": TEST_PIN}, headers=headers)
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) >= 1
    assert "try again" in response.get_json()["error"]
    assert client.get("/api/session").get_json()["trusted"] is False
    # Another phone is not punished for this one's guesses.
    other = app.test_client()
    other_headers = csrf(other)
    ok = other.post("/api/pin", json={"pin": TEST_PIN}, headers=other_headers, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert ok.status_code == 200


def test_rate_limit_window_ends(client: FlaskClient, app: Flask) -> None:
    app.config["PIN_WINDOW_S"] = 0.3
    headers = csrf(client)
    for _ in range(app.config["PIN_ATTEMPTS"]):
        client.post("/api/pin", json={"pin": "0000"}, headers=headers)
    assert client.post("/api/pin", json={"pin": TEST_PIN}, headers=headers).status_code == 429
    time.sleep(0.35)
    assert client.post("/api/pin", json={"pin": TEST_PIN}, headers=headers).status_code == 200


def test_pin_form_works_without_javascript(client: FlaskClient) -> None:
    html = client.get("/pin?next=/screen").get_data(as_text=True)
    token = html.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    wrong = client.post("/pin", data={"pin": "1357", "csrf_token": token, "next": "/screen"})
    assert wrong.status_code == 403 and "wrong PIN" in wrong.get_data(as_text=True)
    right = client.post("/pin", data={"pin": TEST_PIN, "csrf_token": token, "next": "/screen"})
    assert right.status_code == 303 and right.headers["Location"].endswith("/screen")
    assert client.get("/api/session").get_json()["trusted"] is True


def test_pin_form_never_redirects_off_site(client: FlaskClient) -> None:
    html = client.get("/pin").get_data(as_text=True)
    token = html.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    response = client.post("/pin", data={"pin": TEST_PIN, "csrf_token": token, "next": "//evil.example/x"})
    assert response.status_code == 303 and response.headers["Location"] in ("/", "http://localhost/")


def test_pin_form_without_csrf_token_is_refused(client: FlaskClient) -> None:
    client.get("/pin")
    response = client.post("/pin", data={"pin": TEST_PIN})
    assert response.status_code == 403
    assert client.get("/api/session").get_json()["trusted"] is False


def test_trust_ends_after_the_evening(trusted: FlaskClient, table_service: TableService) -> None:
    with trusted.session_transaction() as session:
        session["trusted_until"] = time.time() - 1
    rejected(table_service, lambda: command(trusted, "add_player", name="Ann"), 403, "PIN")


def test_a_new_pin_revokes_trusted_phones(trusted: FlaskClient, app: Flask, table_service: TableService) -> None:
    table_context(app).pin = "97531"
    rejected(table_service, lambda: command(trusted, "add_player", name="Ann"), 403, "PIN")


def test_logout_forgets_trust(trusted: FlaskClient, table_service: TableService) -> None:
    assert trusted.post("/api/logout").get_json() == {"trusted": False}
    rejected(table_service, lambda: command(trusted, "add_player", name="Ann"), 403, "PIN")


# ---------------------------------------------------------------- commands ----
def test_command_is_applied_and_answered_with_its_events(trusted: FlaskClient, table_service: TableService) -> None:
    response = command(trusted, "add_player", name="Ann", pad=1)
    assert response.status_code == 200
    body = response.get_json()
    assert body["events"][0]["type"] == "player_added"
    assert body["events"][0]["actor"].startswith("phone:")
    assert body["seq"] == table_service.snapshot()[0]
    assert [p["name"] for p in trusted.get("/api/state").get_json()["players"]] == ["Ann"]


def test_watching_is_open_but_changing_needs_the_pin(client: FlaskClient, table_service: TableService) -> None:
    headers = csrf(client)
    rejected(table_service, lambda: client.post("/api/command", json={"name": "add_player", "args": {"name": "Ann"}}, headers=headers), 403, "PIN")


def test_command_needs_csrf_even_when_trusted(trusted: FlaskClient, table_service: TableService) -> None:
    del trusted.environ_base["HTTP_X_CSRF_TOKEN"]
    rejected(table_service, lambda: command(trusted, "add_player", name="Ann"), 403, "CSRF")
    rejected(
        table_service,
        lambda: trusted.post("/api/command", json={"name": "add_player", "args": {"name": "Ann"}}, headers={"X-CSRF-Token": "forged"}),
        403,
        "CSRF",
    )


@pytest.fixture
def seated(trusted: FlaskClient) -> FlaskClient:
    """Two players seated (ids 1, 2) and a counter game running."""
    assert command(trusted, "add_player", name="Ann", pad=1).status_code == 200
    assert command(trusted, "add_player", name="Bob", pad=2).status_code == 200
    assert command(trusted, "start_game", kind="counter").status_code == 200
    return trusted


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ({"args": {}}, 400, "'name' is missing"),
        ({"name": 42}, 400, "command name"),
        ({"name": "Add Player!"}, 400, "command name"),
        ({"name": "add_player", "args": ["Ann"]}, 400, "'args' must be a JSON object"),
        ({"name": "add_player", "args": {"name": "Cy"}, "extra": 1}, 400, "unknown field 'extra'"),
        ({"name": "no_such_command"}, 400, "no_such_command"),
        ({"name": "add_player", "args": {}}, 400, "name"),
        ({"name": "add_player", "args": {"name": "Ann"}}, 409, "Ann"),
        ({"name": "add_player", "args": {"name": "Cy", "pad": 99}}, 400, "pad"),
        ({"name": "add_player", "args": {"name": "Cy", "pad": "one"}}, 400, "pad"),
        ({"name": "update_player", "args": {"player": 99, "name": "Zed"}}, 404, "99"),
        ({"name": "remove_player", "args": {"player": 99}}, 404, "99"),
        ({"name": "seat_players", "args": {"order": [2]}}, 400, "order"),
        ({"name": "start_game", "args": {"kind": "chess"}}, 400, "chess"),
        ({"name": "add", "args": {"n": 1000}}, 400, "'n'"),
        ({"name": "add", "args": {"n": "five"}}, 400, "'n'"),
    ],
)
def test_bad_commands_are_refused_and_change_nothing(
    seated: FlaskClient, table_service: TableService, body: dict[str, Any], status: int, fragment: str
) -> None:
    rejected(table_service, lambda: seated.post("/api/command", json=body), status, fragment)


def test_a_rule_error_is_a_conflict(seated: FlaskClient, table_service: TableService) -> None:
    assert command(seated, "lock", n=3).status_code == 200
    rejected(table_service, lambda: command(seated, "undo"), 409, "cannot be undone")


def test_non_json_bodies_are_refused(trusted: FlaskClient, table_service: TableService) -> None:
    rejected(table_service, lambda: trusted.post("/api/command", data="name=add_player", content_type="text/plain"), 415, "Content-Type: application/json")
    rejected(table_service, lambda: trusted.post("/api/command", data="{not json", content_type="application/json"), 400, "not valid JSON")
    rejected(table_service, lambda: trusted.post("/api/command", json=["add_player"]), 400, "JSON object")
    rejected(table_service, lambda: trusted.post("/api/command", json="add_player"), 400, "JSON object")


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ('{"name": "add_player", "args": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
        ('{"name": "add_player", "args": {"name": NaN}}', "NaN is not a JSON number"),
        ('{"name": "add_player", "args": {"name": "A", "pad": Infinity}}', "Infinity is not a JSON number"),
        ('{"name": "add_player", "args": {"name": "A", "pad": -Infinity}}', "Infinity is not a JSON number"),
        ("null", "JSON null"),
        ("", "not valid JSON"),
        (b"\xff\xfe\x00".decode("latin-1"), "not valid JSON"),
    ],
)
def test_hostile_json_is_refused(trusted: FlaskClient, table_service: TableService, raw: str, fragment: str) -> None:
    # Deep nesting once escaped as a 500 (RecursionError); NaN would have reached the log and broken JSON.parse on phones.
    rejected(table_service, lambda: trusted.post("/api/command", data=raw.encode("latin-1"), content_type="application/json"), 400, fragment)


def test_oversized_bodies_are_refused(trusted: FlaskClient, table_service: TableService) -> None:
    big = {"name": "add_player", "args": {"name": "A" * (70 * 1024)}}
    rejected(table_service, lambda: trusted.post("/api/command", json=big), 413, "too large")


def test_wrong_method_and_unknown_path_answer_json(client: FlaskClient, table_service: TableService) -> None:
    body = rejected(table_service, lambda: client.get("/api/command"), 405, "GET is not allowed")
    assert "POST" in body["error"]
    response = client.get("/api/command")
    assert "POST" in response.headers["Allow"]
    rejected(table_service, lambda: client.put("/api/state"), 405, "not allowed")
    rejected(table_service, lambda: client.get("/api/no/such/thing"), 404, "no API endpoint")
    # The games' data endpoints (JSON, SVG, CSV) answer errors in JSON too, not Flask's HTML pages.
    rejected(table_service, lambda: client.post("/games/tap4/summary"), 405, "POST is not allowed")
    rejected(table_service, lambda: client.get("/games/nope/stats.json"), 404, "no API endpoint")
    assert client.get("/no-such-page").mimetype == "text/html"  # pages keep Flask's HTML error pages


def test_a_bug_is_a_logged_500(seated: FlaskClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    response = command(seated, "explode")
    assert response.status_code == 500
    assert "bug" in response.get_json()["error"]
    assert any("unhandled error" in r.getMessage() for r in caplog.records)


def test_a_stopped_service_answers_503(tmp_path: Path) -> None:
    service = make_service(tmp_path / "s")
    client = make_app(service, tmp_path / "s").test_client()
    headers = trust(client)
    stop_service(service)
    response = client.post("/api/command", json={"name": "add_player", "args": {"name": "Ann"}}, headers=headers)
    assert response.status_code == 503 and "not running" in response.get_json()["error"]
    assert client.get("/api/health").status_code == 503


# -------------------------------------------------------------- simulated hits ----
def test_sim_hit_reaches_the_table(client: FlaskClient, table_service: TableService) -> None:
    headers = csrf(client)
    response = client.post("/api/sim/hit", json={"pad": 2, "kind": "touch", "strength": 0.3, "at_us": 12345}, headers=headers)
    assert response.status_code == 202
    assert response.get_json()["hit"] == {"pad": 2, "at_us": 12345, "kind": "touch", "strength": 0.3, "resolution_us": 1}
    wait_for(lambda: table_service.snapshot()[1]["recent_hits"])
    assert table_service.snapshot()[1]["recent_hits"][-1]["pad"] == 2
    assert table_service.events_after(0)[-1]["type"] == "hit"


def test_sim_hit_needs_no_pin_but_a_csrf_token(client: FlaskClient, table_service: TableService) -> None:
    rejected(table_service, lambda: client.post("/api/sim/hit", json={"pad": 1}), 403, "CSRF")


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({}, "'pad' is missing"),
        ({"pad": 0}, "from 1 to 4"),
        ({"pad": 5}, "from 1 to 4"),
        ({"pad": "1"}, "'pad'"),
        ({"pad": True}, "'pad'"),
        ({"pad": 1.5}, "'pad'"),
        ({"pad": 1, "kind": "punch"}, "'kind'"),
        ({"pad": 1, "strength": 1.5}, "'strength'"),
        ({"pad": 1, "strength": "hard"}, "'strength'"),
        ({"pad": 1, "at_us": -1}, "'at_us'"),
        ({"pad": 1, "at_us": 1.5}, "'at_us'"),
        ({"pad": 1, "force": 3}, "unknown field 'force'"),
    ],
)
def test_bad_sim_hits_are_refused(client: FlaskClient, table_service: TableService, body: dict[str, Any], fragment: str) -> None:
    headers = csrf(client)
    rejected(table_service, lambda: client.post("/api/sim/hit", json=body, headers=headers), 400, fragment)
    assert table_service.source.hits_emitted == 0


def test_sim_hit_bad_bodies(client: FlaskClient, table_service: TableService) -> None:
    headers = csrf(client)
    rejected(table_service, lambda: client.post("/api/sim/hit", data="pad=1", headers=headers, content_type="application/x-www-form-urlencoded"), 415, "JSON")
    rejected(table_service, lambda: client.post("/api/sim/hit", data="[1", headers=headers, content_type="application/json"), 400, "not valid JSON")
    rejected(table_service, lambda: client.post("/api/sim/hit", data="x" * (65 * 1024), headers=headers, content_type="application/json"), 413, "too large")
    rejected(table_service, lambda: client.get("/api/sim/hit"), 405, "not allowed")


def test_sim_hit_on_real_hardware_is_a_conflict(tmp_path: Path, mock_factory: Any) -> None:
    from companion.config import Config
    from companion.store import EventStore
    from hardware.gpio import GpioPads

    store = EventStore(tmp_path / "g.sqlite3")
    service = TableService(store, GpioPads([17, 27], pin_factory=mock_factory), Config(data_dir=tmp_path))
    service.start()
    try:
        # The source's start-up notice is logged by the loop; a refused command
        # queued behind it returns once it is folded, so the state is settled.
        with pytest.raises(RuleError):
            service.submit("end_game")
        client = make_app(service, tmp_path).test_client()
        headers = csrf(client)
        rejected(service, lambda: client.post("/api/sim/hit", json={"pad": 1}, headers=headers), 409, "real hardware (gpio)")
        assert "real hardware" in client.get("/pads").get_data(as_text=True)
    finally:
        service.stop()
        store.close()


# ------------------------------------------------------------------ past games ----
def test_past_games_history_and_exports(seated: FlaskClient) -> None:
    assert command(seated, "add", n=5).status_code == 200
    assert command(seated, "add", n=7).status_code == 200
    assert command(seated, "undo").status_code == 200
    games = seated.get("/api/games").get_json()["games"]
    assert len(games) == 1 and games[0]["kind"] == "counter"
    game_id = games[0]["game_id"]

    history = seated.get(f"/api/games/{game_id}/history").get_json()
    assert history["game"]["game_id"] == game_id
    types = [e["type"] for e in history["events"]]
    assert types[0] == "game_started" and types.count("added") == 2
    undone = [e for e in history["events"] if e["undone"]]
    assert [e["data"] for e in undone] == [{"n": 7}]

    exported = seated.get(f"/api/games/{game_id}/export.json")
    assert exported.headers["Content-Disposition"] == f'attachment; filename="game-{game_id}.json"'
    assert json.loads(exported.get_data()) == {"game": history["game"], "events": history["events"]}

    csv_text = seated.get(f"/api/games/{game_id}/export.csv").get_data(as_text=True)
    rows = csv_text.strip().splitlines()
    assert rows[0] == "seq,at,type,actor,undone,data"
    assert len(rows) == 1 + len(history["events"])
    assert sum(1 for r in rows if ",yes," in r) == 1


@pytest.mark.parametrize("path", ["/api/games/999/history", "/api/games/999/export.json", "/api/games/999/export.csv"])
def test_unknown_game_is_404(client: FlaskClient, table_service: TableService, path: str) -> None:
    rejected(table_service, lambda: client.get(path), 404, "no game")


def test_game_id_must_be_a_number(client: FlaskClient, table_service: TableService) -> None:
    rejected(table_service, lambda: client.get("/api/games/abc/history"), 404, "no API endpoint")


# ------------------------------------------------------------------ SSE basics ----
@pytest.mark.parametrize("headers, query", [({"Last-Event-ID": "abc"}, ""), ({}, "?after=-3"), ({}, "?after=1e3"),
                                            # Unicode digits: str.isdigit() says yes, int() says no (was a 500).
                                            ({}, "?after=%C2%B2"), ({}, "?after=%D9%A3"), ({"Last-Event-ID": "\u00b9"}, "")])
def test_bad_resume_points_are_refused(client: FlaskClient, table_service: TableService, headers: dict[str, str], query: str) -> None:
    rejected(table_service, lambda: client.get("/api/events" + query, headers=headers), 400, "sequence number")


def read_messages(response: Any, count: int) -> list[str]:
    """The first ``count`` SSE blocks (separated by a blank line) of a streamed response."""
    buffer = ""
    blocks: list[str] = []
    for chunk in response.response:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            blocks.append(block)
            if len(blocks) >= count:
                return blocks
    return blocks


def test_events_stream_starts_with_retry_then_backlog_then_state(seated: FlaskClient, table_service: TableService) -> None:
    seq = table_service.snapshot()[0]
    response = seated.get("/api/events?after=1", buffered=False)
    try:
        assert response.mimetype == "text/event-stream"
        assert response.headers["Cache-Control"].startswith("no-cache")
        blocks = read_messages(response, 1 + (seq - 1) + 1)
    finally:
        response.close()
    assert blocks[0].startswith("retry: ")
    logs = blocks[1:-1]
    assert [int(b.split("\n")[0].removeprefix("id: ")) for b in logs] == list(range(2, seq + 1))
    assert all(b.split("\n")[1] == "event: log" for b in logs)
    assert blocks[-1].startswith("event: state\ndata: ")
    assert json.loads(blocks[-1].split("data: ", 1)[1])["seq"] == seq


def test_header_resume_point_wins_over_query(seated: FlaskClient, table_service: TableService) -> None:
    seq = table_service.snapshot()[0]
    response = seated.get("/api/events?after=0", headers={"Last-Event-ID": str(seq - 1)}, buffered=False)
    try:
        blocks = read_messages(response, 3)
    finally:
        response.close()
    assert blocks[1].startswith(f"id: {seq}\nevent: log")
    assert blocks[2].startswith("event: state")


def test_a_resume_point_from_the_future_gets_the_state(client: FlaskClient) -> None:
    response = client.get("/api/events?after=999999", buffered=False)
    try:
        blocks = read_messages(response, 2)
    finally:
        response.close()
    assert blocks[1].startswith("event: state")


# --------------------------------------------------------------- game blueprints ----
def test_game_blueprints_are_registered_automatically(tmp_path: Path, table_service: TableService, monkeypatch: pytest.MonkeyPatch) -> None:
    import web.games

    extra = tmp_path / "extra_games"
    extra.mkdir()
    (extra / "demo.py").write_text(
        "from flask import Blueprint\n"
        "bp = Blueprint('demo_game', __name__, url_prefix='/api/games/demo')\n"
        "@bp.get('/hello')\n"
        "def hello():\n"
        "    return {'hello': 'demo'}\n"
    )
    (extra / "notes.py").write_text("x = 1\n")  # no bp: skipped
    monkeypatch.setattr(web.games, "__path__", [*web.games.__path__, str(extra)])
    app = make_app(table_service, tmp_path / "data")
    assert app.test_client().get("/api/games/demo/hello").get_json() == {"hello": "demo"}
    monkeypatch.delitem(__import__("sys").modules, "web.games.demo", raising=False)
    monkeypatch.delitem(__import__("sys").modules, "web.games.notes", raising=False)


def test_without_a_service_the_app_runs_its_own_with_simulated_pads(tmp_path: Path) -> None:
    app = create_app({"TESTING": True, "DATA_DIR": tmp_path / "own"})
    ctx = table_context(app)
    try:
        assert ctx.owns_service
        assert app.test_client().get("/api/health").get_json()["pads"]["source"] == "sim"
        assert (tmp_path / "own" / "tabletop.sqlite3").exists()
    finally:
        ctx.service.stop()
        ctx.service.store.close()

"""Hostile text (issue 13, item 1): a name can neither be stored badly nor break the live page or an export.

Two halves: commands refuse text that cannot be written as UTF-8 or that
misleads on screen, and every reader of the log (the SSE stream, exports,
charts, pages) survives text stored before those rules existed.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Iterator

import pytest
from flask.testing import FlaskClient

from core.errors import InputError
from companion.games import load_games
from companion.games.base import Command
from companion.service import TableService
from companion.store import EventStore, NewEvent
from companion.table import TableState
from companion.text import clean_name, dumps_json, encode_utf8, text_problem

from helpers.browser import make_app, make_service, stop_service, trust

#: Names a guest could type, each of which must be refused, and the words the refusal uses.
HOSTILE_NAMES = [
    ("\ud800x", "lone surrogate"),
    ("x\udfff", "lone surrogate"),
    ("Ann\x00", "control character"),
    ("Ann\x1b[31m", "control character"),
    ("Ann\n", "control character"),
    ("A\tB", "control character"),
    ("Ann\x7f", "control character"),
    ("Ann\x85", "control character"),
    ("\u202eevil", "bidi control"),
    ("x\u2066y", "bidi control"),
    ("x\u200fy", "bidi control"),
    ("a\u2028b", "line or paragraph separator"),
    ("\u200b", "visible character"),
    ("\u200b\u200d\ufeff\u2060", "visible character"),
    ("\u3164", "visible character"),
    ("\u0301\u0301", "visible character"),
]
#: Names people really have, which must still be accepted as typed.
FRIENDLY_NAMES = ["Zoë", "李小龙", "عليّ", "O'Brien", "👨\u200d👩\u200d👧 fam", "Ana\u0301", "ß-Dee 2"]


def table() -> TableState:
    return TableState(load_games(), pad_count=4)


def run(state: TableState, command: str, **args: Any) -> list[dict[str, Any]]:
    return state.execute(Command(command, args, actor="test"), "t")


# ---------------------------------------------------------------- input rules ----
@pytest.mark.parametrize("name, why", HOSTILE_NAMES, ids=[repr(n) for n, _ in HOSTILE_NAMES])
def test_hostile_names_are_refused_and_change_nothing(name: str, why: str) -> None:
    state = table()
    run(state, "add_player", name="Ann")
    before = copy.deepcopy(state.view())
    with pytest.raises(InputError, match=why):
        run(state, "add_player", name=name)
    with pytest.raises(InputError, match=why):
        run(state, "update_player", player=1, name=name)
    assert state.view() == before


@pytest.mark.parametrize("name", FRIENDLY_NAMES)
def test_real_names_are_still_accepted(name: str) -> None:
    state = table()
    run(state, "add_player", name=name)
    assert state.view()["players"][0]["name"] == name


def test_a_colour_with_a_trailing_newline_is_refused() -> None:
    # COLOUR_RE ended in `$`, which also matches before a final newline.
    state = table()
    with pytest.raises(InputError, match="'colour' must be a colour"):
        TableState._colour("#e4572e\n")
    with pytest.raises(InputError):
        run(state, "add_player", name="Ann", colour="#e4572e\n")
    assert state.view()["players"] == []


@pytest.mark.parametrize("args, where", [
    ({"kind": "tap4", "settings": {"target\u202e": 1}}, "field name in 'settings'"),
    ({"kind": "tap4\x00"}, "'kind'"),
    ({"kind": "tap4", "players": ["Ann", "\ud800"]}, r"'players'\[1\]"),
])
def test_every_string_a_command_carries_is_checked(args: dict[str, Any], where: str) -> None:
    state = table()
    run(state, "add_player", name="Ann")
    before = copy.deepcopy(state.view())
    with pytest.raises(InputError, match=where):
        run(state, "start_game", **args)
    assert state.view() == before


def test_the_web_api_answers_400_and_stores_nothing(tmp_path: Path) -> None:
    service = make_service(tmp_path / "data")
    try:
        client = make_app(service, tmp_path / "data").test_client()
        client.environ_base["HTTP_X_CSRF_TOKEN"] = trust(client)["X-CSRF-Token"]
        seq = service.snapshot()[0]
        # Sent as JSON text with the escape, exactly as a browser's JSON.stringify sends a lone surrogate.
        body = '{"name": "add_player", "args": {"name": "\\ud800x"}}'
        response = client.post("/api/command", data=body, content_type="application/json")
        assert response.status_code == 400, response.get_json()
        assert "lone surrogate" in response.get_json()["error"]
        assert service.snapshot()[0] == seq
        assert service.store.last_seq == seq
    finally:
        stop_service(service)


def test_text_problem_and_clean_name_directly() -> None:
    assert text_problem("Zoë 👨\u200d👩\u200d👧") is None
    assert "surrogate" in (text_problem("\udc80") or "")
    assert clean_name("  Dee   Dee ", 24) == "Dee Dee"
    with pytest.raises(ValueError, match="1 to 24"):
        clean_name("   ", 24)


# ---------------------------------------------------------------- output safety ----
def test_dumps_json_escapes_lone_surrogates_and_reads_back_exactly() -> None:
    data = {"name": "\ud800x", "k\udfff": ["ok", "Zoë"]}
    text = dumps_json(data)
    encode_utf8(text)  # does not raise
    text.encode("utf-8")  # nothing left that strict UTF-8 refuses
    assert json.loads(text) == data
    assert "Zoë" in text  # other text stays readable, not \u-escaped
    assert encode_utf8("a\ud800b") == "a\ufffdb".encode()


#: Names stored before the rules existed (a log written by an older version).
LEGACY_NAMES = ["\ud800x", "Bad\x01\x1b", "\u202eevil"]


@pytest.fixture
def legacy(tmp_path: Path) -> Iterator[tuple[TableService, FlaskClient, int]]:
    """A table whose log already holds hostile names, in a Tap 4 game with two rounds played."""
    data = tmp_path / "data"
    data.mkdir()
    with EventStore(data / "tabletop.sqlite3") as store:
        store.append([NewEvent("player_added", {"id": i, "name": name, "colour": "#e4572e", "pad": None})
                      for i, name in enumerate(LEGACY_NAMES, start=1)])
    service = make_service(data, games=load_games())
    try:
        service.submit("start_game", {"kind": "tap4", "settings": {"target": 60}})
        game_id = service.snapshot()[1]["game"]["game_id"]
        service.submit("enter_round", {"entries": [{"player": 1, "out": True}, {"player": 2, "total": 30},
                                                   {"player": 3, "total": 12}]})
        service.submit("enter_round", {"entries": [{"player": 1, "total": 10}, {"player": 2, "out": True},
                                                   {"player": 3, "total": 5}]})
        client = make_app(service, data, SSE_POLL_S=0.02, SSE_KEEPALIVE_S=0.2).test_client()
        yield service, client, game_id
    finally:
        stop_service(service)


def sse_blocks(response: Any) -> Iterator[str]:
    """SSE messages of a streamed test-client response, decoded as strict UTF-8."""
    buffer = ""
    for chunk in response.response:
        buffer += chunk.decode("utf-8") if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            yield block


def data_of(block: str) -> Any:
    return json.loads(block.split("data: ", 1)[1])


def test_the_live_stream_works_on_a_log_holding_hostile_names(legacy: tuple[TableService, FlaskClient, int]) -> None:
    service, client, _ = legacy
    seq = service.snapshot()[0]
    # A fresh stream: the state carries every name exactly as stored.
    response = client.get("/api/events", buffered=False)
    try:
        blocks = sse_blocks(response)
        assert next(blocks).startswith("retry: ")
        state = data_of(next(blocks))
        assert [p["name"] for p in state["players"]] == LEGACY_NAMES
    finally:
        response.close()
    # A resume from before the hostile events replays them, then goes on live.
    response = client.get("/api/events?after=0", buffered=False)
    try:
        blocks = sse_blocks(response)
        next(blocks)
        logged = [data_of(next(blocks)) for _ in range(seq)]
        assert [e["seq"] for e in logged] == list(range(1, seq + 1))
        assert logged[0]["data"]["name"] == "\ud800x"
        assert next(blocks).startswith("event: state")
        service.submit("update_player", {"player": 2, "name": "Bea"})
        live = next(blocks)
        assert live.startswith(f"id: {seq + 1}\nevent: log")
        assert data_of(next(blocks))["players"][0]["name"] == "\ud800x"
    finally:
        response.close()


def test_exports_charts_and_pages_work_on_a_log_holding_hostile_names(legacy: tuple[TableService, FlaskClient, int]) -> None:
    service, client, game_id = legacy
    service.submit("update_player", {"player": 1, "name": "Renamed"})  # a rename does not rewrite the log

    response = client.get(f"/api/games/{game_id}/export.json")
    assert response.status_code == 200, response.get_data()
    body = json.loads(response.get_data().decode("utf-8"))
    assert [p["name"] for p in body["game"]["players"]] == LEGACY_NAMES

    response = client.get(f"/api/games/{game_id}/export.csv")
    assert response.status_code == 200, response.get_data()
    rows = list(csv.reader(io.StringIO(response.get_data().decode("utf-8"))))
    started = next(r for r in rows if r[2] == "game_started")
    assert [p["name"] for p in json.loads(started[5])["players"]] == LEGACY_NAMES

    response = client.get(f"/games/tap4/{game_id}/chart.svg", follow_redirects=True)
    assert response.status_code == 200, response.get_data()
    ET.fromstring(response.get_data())  # well-formed XML: no control character, no bad UTF-8

    for path in (f"/games/tap4/{game_id}/sheet.csv", f"/games/tap4/{game_id}/sheet.json", "/games/tap4/summary",
                 f"/api/games/{game_id}/history", "/api/games", "/api/state", "/", "/screen"):
        response = client.get(path, follow_redirects=True)
        assert response.status_code == 200, (path, response.get_data()[:300])
        response.get_data().decode("utf-8")  # strict UTF-8

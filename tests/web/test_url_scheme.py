"""One URL scheme: every JSON and download endpoint is under /api/, and the old game paths redirect.

Pages (and the static files and the QR image they embed) stay where a
person types them; everything a script fetches lives under ``/api/``, the
games' own endpoints under ``/api/games/<kind>/``. Checked on the real app's
URL map and over a real waitress server on loopback.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import LiveServer, make_app, running_service, serve_table, seat

from companion.games import load_games
from companion.service import TableService

#: Paths a person opens in a browser (and what those pages embed): not part of the API.
PAGES = {"/", "/screen", "/pads", "/pad", "/pin", "/calibrate", "/history", "/join.svg", "/static/<path:filename>"}
#: The one rule kept for old bookmarks and scripts: it only redirects.
OLD_GAME_PATHS = "/games/<kind>/<path:rest>"


def get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    """A plain GET over http.client that does not follow redirects."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_every_endpoint_that_is_not_a_page_is_under_api(tmp_path: Path) -> None:
    with running_service(tmp_path / "data", games=dict(load_games())) as service:
        app = make_app(service, tmp_path / "data")
    rules = {rule.rule for rule in app.url_map.iter_rules()}
    outside = sorted(r for r in rules - PAGES - {OLD_GAME_PATHS} if not r.startswith("/api/"))
    assert outside == [], f"data endpoints outside /api/: {outside}"
    for kind in ("taco", "tap4"):
        game_rules = [r for r in rules if f"/games/{kind}/" in r and r != OLD_GAME_PATHS]
        assert game_rules and all(r.startswith(f"/api/games/{kind}/") for r in game_rules), game_rules


@pytest.fixture
def tap4_server(tmp_path: Path) -> Iterator[tuple[LiveServer, int]]:
    with serve_table(tmp_path / "data", games=dict(load_games())) as server:
        service: TableService = server.service
        a, b = seat(service, ("Ann", "Bob"))
        service.submit("start_game", {"kind": "tap4", "settings": {"target": 60}})
        game_id = service.snapshot()[1]["game"]["game_id"]
        service.submit("enter_round", {"entries": [{"player": a, "out": True}, {"player": b, "total": 30}]})
        yield server, game_id


@pytest.mark.parametrize(
    "old, new",
    [
        ("/games/tap4/{id}/sheet.json", "/api/games/tap4/{id}/sheet.json"),
        ("/games/tap4/{id}/sheet.csv", "/api/games/tap4/{id}/sheet.csv"),
        ("/games/tap4/{id}/chart.svg?v=3", "/api/games/tap4/{id}/chart.svg?v=3"),
        ("/games/tap4/summary", "/api/games/tap4/summary"),
        ("/games/taco/stats.json", "/api/games/taco/stats.json"),
        ("/games/taco/{id}/verdicts.json", "/api/games/taco/{id}/verdicts.json"),
    ],
)
def test_old_game_paths_redirect_permanently_to_api(tap4_server: tuple[LiveServer, int], old: str, new: str) -> None:
    server, game_id = tap4_server
    old, new = old.format(id=game_id), new.format(id=game_id)
    status, headers, _ = get(server.port, old)
    assert status == 308
    assert headers["location"].endswith(new)
    # The target is the live endpoint (game 1 is Tap 4, so Taco's verdicts of it are a 404 that says so).
    new_status, _, new_body = get(server.port, new)
    if "verdicts" in new:
        assert new_status == 404 and b"no Taco Hat Cake Gift Pizza game" in new_body
    else:
        assert new_status == 200


def test_the_redirect_target_answers_what_the_old_path_did(tap4_server: tuple[LiveServer, int]) -> None:
    server, game_id = tap4_server
    status, _, body = get(server.port, f"/api/games/tap4/{game_id}/sheet.json")
    assert status == 200
    data: dict[str, Any] = json.loads(body)
    assert data["game"]["game_id"] == game_id and [p["total"] for p in data["view"]["players"]] == [0, 30]


def test_an_old_path_of_a_game_without_endpoints_is_a_json_404(tap4_server: tuple[LiveServer, int]) -> None:
    server, _ = tap4_server
    status, headers, body = get(server.port, "/games/tapeworm/stats.json")
    assert status == 404 and headers["content-type"].startswith("application/json")
    assert "/api/games/<kind>/" in json.loads(body)["error"]

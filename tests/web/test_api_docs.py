"""docs/api.md's examples for script writers are true: the fixed PIN, and a penalty after a verdict.

The TOML block is loaded as a config file, the app is built from it as
``tabletop serve --config FILE`` builds it, and the Python example runs
against that app as written (its ``requests`` calls served by Flask's test
client): the PIN it sends must be accepted and its command and simulated hit
must go through. The ``overruled`` example must have exactly the fields a
real late penalty records, with the effect on the verdict the page
describes.
"""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from typing import Any

from helpers.browser import running_service

from companion.config import load_config
from helpers.taco_driver import VirtualTable
from web import create_app

API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def blocks(language: str) -> list[str]:
    """The fenced code blocks of docs/api.md in ``language``."""
    return re.findall(rf"```{language}\n(.*?)```", API_MD.read_text(), re.S)


class _Response:
    """What the documented script uses of a ``requests`` response, from a Flask test response."""

    def __init__(self, response: Any) -> None:
        self.status_code = response.status_code
        self._json = response.get_json(silent=True)

    def json(self) -> Any:
        return self._json

    def raise_for_status(self) -> None:
        assert self.status_code < 400, f"{self.status_code}: {self._json}"


class _Session:
    """``requests.Session`` for the documented script, served by the Flask test client (one cookie jar)."""

    def __init__(self, client: Any, base: str, log: list[tuple[str, int]]) -> None:
        self.headers: dict[str, str] = {}
        self._client, self._base, self._log = client, base, log

    def _call(self, method: str, url: str, **kwargs: Any) -> _Response:
        assert url.startswith(self._base), url
        path = url[len(self._base):]
        response = _Response(getattr(self._client, method)(path, headers=dict(self.headers), **kwargs))
        self._log.append((f"{method.upper()} {path}", response.status_code))
        return response

    def get(self, url: str, **kwargs: Any) -> _Response:
        return self._call("get", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> _Response:
        return self._call("post", url, **kwargs)


def test_the_fixed_pin_of_the_config_example_lets_the_documented_script_change_the_table(tmp_path: Path) -> None:
    (toml,) = [b for b in blocks("toml") if "[server]" in b]
    path = tmp_path / "config.toml"
    path.write_text(toml)
    config = load_config(path)
    script = next(b for b in blocks("python") if "/api/pin" in b)
    base = re.search(r'base = "([^"]+)"', script).group(1)  # type: ignore[union-attr]
    with running_service(tmp_path / "data") as service:
        # As `tabletop serve --config FILE` builds it: the PIN comes from [server] pin, nothing else.
        app = create_app({"TESTING": True, "DATA_DIR": tmp_path / "data"}, service=service, config=config)
        calls: list[tuple[str, int]] = []
        fake_requests = types.SimpleNamespace(Session=lambda: _Session(app.test_client(), base, calls))
        exec(compile(script.replace("import requests\n", ""), "docs/api.md", "exec"), {"requests": fake_requests})
        assert [status for _, status in calls] == [200, 200, 200, 202], calls
        _, state = service.snapshot()
        assert [(p["name"], p["pad"]) for p in state["players"]] == [("Ann", 1)]
        wrong = app.test_client()
        token = wrong.get("/api/session").get_json()["csrf_token"]
        other_pin = "1" + config.server_pin if len(config.server_pin) < 12 else "0" * 12  # type: ignore[operator]
        assert wrong.post("/api/pin", json={"pin": other_pin}, headers={"X-CSRF-Token": token}).status_code == 403


def _late_penalty() -> tuple[dict[str, Any], dict[str, Any]]:
    """A digital Taco verdict, then a wrong gesture seen after the pile was taken: (event data, view)."""
    table = VirtualTable(
        3,
        {"tempo_ms": 1000, "lead_in_ms": 1000, "after_verdict_ms": 2000},
        hands={1: ["monkey", "cake"], 2: ["cake", "hat"], 3: ["gift", "gift"]},
    )
    table.advance(1_000_000)
    for pad, at in ((1, 1_300_000), (3, 1_400_000), (2, 1_500_000)):
        table.hit(pad, at)
    assert table.game.verdicts[-1]["taker"] == 2
    (event,) = table.command("penalty", {"player": 3, "reason": "gesture"}, 1_600_000)
    assert event.type == "overruled"
    return event.data, table.game.view()


def test_a_penalty_after_a_verdict_is_the_overruled_event_the_docs_show() -> None:
    example = next(b for b in blocks("json") if '"overruled"' in b)
    documented = json.loads(example)
    data, view = _late_penalty()
    assert documented["type"] == "overruled"
    assert set(data) == set(documented["data"])
    assert (data["action"], data["from"], data["to"], data["note"]) == ("penalty", 2, 3, "wrong gesture")
    verdict = view["verdict"]
    assert (verdict["taker"], verdict["holder"]) == (2, 3)
    assert verdict["overrules"] == [data]
    assert view["verdicts"][0] == verdict

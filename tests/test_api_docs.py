"""docs/api.md's examples for script writers are true: the fixed PIN, and a penalty after a verdict.

The TOML block is loaded as a config file and the app must accept the PIN
the Python example sends; the ``overruled`` example must have exactly the
fields a real late penalty records, with the effect on the verdict the page
describes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from browser import make_app, running_service

from companion.config import load_config
from companion.games.taco_driver import VirtualTable

API_MD = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def blocks(language: str) -> list[str]:
    """The fenced code blocks of docs/api.md in ``language``."""
    return re.findall(rf"```{language}\n(.*?)```", API_MD.read_text(), re.S)


def test_the_fixed_pin_of_the_config_example_is_the_pin_the_script_sends(tmp_path: Path) -> None:
    (toml,) = [b for b in blocks("toml") if "[server]" in b]
    path = tmp_path / "config.toml"
    path.write_text(toml)
    pin = load_config(path).server_pin
    script = next(b for b in blocks("python") if "/api/pin" in b)
    assert f'json={{"pin": "{pin}"}}' in script
    with running_service(tmp_path / "data") as service:
        client = make_app(service, tmp_path / "data", PIN=pin).test_client()
        token = client.get("/api/session").get_json()["csrf_token"]
        response = client.post("/api/pin", json={"pin": pin}, headers={"X-CSRF-Token": token})
        assert response.status_code == 200 and response.get_json()["trusted"] is True


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

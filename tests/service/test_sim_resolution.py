"""Simulated pads' timing resolution is a setting (``pads.sim.resolution_us``), so photo finishes can be rehearsed.

Checked from the config file through the factory to a Taco verdict judged by
the real table service.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_taco_service import TACO_ONLY, until, view, window_open

from companion.config import Config, load_config, parse_config
from core.errors import ConfigError
from companion.games.taco import TacoGame
from companion.service import TableService
from companion.store import EventStore
from hardware.factory import open_source
from hardware.script import ScriptedPads
from hardware.sim import SimulatedPads


def test_the_setting_is_read_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[pads]\nsource = "sim"\n\n[pads.sim]\nresolution_us = 1000\n')
    assert load_config(path).sim_resolution_us == 1000
    assert Config().sim_resolution_us == 1


@pytest.mark.parametrize("bad", [0, -5, 100_001, 1.5, "1000", True])
def test_a_bad_resolution_names_the_key(bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"'pads\.sim\.resolution_us'.*whole number from 1 to 100000"):
        parse_config({"pads": {"sim": {"resolution_us": bad}}})


def test_an_unknown_key_under_pads_sim_is_named() -> None:
    with pytest.raises(ConfigError, match="'pads.sim.resolution' is not known"):
        parse_config({"pads": {"sim": {"resolution": 5}}})


def test_simulated_and_scripted_sources_report_the_configured_resolution(tmp_path: Path) -> None:
    config = parse_config({"pads": {"sim": {"resolution_us": 250}}})
    sim = open_source(config)
    assert isinstance(sim, SimulatedPads) and sim.resolution_us == 250
    assert sim.inject(1, at_us=1_000).resolution_us == 250
    assert sim.status()["resolution_us"] == 250
    script = tmp_path / "hits.txt"
    script.write_text("0 1\n")
    scripted = open_source(config, script=script)
    assert isinstance(scripted, ScriptedPads) and scripted.resolution_us == 250


def _last_two_slaps_300_us_apart(tmp_path: Path, resolution_us: int) -> dict[str, Any]:
    """A digital Taco round on pads built from the config; the verdict of a finish 0.3 ms apart."""
    config = parse_config({"pads": {"count": 3, "sim": {"resolution_us": resolution_us}}})
    pads = open_source(config)
    assert isinstance(pads, SimulatedPads)
    store = EventStore(tmp_path / f"log-{resolution_us}.sqlite3")
    service = TableService(store, pads, games={"taco": TacoGame})
    service.start()
    try:
        for name, pad in (("Ann", 1), ("Bob", 2), ("Cy", 3)):
            service.submit("add_player", {"name": name, "pad": pad})
        service.submit("start_game", {"kind": "taco", "settings": TACO_ONLY})
        card_at = view(until(service, window_open))["top"]["at_us"]
        for pad, after in ((1, 200_000), (2, 260_000), (3, 260_300)):
            pads.inject(pad, at_us=card_at + after)
        return view(until(service, lambda s: view(s)["verdict"] is not None))["verdict"]
    finally:
        service.stop()
        store.close()


def test_a_coarse_simulated_clock_makes_a_close_finish_a_photo_finish(tmp_path: Path) -> None:
    verdict = _last_two_slaps_300_us_apart(tmp_path, 1000)
    assert verdict["taker"] == 3
    # Hardware and simulated pads carry no uncertainty of their own: the combined one is the resolution.
    assert verdict["photo_finish"] == [{"decides": "last", "players": [2, 3], "margin_ms": 0.3, "resolution_ms": 1.0,
                                        "uncertainty_ms": 1.0, "text": "photo finish: 0.3 ms"}]
    assert "photo finish" in verdict["reason"]


def test_at_the_default_1_us_the_same_finish_is_clear(tmp_path: Path) -> None:
    verdict = _last_two_slaps_300_us_apart(tmp_path, 1)
    assert verdict["taker"] == 3 and verdict["photo_finish"] == []


def test_docs_pads_lists_every_pads_config_key() -> None:
    from companion.config import _SCALARS

    text = (Path(__file__).resolve().parents[2] / "docs" / "pads.md").read_text()
    documented = set(re.findall(r"^\| `(pads\.[a-z_.]+)` \|", text, re.M))
    assert documented == {key for key in _SCALARS if key.startswith("pads.")}

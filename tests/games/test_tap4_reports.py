"""Tap 4 reports as pure functions: the SVG chart, CSV export, statistics over plain event lists."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from typing import Any

from companion.games.base import Command, Player
from companion.games.tap4 import Tap4
from companion.games.tap4_chart import running_totals_svg
from companion.games.tap4_stats import player_stats, rebuild, sheet_csv

SVG = "{http://www.w3.org/2000/svg}"


def _game(names: list[str], rounds: list[list[Any]], settings: dict[str, Any] | None = None,
          colours: list[str] | None = None) -> tuple[Tap4, list[dict[str, Any]]]:
    """A sheet with ``rounds`` (per round: per seat "out" or a quick total), and its stored events."""
    players = [Player(i + 1, n, (colours or ["#888888"] * len(names))[i]) for i, n in enumerate(names)]
    game = Tap4(players, settings or {})
    log: list[dict[str, Any]] = []
    for r in rounds:
        entries = [{"player": i + 1, "out": True} if v == "out" else {"player": i + 1, "total": v} for i, v in enumerate(r)]
        for e in game.decide(Command("enter_round", {"entries": entries}, actor="t")):
            game.evolve(e)
            log.append({"seq": len(log) + 2, "type": e.type, "data": e.data})
    return game, log


def test_chart_is_well_formed_svg_with_one_line_per_player_and_the_target():
    game, _ = _game(["Ann", "Bob <&>", "Cat"], [["out", 40, 12], [30, "out", 50], [20, 70, "out"]],
                    colours=["#ff0000", "#ff0000", "not-a-colour\" onload=\"x"])
    svg = running_totals_svg(game.view())
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox", "").startswith("0 0 360 ")
    assert root.get("width") == "100%"
    lines = root.findall(f"{SVG}polyline")
    assert [ln.get("data-player") for ln in lines] == ["1", "2", "3"]
    # Each line starts at 0 before round 1 and has one point per round after it.
    assert all(len(ln.get("points", "").split()) == 4 for ln in lines)
    colours = [ln.get("stroke") for ln in lines]
    assert colours[0] == "#ff0000"
    assert len(set(colours)) == 3, "a shared or invalid colour is replaced so lines stay apart"
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "target 150" in texts
    assert "Bob <&>: 110" in texts
    assert root.find(f"{SVG}line[@class='target']") is not None


def test_chart_of_an_empty_sheet_is_still_well_formed():
    game, _ = _game(["Ann", "Bob"], [])
    root = ET.fromstring(running_totals_svg(game.view()))
    assert len(root.findall(f"{SVG}polyline")) == 2


def test_chart_scales_past_the_target():
    game, _ = _game(["Ann", "Bob", "Cat"], [["out", 300, 1]])
    root = ET.fromstring(running_totals_svg(game.view()))
    labels = [int(t.text) for t in root.iter(f"{SVG}text") if (t.text or "").isdigit()]
    assert max(labels) >= 300


def test_csv_has_a_row_per_round_with_running_totals_and_final_places():
    game, _ = _game(["Ann", "Bob, Jr.", "=SUM(A1)"], [["out", 40, 12], [30, "out", 50]])
    rows = list(csv.reader(io.StringIO(sheet_csv(game.view()))))
    assert rows[0] == ["round", "dealer", "starter", "went out", "Ann", "Ann total", "Bob, Jr.", "Bob, Jr. total",
                       "'=SUM(A1)", "'=SUM(A1) total"]
    assert rows[1] == ["1", "'=SUM(A1)", "Ann", "Ann", "0", "0", "40", "40", "12", "12"]
    assert rows[2] == ["2", "Ann", "Bob, Jr.", "Bob, Jr.", "30", "30", "0", "40", "50", "62"]
    assert rows[3] == ["total", "", "", "", "", "30", "", "40", "", "62"]
    assert rows[4] == ["place", "", "", "", "", "1", "", "2", "", "3"]


def test_stats_over_plain_event_lists_skip_undone_events_and_unfinished_wins():
    finished, log1 = _game(["Ann", "Bob", "Cat"], [["out", 60, 30], [10, "out", 60]])
    assert finished.outcome() is None  # below the default target of 150; the summary below says 90
    summary1 = {"game_id": 1, "players": [{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bob"}, {"id": 3, "name": "Cat"}],
                "settings": {"target": 90}, "outcome": None}
    running, log2 = _game(["Ann", "Bob", "Cat"], [["out", 5, 5]])
    undone = {"seq": 99, "type": "round_entered", "undone": True,
              "data": {**log2[0]["data"], "round": 2, "change": 2}}
    summary2 = {"game_id": 2, "players": [1, 2, 3], "settings": {}, "outcome": None}
    stats = {s["player"]: s for s in player_stats([(summary1, log1), (summary2, log2 + [undone])])}
    assert stats[1]["name"] == "Player 1"  # the later game only knew ids
    assert stats[1]["games"] == 2 and stats[1]["finished"] == 1 and stats[1]["wins"] == 1
    assert stats[2]["wins"] == 0 and stats[3]["wins"] == 0
    assert stats[1]["rounds"] == 3
    assert stats[2]["went_out"] == 1 and stats[2]["went_out_share"] == round(1 / 3, 3)
    assert stats[3]["best_round"] == 5 and stats[3]["worst_round"] == 60
    assert stats[3]["average_round"] == round((30 + 60 + 5) / 3, 1)


def test_rebuild_skips_events_that_no_longer_fit():
    game, log = _game(["Ann", "Bob", "Cat"], [["out", 5, 5], [5, "out", 5]])
    broken = [log[0], {**log[1], "data": {**log[1]["data"], "round": 5}}]
    sheet = rebuild(game.players, {}, broken)
    assert len(sheet.view()["rounds"]) == 1

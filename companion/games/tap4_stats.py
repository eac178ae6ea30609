"""Tap 4 over recorded events: rebuild a sheet, statistics across games, CSV export.

Pure functions over stored event dicts (``{"type", "data", ...}``), as the
table service hands them out (``service.history`` / ``service.game_events``).
"""

from __future__ import annotations

import csv
import io
import logging
from typing import Any, Iterable, Mapping, Sequence

from companion.games.base import Event, Player
from companion.games.tap4 import ROUND_EVENTS, Tap4
from companion.text import spreadsheet_cell

log = logging.getLogger(__name__)


def _effective(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Events that still count: undone ones (marked ``undone`` by the store) are left out."""
    return [e for e in events if not e.get("undone")]


def _players_of(summary: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[Player]:
    """The game's players from its summary (dicts or ids), else from the ids seen in its rounds."""
    raw = summary.get("players") or []
    players: list[Player] = []
    for item in raw:
        if isinstance(item, Mapping):
            players.append(Player(int(item["id"]), str(item.get("name", f"Player {item['id']}")),
                                  str(item.get("colour") or "#888888")))
        elif isinstance(item, int) and not isinstance(item, bool):
            players.append(Player(item, f"Player {item}"))
    if players:
        return players
    seen: list[int] = []
    for e in events:
        if e.get("type") == "round_entered":
            for entry in e["data"]["entries"]:
                if entry["player"] not in seen:
                    seen.append(entry["player"])
    return [Player(pid, f"Player {pid}") for pid in seen]


def _settings_of(summary: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Tap 4 settings from the summary or the ``game_started`` event; defaults when neither says."""
    settings = summary.get("settings")
    if settings is None:
        for e in events:
            if e.get("type") == "game_started":
                settings = (e.get("data") or {}).get("settings")
                break
    known = Tap4.default_settings()
    return {k: v for k, v in (settings or {}).items() if k in known}


def rebuild(players: Sequence[Player], settings: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> Tap4:
    """A Tap4 sheet folded from stored events (undone events skipped, other types ignored)."""
    game = Tap4(players, settings)
    for e in _effective(events):
        if e.get("type") in ROUND_EVENTS:
            try:
                game.evolve(Event(e["type"], dict(e["data"])))
            except (ValueError, LookupError):
                log.warning("Tap 4 event %s (%s) does not fit the sheet; skipped", e.get("seq"), e.get("type"))
    return game


def rebuild_from_summary(summary: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Tap4:
    """``rebuild`` with players and settings taken from a past-game summary and its events."""
    effective = _effective(events)
    return rebuild(_players_of(summary, effective), _settings_of(summary, effective), effective)


def player_stats(games: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """Per-player statistics across Tap 4 games.

    ``games`` yields ``(summary, events)`` as ``service.game_events("tap4")``
    does. A game counts as played by a player once a round with them is on
    its sheet; a win needs a finished game (someone reached the target) with
    that player on the lowest total (ties all win). Returned sorted by name:
    ``{"player", "name", "games", "finished", "wins", "rounds",
    "average_round", "best_round", "worst_round", "went_out", "went_out_share"}``.
    """
    stats: dict[int, dict[str, Any]] = {}
    for summary, events in games:
        try:
            game = rebuild_from_summary(summary, events)
        except (ValueError, LookupError):
            continue  # a game whose players no longer fit the rules cannot be scored; skip it
        view = game.view()
        if not view["rounds"]:
            continue
        outcome = game.outcome()
        winners = set(outcome["winners"]) if outcome else set()
        for i, p in enumerate(view["players"]):
            row = stats.setdefault(
                p["id"],
                {"player": p["id"], "name": p["name"], "games": 0, "finished": 0, "wins": 0, "rounds": 0,
                 "_sum": 0, "best_round": None, "worst_round": None, "went_out": 0},
            )
            row["name"] = p["name"]  # latest name wins: players can be renamed
            row["games"] += 1
            row["finished"] += 1 if outcome else 0
            row["wins"] += 1 if p["id"] in winners else 0
            for rnd in view["rounds"]:
                pts = rnd["points"][i]
                row["rounds"] += 1
                row["_sum"] += pts
                row["best_round"] = pts if row["best_round"] is None else min(row["best_round"], pts)
                row["worst_round"] = pts if row["worst_round"] is None else max(row["worst_round"], pts)
                row["went_out"] += 1 if rnd["out"] == p["id"] else 0
    result = []
    for row in stats.values():
        total = row.pop("_sum")
        row["average_round"] = round(total / row["rounds"], 1) if row["rounds"] else None
        row["went_out_share"] = round(row["went_out"] / row["rounds"], 3) if row["rounds"] else None
        result.append(row)
    return sorted(result, key=lambda r: (r["name"].lower(), r["player"]))


_cell = spreadsheet_cell  # one rule for every CSV the table writes


def sheet_csv(view: Mapping[str, Any]) -> str:
    """The sheet as CSV: one row per round with each player's points and running total, then the totals.

    Columns: ``round, dealer, starter, went out``, then ``<name>`` and
    ``<name> total`` for each player in seat order.
    """
    names = {p["id"]: _cell(p["name"]) for p in view["players"]}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    header = ["round", "dealer", "starter", "went out"]
    for p in view["players"]:
        header += [names[p["id"]], f"{names[p['id']]} total"]
    writer.writerow(header)
    for rnd in view["rounds"]:
        row: list[Any] = [rnd["round"], names[rnd["dealer"]], names[rnd["starter"]], names[rnd["out"]]]
        for pts, tot in zip(rnd["points"], rnd["totals"]):
            row += [pts, tot]
        writer.writerow(row)
    final: list[Any] = ["total", "", "", ""]
    for p in view["players"]:
        final += ["", p["total"]]
    writer.writerow(final)
    places = {s["player"]: s["place"] for s in view["standings"]}
    place_row: list[Any] = ["place", "", "", ""]
    for p in view["players"]:
        place_row += ["", places[p["id"]]]
    writer.writerow(place_row)
    return buf.getvalue()

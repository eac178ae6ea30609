"""Taco Hat Cake Gift Pizza: per-player statistics as a pure function of recorded events.

Feed it ``TableService.game_events("taco")`` (pairs of a game summary and its
effective events) to get figures across games: reaction times (median and
best, measured from the card: digital play only, since in physical play the
referee never sees when a card appears, not even with a caller tapping it in),
flinches, piles taken, cards taken, wins and games played. Overrules count:
a reassigned pile counts for its new holder, a cancelled flinch not at all.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping


def _blank(pid: int, name: str, colour: str | None) -> dict[str, Any]:
    return {
        "player": pid,
        "name": name,
        "colour": colour,
        "games": 0,
        "wins": 0,
        "reactions": [],
        "flinches": 0,
        "piles": 0,
        "cards_taken": 0,
        "slaps": 0,
        "last": 0,
    }


def game_stats(events: Iterable[Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
    """Figures for one game from its effective events (stored dicts or ``Event``-like with type/data).

    Returns ``{player id: {"reactions": [ms], "flinches", "piles", "cards_taken", "slaps", "last", "won"}}``.
    """
    out: dict[int, dict[str, Any]] = {}
    verdicts: dict[int, dict[str, Any]] = {}
    winner: int | None = None

    def row(pid: int) -> dict[str, Any]:
        return out.setdefault(pid, {"reactions": [], "flinches": 0, "piles": 0, "cards_taken": 0, "slaps": 0,
                                    "last": 0, "won": False})

    for event in events:
        etype = event["type"] if isinstance(event, Mapping) else event.type
        data = event["data"] if isinstance(event, Mapping) else event.data
        if etype == "dealt":
            for hand in data.get("hands", []):
                row(hand["player"])
        elif etype == "verdict":
            verdicts[data["n"]] = {"kind": data["kind"], "holder": data["taker"], "count": data.get("count"),
                                   "cancelled": False, "flinchers": []}
            if data["kind"] == "slap":
                for entry in data.get("order", []):
                    r = row(entry["player"])
                    r["slaps"] += 1
                    if data.get("timing") == "card":
                        r["reactions"].append(entry["after_ms"])
                if not data.get("missing") and data.get("order"):
                    row(data["order"][-1]["player"])["last"] += 1
                for pid in data.get("missing", []):
                    row(pid)["last"] += 1
            elif data["kind"] == "flinch":
                # Everyone listed flinched (slapped when nothing was due); the first took the pile.
                verdicts[data["n"]]["flinchers"] = [entry["player"] for entry in data.get("order", [])]
            if data.get("winner") is not None:
                winner = data["winner"]
        elif etype == "overruled":
            v = verdicts.get(data.get("verdict"))
            if data.get("action") == "winner":
                winner = data["winner"]
            elif v is not None and data.get("action") == "cancel_flinch":
                v["cancelled"] = True
            elif v is not None:
                v["holder"] = data["to"]
    for v in verdicts.values():
        if v["cancelled"]:
            continue
        r = row(v["holder"])
        r["piles"] += 1
        r["cards_taken"] += v["count"] or 0
        for pid in v["flinchers"]:
            row(pid)["flinches"] += 1
    if winner is not None:
        row(winner)["won"] = True
    return out


def taco_stats(games: Iterable[tuple[Mapping[str, Any], Iterable[Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """Per-player figures across games, best median reaction first (players without one last).

    Players are told apart by id; the name and colour shown are the latest seen.
    Each row: player, name, colour, games, wins, reactions (count), median_ms,
    best_ms, flinches, piles, cards_taken, slaps, last.
    """
    rows: dict[int, dict[str, Any]] = {}
    for summary, events in games:
        people = {p["id"]: p for p in summary.get("players", []) if isinstance(p, Mapping)}
        per_game = game_stats(events)
        for pid in set(people) | set(per_game):
            person = people.get(pid, {})
            r = rows.setdefault(pid, _blank(pid, person.get("name", f"#{pid}"), person.get("colour")))
            if person:
                r["name"], r["colour"] = person.get("name", r["name"]), person.get("colour", r["colour"])
            r["games"] += 1
            g = per_game.get(pid)
            if g is None:
                continue
            r["reactions"] += g["reactions"]
            for key in ("flinches", "piles", "cards_taken", "slaps", "last"):
                r[key] += g[key]
            r["wins"] += 1 if g["won"] else 0
    result = []
    for r in rows.values():
        times = r.pop("reactions")
        r["reactions"] = len(times)
        r["median_ms"] = round(statistics.median(times), 1) if times else None
        r["best_ms"] = min(times) if times else None
        result.append(r)
    result.sort(key=lambda r: (r["median_ms"] is None, r["median_ms"] or 0, r["player"]))
    return result

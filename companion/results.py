"""The end of a game, and the table's history across games, as pure functions of recorded events.

``game_results`` turns one game (its summary from ``TableService.past_games``,
its stored events from ``TableService.history`` and the game's class) into
what the results screen shows: final standings, a podium, the winners in
words and the game's highlights (fastest reaction and most flinches in Taco,
the biggest comeback in Tap 4). ``played_game`` is one line of the history
(date, duration, players, winner); ``player_records`` sums every game up per
player (games and wins per kind, Taco reaction times and flinches).

No I/O and no clock: everything comes from the events. The final view of an
ended game is rebuilt by folding its effective events through the game's own
class, exactly as the table's replay does (``companion.table``); a game still
running passes its live view instead, since the history withholds what a
running game hides.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from companion.games.base import Event, Game, Player
from companion.games.taco_stats import game_stats as taco_game_stats
from companion.table_events import TABLE_EVENTS



def players_of(summary: Mapping[str, Any]) -> list[Player]:
    """The game's players as the ``game_started`` event recorded them (seat order)."""
    out = []
    for p in summary.get("players") or []:
        if isinstance(p, Mapping) and isinstance(p.get("id"), int):
            out.append(Player(p["id"], str(p.get("name", f"#{p['id']}")), str(p.get("colour") or "#888888"), p.get("pad")))
    return out


def effective_game_events(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The game's own events still in effect: undone ones and the table's events left out."""
    return [e for e in events if not e.get("undone") and e.get("type") not in TABLE_EVENTS]


def final_view(game_cls: type[Game], summary: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The game's last public view, folded from its effective events; None when they do not fold."""
    try:
        game = game_cls(players_of(summary), dict(summary.get("settings") or {}))
        for e in effective_game_events(events):
            game.evolve(Event(e["type"], dict(e["data"])))
        return game.view()
    except Exception:  # an old log this version cannot fold: the results fall back to the outcome
        return None


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def duration_s(summary: Mapping[str, Any]) -> float | None:
    """Seconds from the game's start to its end; None while it runs or when a time is unreadable."""
    start, end = _parse_time(summary.get("started")), _parse_time(summary.get("ended"))
    if start is None or end is None:
        return None
    return round((end - start).total_seconds(), 1)


def _winners(summary: Mapping[str, Any]) -> list[int]:
    outcome = summary.get("outcome")
    if not isinstance(outcome, Mapping):
        return []
    return [w for w in outcome.get("winners") or [] if isinstance(w, int)]


def _ranked(order: Sequence[tuple[int, Any]], winners: Sequence[int], lower_first: bool = True) -> list[tuple[int, int, Any]]:
    """``[(place, player, score)]``: winners first (place 1), the rest by score; equal scores share a place."""
    rest = [(pid, score) for pid, score in order if pid not in winners]
    known = sorted((x for x in rest if x[1] is not None), key=lambda x: x[1], reverse=not lower_first)
    ranked: list[tuple[int, int, Any]] = [(1, pid, score) for pid, score in order if pid in winners]
    place = len(ranked) + 1
    previous: Any = object()
    for pid, score in known:
        if score != previous:
            place = len(ranked) + 1
        previous = score
        ranked.append((place, pid, score))
    ranked += [(len(ranked) + 1, pid, None) for pid, score in rest if score is None]
    return ranked


def standings(kind: str, players: Sequence[Player], view: Mapping[str, Any] | None,
              winners: Sequence[int]) -> list[dict[str, Any]]:
    """Final standings, first place first: ``[{"place", "player", "name", "colour", "score"}]``.

    ``score`` says in words what ranks the others (the winners come first in every game):
    Taco and Tapeworm, the cards left (fewest first); Tap 4, the total (lowest first,
    the sheet's own places); TacTile, the discs scored (most first). Without a view,
    or for another kind, everyone else shares second place in seat order.
    """
    by_id = {p.id: p for p in players}
    view = view or {}
    rows: list[tuple[int, int, Any]]
    unit = ""
    if kind == "tap4" and view.get("standings"):
        rows = [(s["place"], s["player"], s["total"]) for s in view["standings"]]
        unit = "points"
    elif kind == "taco" and view.get("piles"):
        rows = _ranked([(p["player"], p.get("count")) for p in view["piles"]], winners)
        unit = "cards left"
    elif kind == "tapeworm" and view.get("hands"):
        rows = _ranked([(h["player"], h.get("cards")) for h in view["hands"]], winners)
        unit = "cards left"
    elif kind == "tactile" and view.get("players"):
        rows = _ranked([(p["id"], p.get("scored")) for p in view["players"]], winners, lower_first=False)
        unit = "discs scored"
    else:
        rows = _ranked([(p.id, None) for p in players], winners)
        if not winners:
            rows = [(1, pid, None) for _, pid, _ in rows]
    out = []
    for place, pid, score in rows:
        p = by_id.get(pid, Player(pid, f"#{pid}"))
        out.append({"place": place, "player": pid, "name": p.name, "colour": p.colour,
                    "score": None if score is None else f"{score} {unit}".strip()})
    return out


def _highlight(kind: str, title: str, player: Player, text: str, value: Any) -> dict[str, Any]:
    return {"kind": kind, "title": title, "player": player.id, "name": player.name, "colour": player.colour,
            "text": text, "value": value}


def taco_highlights(players: Sequence[Player], events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Fastest reaction (a due slap, timed from the card: digital play), most flinches, most piles taken."""
    by_id = {p.id: p for p in players}
    out: list[dict[str, Any]] = []
    fastest: tuple[float, int] | None = None
    effective = effective_game_events(events)
    for e in effective:
        data = e["data"]
        if e["type"] != "verdict" or data.get("kind") != "slap" or data.get("timing") != "card":
            continue
        for entry in data.get("order", []):
            if fastest is None or entry["after_ms"] < fastest[0]:
                fastest = (entry["after_ms"], entry["player"])
    if fastest is not None and fastest[1] in by_id:
        p = by_id[fastest[1]]
        out.append(_highlight("fastest_reaction", "Fastest reaction", p,
                              f"{p.name} slapped {fastest[0]:g} ms after the card", fastest[0]))
    per_player = taco_game_stats(effective)
    for key, kind, title, what in (("flinches", "most_flinches", "Most flinches", "flinched"),
                                   ("piles", "most_piles", "Most piles taken", "took the pile")):
        counts = [(row[key], pid) for pid, row in per_player.items() if row[key] > 0 and pid in by_id]
        if counts:
            count, pid = max(counts, key=lambda c: (c[0], -c[1]))
            p = by_id[pid]
            out.append(_highlight(kind, title, p, f"{p.name} {what} {count} time{'s' if count != 1 else ''}", count))
    return out


def _places(totals: Sequence[int]) -> list[int]:
    """Place of each total, lowest first; equal totals share a place."""
    return [1 + sum(1 for other in totals if other < t) for t in totals]


def tap4_highlights(players: Sequence[Player], view: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The biggest comeback: who climbed most places from their worst place after a round to their final place.

    Ties go to the larger gap to the leader at that worst moment. Only a climb
    of at least one place counts; a game of one round has no comeback.
    """
    if not view or len(view.get("rounds") or []) < 2:
        return []
    by_id = {p.id: p for p in players}
    seat = [p["id"] for p in view["players"]]
    rounds = view["rounds"]
    final = _places(rounds[-1]["totals"])
    best: tuple[tuple[int, int, int], int, int, int] | None = None  # (climb, gap, -seat), seat, worst place, round
    for i in range(len(seat)):
        worst_place, worst_round, gap = 0, 0, 0
        for rnd in rounds[:-1]:
            place = _places(rnd["totals"])[i]
            if place > worst_place:
                worst_place, worst_round, gap = place, rnd["round"], rnd["totals"][i] - min(rnd["totals"])
        climb = worst_place - final[i]
        if climb >= 1 and (best is None or (climb, gap, -i) > best[0]):
            best = ((climb, gap, -i), i, worst_place, worst_round)
    if best is None:
        return []
    (climb, gap, _), i, worst_place, worst_round = best
    p = by_id.get(seat[i], Player(seat[i], f"#{seat[i]}"))
    text = (f"{p.name} was {_ordinal(worst_place)} after round {worst_round}, {gap} points behind, "
            f"and finished {_ordinal(final[i])}")
    return [_highlight("biggest_comeback", "Biggest comeback", p, text, climb)]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _names(ids: Sequence[int], players: Sequence[Player]) -> list[str]:
    by_id = {p.id: p.name for p in players}
    return [by_id.get(i, f"#{i}") for i in ids]


def headline(winner_names: Sequence[str], finished: bool) -> str:
    """One line for the top of the results: who won, or that nobody did."""
    if not winner_names:
        return "Game over: nobody won" if finished else "Game ended before anyone won"
    if len(winner_names) == 1:
        return f"{winner_names[0]} wins!"
    return f"{', '.join(winner_names[:-1])} and {winner_names[-1]} share the win!"


def game_results(summary: Mapping[str, Any], events: Sequence[Mapping[str, Any]],
                 game_cls: type[Game] | None, live_view: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the results screen shows for one game (documented in docs/api.md, ``/api/games/<id>/results``)."""
    kind = str(summary.get("kind"))
    players = players_of(summary)
    view = dict(live_view) if live_view is not None else (final_view(game_cls, summary, events) if game_cls else None)
    winners = _winners(summary)
    outcome = summary.get("outcome") if isinstance(summary.get("outcome"), Mapping) else None
    ranked = standings(kind, players, view, winners)
    highlights: list[dict[str, Any]] = []
    if kind == "taco":
        highlights = taco_highlights(players, events)
    elif kind == "tap4":
        highlights = tap4_highlights(players, view)
    winner_names = _names(winners, players)
    return {
        "game_id": summary.get("game_id"),
        "kind": kind,
        "title": summary.get("title"),
        "started": summary.get("started"),
        "ended": summary.get("ended"),
        "duration_s": duration_s(summary),
        "finished": outcome is not None,
        "winners": winners,
        "winner_names": winner_names,
        "headline": headline(winner_names, outcome is not None),
        "reason": (outcome or {}).get("reason") or "",
        "standings": ranked,
        "podium": [row for row in ranked if row["place"] <= 3],
        "highlights": highlights,
        "rematch": rematch_args(summary),
    }


def rematch_args(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``start_game`` arguments for the same game with the same players and settings (a new shuffle)."""
    return {"kind": summary.get("kind"), "settings": dict(summary.get("settings") or {}),
            "players": [p.id for p in players_of(summary)]}


def played_game(summary: Mapping[str, Any]) -> dict[str, Any]:
    """One line of the history: ``{"game_id", "kind", "title", "started", "ended", "duration_s", "players", "winners"}``.

    ``players`` and ``winners`` are names as the game recorded them (a later rename does not rewrite history).
    """
    players = players_of(summary)
    return {
        "game_id": summary.get("game_id"),
        "kind": summary.get("kind"),
        "title": summary.get("title"),
        "started": summary.get("started"),
        "ended": summary.get("ended"),
        "duration_s": duration_s(summary),
        "players": [p.name for p in players],
        "winners": _names(_winners(summary), players),
    }


def player_records(games: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """Per player across every game: ``{"player", "name", "colour", "games", "wins", "by_kind", "best_ms",
    "median_ms", "reactions", "flinches"}``, most wins first.

    ``games`` yields ``(summary, events)`` oldest first, every kind. ``by_kind`` is
    ``{kind: {"title", "games", "wins"}}``; the reaction figures are Taco's (due slaps
    timed from the card, digital play), ``flinches`` Taco's flinches. Players are told
    apart by id; the name and colour are the latest a game recorded.
    """
    rows: dict[int, dict[str, Any]] = {}
    times: dict[int, list[float]] = {}
    for summary, events in games:
        winners = set(_winners(summary))
        kind = str(summary.get("kind"))
        taco = taco_game_stats(effective_game_events(events)) if kind == "taco" else {}
        for p in players_of(summary):
            row = rows.setdefault(p.id, {"player": p.id, "name": p.name, "colour": p.colour, "games": 0, "wins": 0,
                                         "by_kind": {}, "flinches": 0})
            row["name"], row["colour"] = p.name, p.colour
            per_kind = row["by_kind"].setdefault(kind, {"title": summary.get("title"), "games": 0, "wins": 0})
            won = p.id in winners
            row["games"] += 1
            row["wins"] += won
            per_kind["games"] += 1
            per_kind["wins"] += won
            mine = taco.get(p.id)
            if mine:
                row["flinches"] += mine["flinches"]
                times.setdefault(p.id, []).extend(mine["reactions"])
    out = []
    for pid, row in rows.items():
        mine_times = times.get(pid, [])
        row["reactions"] = len(mine_times)
        row["best_ms"] = min(mine_times) if mine_times else None
        row["median_ms"] = round(statistics.median(mine_times), 1) if mine_times else None
        out.append(row)
    out.sort(key=lambda r: (-r["wins"], -r["games"], r["name"].lower(), r["player"]))
    return out

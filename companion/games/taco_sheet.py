"""Taco Hat Cake Gift Pizza: one game's verdicts as a table a spreadsheet opens (CSV), from recorded events.

One row per verdict still in effect (undone ones left out), oldest first, with
overrules folded in: the ``taker`` column is who holds the pile in the end.
Every cell is a plain value (a number, a name, a word), never JSON, so a
spreadsheet sorts and sums the columns as they are.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Mapping, Sequence

from companion.text import printable, spreadsheet_cell as _cell

#: The columns before the players' own; each player then has ``<name> ms``.
COLUMNS = ("verdict", "round", "time", "kind", "card", "word", "taker", "cards taken", "flinched", "never slapped",
           "photo finish", "overruled", "reason")


def verdict_rows(players: Sequence[Mapping[str, Any]], events: Iterable[Mapping[str, Any]]) -> list[list[Any]]:
    """The sheet's rows (without the header): see :data:`COLUMNS`, then each player's reaction in ms."""
    names = {p["id"]: _cell(str(p.get("name", f"#{p['id']}"))) for p in players}
    rows: dict[int, dict[str, Any]] = {}
    for e in events:
        if e.get("undone"):
            continue
        data = e.get("data") or {}
        if e.get("type") == "verdict":
            rows[data["n"]] = {"event": e, "data": data, "holder": data.get("taker"), "overrules": []}
        elif e.get("type") == "overruled" and data.get("verdict") in rows:
            row = rows[data["verdict"]]
            action = data.get("action")
            if action in ("reassign", "penalty"):
                row["holder"] = data.get("to")
                row["overrules"].append(f"{action} to {names.get(data.get('to'), '?')}"
                                        + (f" ({_cell(str(data['note']))})" if data.get("note") else ""))
            elif action == "cancel_flinch":
                row["holder"] = None
                row["overrules"].append("flinch cancelled")
            elif action == "winner":
                row["overrules"].append(f"{names.get(data.get('winner'), '?')} declared the winner")
    out: list[list[Any]] = []
    for n in sorted(rows):
        row = rows[n]
        data = row["data"]
        kind = data.get("kind")
        after = {entry["player"]: entry.get("after_ms") for entry in data.get("order", [])} if kind == "slap" else {}
        flinched = [entry["player"] for entry in data.get("order", [])] if kind == "flinch" else []
        line: list[Any] = [
            n,
            data.get("round"),
            row["event"].get("at"),
            kind,
            data.get("card") or "",
            data.get("word") or "",
            names.get(row["holder"], "") if row["holder"] is not None else "",
            data.get("count") if data.get("count") is not None else "",
            "; ".join(names.get(p, "?") for p in flinched),
            "; ".join(names.get(p, "?") for p in data.get("missing", [])),
            "yes" if data.get("photo_finish") else "",
            "; ".join(row["overrules"]),
            printable(str(data.get("reason") or "")),
        ]
        line += [after.get(p["id"], "") for p in players]
        out.append(line)
    return out


def verdicts_csv(players: Sequence[Mapping[str, Any]], events: Iterable[Mapping[str, Any]]) -> str:
    """The whole sheet as CSV text (``\\r\\n`` line ends, as spreadsheets expect)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    names = [_cell(str(p.get("name", f"#{p['id']}"))) for p in players]
    writer.writerow([*COLUMNS, *(f"{name} ms" for name in names)])
    writer.writerows(verdict_rows(players, events))
    return buf.getvalue()

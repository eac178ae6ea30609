"""Reading the game docs' tables (docs/games/<kind>.md): the fields and commands they document."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs" / "games"


def section(text: str, title: str) -> str:
    """The body of the section whose heading starts with ``title`` (``##`` or deeper), up to the next
    heading of the same level or higher."""
    match = re.search(rf"^(#{{2,}}) {re.escape(title)}.*?$", text, re.M)
    assert match, f"no '{title}' section"
    end = re.compile(rf"^#{{1,{len(match.group(1))}}} ", re.M).search(text, match.end())
    return text[match.end(): end.start() if end else len(text)]


def table_rows(body: str) -> list[list[str]]:
    """The cells of every table row whose first cell is a `code` name (header and rules skipped)."""
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if cells and re.fullmatch(r"`[^`]+`", cells[0]):
            rows.append(cells)
    return rows


def documented_fields(kind: str, title: str = "Public view") -> list[str]:
    """Paths named in the first column of the field table of the section ``title`` (default: the view).

    A row ``x.*`` whose meaning names another object first (``every field of
    `ys[]` ...``) stands for all of that object's fields under ``x.``.
    """
    rows = table_rows(section((DOCS / f"{kind}.md").read_text(), title))
    fields = [cells[0].strip("`") for cells in rows]
    out = [f for f in fields if not f.endswith(".*")]
    for cells in rows:
        path = cells[0].strip("`")
        if path.endswith(".*"):
            source = re.search(r"`([^`]+)`", cells[-1])
            assert source, f"{kind}: the row {path} must name the object whose fields it repeats"
            prefix = source.group(1) + "."
            out += [path[:-1] + f[len(prefix):] for f in fields if f.startswith(prefix)]
    return out


def documented_commands(kind: str) -> dict[str, set[str]]:
    """Command name -> argument names from the ``## Commands`` table: each `name` or `name?` followed by its (type)."""
    out: dict[str, set[str]] = {}
    for cells in table_rows(section((DOCS / f"{kind}.md").read_text(), "Commands")):
        args = set(re.findall(r"`([a-z_]+)\??` \(", cells[1])) if len(cells) > 1 else set()
        out[cells[0].strip("`")] = args
    return out


def view_paths(view: Any, maps: dict[str, str], prefix: str = "", out: set[str] | None = None) -> set[str]:
    """Every path in ``view``: dict keys, ``[]`` for the items of a list of objects, ``<x>`` for map keys."""
    out = set() if out is None else out
    if isinstance(view, dict):
        for key, value in view.items():
            path = f"{prefix}.<{maps[prefix]}>" if prefix in maps else (f"{prefix}.{key}" if prefix else str(key))
            out.add(path)
            view_paths(value, maps, path, out)
    elif isinstance(view, list):
        for item in view:
            if isinstance(item, dict):
                view_paths(item, maps, f"{prefix}[]", out)
    return out


def maps_of(fields: list[str]) -> dict[str, str]:
    """Map paths the docs declare: ``a.<id>`` makes ``a`` a map keyed by ids."""
    maps: dict[str, str] = {}
    for path in fields:
        for match in re.finditer(r"\.<([a-z_]+)>", path):
            maps[path[: match.start()]] = match.group(1)
    return maps

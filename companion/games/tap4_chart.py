"""A server-drawn SVG chart of Tap 4 running totals per player over the rounds.

Pure: takes a Tap4 ``view()`` and returns an SVG string. Sized by a viewBox
so it fills a phone's width; big text, a dashed target line, one line per
player in the player's colour (with a distinct dash and marker so it also
reads in black and white), and a legend with each current total.
"""

from __future__ import annotations

import re
from typing import Any, Mapping
from xml.sax.saxutils import escape, quoteattr

from companion.text import xml_text

WIDTH = 360
PLOT_HEIGHT = 220
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 40, 14, 14, 34
LEGEND_ROW = 22
#: Fallback colours (Okabe-Ito, readable by most colour-blind people).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4")
_COLOUR = re.compile(r"^#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?\Z")  # \Z: "$" also matches before a newline


def _nice_step(span: float) -> int:
    """A round grid step giving about 5 lines over ``span``."""
    for step in (5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000):
        if span / step <= 6:
            return step
    return 10000


def _colours(players: list[Mapping[str, Any]]) -> list[str]:
    """Each player's own colour when it is a valid, unshared hex colour; else a palette colour."""
    chosen: list[str] = []
    for i, p in enumerate(players):
        c = str(p.get("colour") or "")
        if not _COLOUR.match(c) or c.lower() in (x.lower() for x in chosen) or c.lower() == "#888888":
            c = next((x for x in PALETTE if x not in chosen), PALETTE[i % len(PALETTE)])
        chosen.append(c)
    return chosen


def running_totals_svg(view: Mapping[str, Any], title: str = "Tap 4: running totals") -> str:
    """The chart for one sheet as a standalone SVG document string."""
    players = list(view["players"])
    rounds = list(view["rounds"])
    target = int(view["target"])
    series = [[0] + [r["totals"][i] for r in rounds] for i in range(len(players))]
    top = max([target] + [v for s in series for v in s])
    step = _nice_step(top)
    y_max = -(-int(top * 1.05) // step) * step or step
    n = max(len(rounds), 1)
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = PLOT_HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    height = PLOT_HEIGHT + LEGEND_ROW * len(players) + 8

    def x(i: int) -> float:
        return round(MARGIN_LEFT + plot_w * i / n, 1)

    def y(v: float) -> float:
        return round(MARGIN_TOP + plot_h * (1 - v / y_max), 1)

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'role="img" aria-label={quoteattr(title)} font-family="sans-serif" font-size="13">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    for v in range(0, y_max + 1, step):
        out.append(f'<line x1="{MARGIN_LEFT}" y1="{y(v)}" x2="{WIDTH - MARGIN_RIGHT}" y2="{y(v)}" stroke="#dddddd"/>')
        out.append(f'<text x="{MARGIN_LEFT - 4}" y="{y(v) + 4}" text-anchor="end" fill="#444444">{v}</text>')
    label_every = max(1, -(-n // 10))
    for i in range(0, n + 1, label_every):
        out.append(f'<text x="{x(i)}" y="{PLOT_HEIGHT - MARGIN_BOTTOM + 16}" text-anchor="middle" fill="#444444">{i}</text>')
    out.append(
        f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{PLOT_HEIGHT - 4}" text-anchor="middle" fill="#444444">round</text>'
    )
    out.append(
        f'<line class="target" x1="{MARGIN_LEFT}" y1="{y(target)}" x2="{WIDTH - MARGIN_RIGHT}" y2="{y(target)}" '
        f'stroke="#c00000" stroke-width="2" stroke-dasharray="8 4"/>'
    )
    out.append(
        f'<text x="{WIDTH - MARGIN_RIGHT}" y="{y(target) - 5}" text-anchor="end" fill="#c00000" '
        f'font-weight="bold">target {target}</text>'
    )
    colours = _colours(players)
    for i, (p, values) in enumerate(zip(players, series)):
        colour, dash = colours[i], DASHES[i % len(DASHES)]
        points = " ".join(f"{x(j)},{y(v)}" for j, v in enumerate(values))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<polyline class="series" data-player="{int(p["id"])}" points="{points}" fill="none" '
            f'stroke="{colour}" stroke-width="3" stroke-linejoin="round"{dash_attr}/>'
        )
        for j, v in enumerate(values[1:], start=1):
            out.append(f'<circle cx="{x(j)}" cy="{y(v)}" r="3.5" fill="{colour}"/>')
    for i, p in enumerate(players):
        row_y = PLOT_HEIGHT + 4 + LEGEND_ROW * i
        colour, dash = colours[i], DASHES[i % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{MARGIN_LEFT}" y1="{row_y + 8}" x2="{MARGIN_LEFT + 28}" y2="{row_y + 8}" '
            f'stroke="{colour}" stroke-width="4"{dash_attr}/>'
        )
        out.append(
            f'<text x="{MARGIN_LEFT + 36}" y="{row_y + 13}" font-size="15">{escape(xml_text(str(p["name"])))}: '
            f'{int(p["total"])}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)

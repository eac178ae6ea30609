"""Each game in its busiest state on the table screen, for the no-scroll browser test and the docs gallery.

``set_up(kind, service)`` seats the players a busy table has and plays the game
until the screen holds the most it ever shows: Tap 4 with six long names after
eleven rounds, Taco with six piles after a verdict, TacTile with its board and
market entered, Tapeworm with a long log; ``results`` is that Tap 4 game ended
(the idle screen with its results and the check-in), ``won`` a Tap 4 game won
but not ended yet (its results on the screen while it is still the running game).

``python -m tests.helpers.busy_tables docs/gallery`` (from the repository root,
with Chromium) writes the gallery's screenshots (docs/gallery.md): each game at
1920x1080, 1280x800 and 1024x600, as JPEG.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

#: The table screens the layout is made for: a TV, a tablet, the Pi's 7" touch display.
SCREEN_SIZES = ((1920, 1080), (1280, 800), (1024, 600))
KINDS = ("taco", "tap4", "tactile", "tapeworm", "results", "won")
SIX = ("Annabelle", "Bartholomew", "Cassandra", "Dominique", "Evangeline", "Florentino")
FOUR = SIX[:4]


def _seat(service: Any, names: tuple[str, ...]) -> list[int]:
    return [service.submit("add_player", {"name": n, "pad": i})["events"][0]["data"]["id"]
            for i, n in enumerate(names, start=1)]


def _tap4(service: Any, target: int = 1000) -> None:
    ids = _seat(service, SIX)
    service.submit("start_game", {"kind": "tap4", "settings": {"target": target}})
    for r in range(11):
        if service.snapshot()[1]["game"]["outcome"]:
            return
        out = ids[r % len(ids)]
        entries = [{"player": p, "out": True} if p == out else {"player": p, "total": 5 + (r * 7 + i * 3) % 40}
                   for i, p in enumerate(ids)]
        service.submit("enter_round", {"entries": entries})


def _taco(service: Any) -> None:
    _seat(service, SIX)
    sub = service.subscribe()
    try:
        service.submit("start_game", {"kind": "taco", "settings": {"lead_in_ms": 0, "after_verdict_ms": 60_000,
                                                                   "deck": {"taco": 40, "hat": 40}}})
        state = service.snapshot()[1]
        while (state["game"]["view"]["window"] or {}).get("kind") != "due":
            update = sub.get(timeout=60)
            if update is None:
                raise RuntimeError("no due card within 60 s")
            state = update.state
        card_at = state["game"]["view"]["top"]["at_us"]
        for pad, ms in ((1, 210), (2, 260), (3, 305), (4, 380), (5, 455)):  # Florentino never slaps
            service.source.inject(pad, at_us=card_at + ms * 1000)
        while state["game"]["view"]["verdict"] is None:
            update = sub.get(timeout=60)
            if update is None:
                raise RuntimeError("no verdict within 60 s")
            state = update.state
    finally:
        sub.close()


def _tactile(service: Any) -> None:
    from helpers.tactile import start_entered_game

    _seat(service, FOUR)
    start_entered_game(service.submit)


def _tapeworm(service: Any) -> None:
    ids = _seat(service, FOUR)
    service.submit("start_game", {"kind": "tapeworm", "settings": {"deck_size": 60, "first_player": ids[0]}, "seed": 1})
    for _ in range(12):
        service.submit("draw", {})
        service.submit("play", {})
        service.submit("end_turn", {})


def _results(service: Any) -> None:
    """Tap 4 ended after eleven rounds: the idle screen shows its results and the check-in."""
    _tap4(service)
    service.submit("end_game", {})


def _won(service: Any) -> None:
    """Tap 4 to 150 won (someone passed 150) and not yet ended: the game's screen and its results."""
    _tap4(service, target=150)


SETUPS: dict[str, Callable[[Any], None]] = {"taco": _taco, "tap4": _tap4, "tactile": _tactile, "tapeworm": _tapeworm,
                                            "results": _results, "won": _won}


def set_up(kind: str, service: Any) -> None:
    """Seat the players and play ``kind`` into its busiest state on ``service`` (a started TableService)."""
    SETUPS[kind](service)


@contextmanager
def busy_table(data_dir: Path, kind: str) -> Iterator[Any]:
    """A live server (8 simulated pads, the four games) with ``kind`` in its busiest state; stopped afterwards."""
    from helpers.browser import LIVE_SSE, make_app, make_service, start_live_server, stop_service
    from companion.games import load_games

    service = make_service(data_dir, pads=8, games=dict(load_games()))
    try:
        set_up(kind, service)
        server = start_live_server(make_app(service, data_dir, **LIVE_SSE), service)
        try:
            yield server
        finally:
            server.stop()
    finally:
        stop_service(service)


def vertical_overflow(page: Any) -> int:
    """How many pixels the page is taller than the window (0: no vertical scroll)."""
    return int(page.evaluate("Math.max(0, document.documentElement.scrollHeight - window.innerHeight)"))


def settled_overflow(page: Any, within_ms: int = 5000) -> int:
    """``vertical_overflow`` once the screen's own layout work is done: the TV layout folds Tap 4's
    rounds in a handler of each redraw, which on a loaded machine can come after the first
    element a test waits for, so give it up to ``within_ms`` to bring the page into the window.
    A page that still scrolls after that returns how far."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function("() => document.documentElement.scrollHeight <= window.innerHeight",
                               timeout=within_ms)
    except PlaywrightTimeout:
        pass
    return vertical_overflow(page)


def main(argv: list[str]) -> int:
    """Write screenshots of every game at every screen size into the folder ``argv[0]``."""
    import tempfile

    from playwright.sync_api import sync_playwright

    from helpers.browser import CHROMIUM, CHROMIUM_ARGS

    out = Path(argv[0] if argv else "docs/gallery")
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for kind in KINDS:
            with tempfile.TemporaryDirectory() as tmp:
                with busy_table(Path(tmp) / "data", kind) as server:
                    for width, height in SCREEN_SIZES:
                        context = browser.new_context(viewport={"width": width, "height": height})
                        page = context.new_page()
                        page.goto(server.url + "/screen")
                        ready = "#screen-results .results" if kind in ("results", "won") else f"#screen-game[data-kind={kind}] > *"
                        page.locator(ready).first.wait_for()
                        page.wait_for_timeout(2500)  # past the verdict flash, images loaded
                        path = out / f"screen-{kind}-{width}x{height}.jpg"
                        page.screenshot(path=str(path), type="jpeg", quality=80)
                        print(f"{path}: {vertical_overflow(page)} px below the fold")
                        context.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

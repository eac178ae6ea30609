"""The pages people look at: the table (phones) and the table screen (a tablet)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, current_app, render_template, request
from flask.typing import ResponseReturnValue

from web.helpers import current_table
from web.security import is_trusted, pin_entry_status

bp = Blueprint("pages", __name__)

GAME_SCRIPTS_DIR = Path(__file__).parent / "static" / "games"


def _game_files(suffix: str) -> list[str]:
    """The kinds with a file ``static/games/<kind><suffix>``."""
    if not GAME_SCRIPTS_DIR.is_dir():
        return []
    return sorted(p.stem for p in GAME_SCRIPTS_DIR.glob("*" + suffix))


def game_scripts() -> list[str]:
    """Kinds with a UI script ``static/games/<kind>.js`` (others get the built-in fallback)."""
    return _game_files(".js")


def game_styles() -> list[str]:
    """Kinds with a stylesheet ``static/games/<kind>.css``, linked in every page's head (no flash of unstyled game)."""
    return _game_files(".css")


def _may_see_pin() -> bool:
    # By default the table screen shows the PIN to whoever looks at it, as the
    # people around the table do: on a headless Pi it is the only place to read
    # it. With server.pin_on_screen = false it shows only on the Pi itself
    # (loopback) or on a device that already entered it.
    if current_app.config["TABLETOP_CONFIG"].server_pin_on_screen:
        return True
    return is_trusted() or (request.remote_addr or "") in ("127.0.0.1", "::1")


@bp.get("/")
def table() -> ResponseReturnValue:
    """Players, seats, pads, the running game and starting a new one."""
    return render_template("table.html", game_scripts=game_scripts(), game_styles=game_styles(), trusted=is_trusted())


@bp.get("/screen")
def screen() -> ResponseReturnValue:
    """The big live view for a tablet in the middle of the table."""
    table_ctx = current_table()
    pin = table_ctx.pin if _may_see_pin() else None
    problem = table_ctx.service.log_problem()
    return render_template("screen.html", game_scripts=game_scripts(), game_styles=game_styles(), pin=pin, trusted=is_trusted(),
                           log_problem=problem, pin_entry=pin_entry_status())

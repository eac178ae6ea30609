"""Tapeworm on the real table service: undo is an event, and a restart mid-game comes back exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import make_service, stop_service

from companion.errors import RuleError
from companion.games.tapeworm import Tapeworm

GAMES = {"tapeworm": Tapeworm}


def start(tmp_path: Path) -> tuple[Any, list[int]]:
    service = make_service(tmp_path / "data", games=GAMES)
    ids = [service.submit("add_player", {"name": n})["events"][0]["data"]["id"] for n in ("Ann", "Bob", "Cat")]
    service.submit("start_game", {"kind": "tapeworm", "settings": {"deck_size": 40, "first_player": ids[1]}})
    return service, ids


def view(service: Any) -> dict[str, Any]:
    return service.snapshot()[1]["game"]["view"]


def hands(service: Any) -> dict[int, int]:
    return {h["player"]: h["cards"] for h in view(service)["hands"]}


def test_undo_takes_back_the_last_action_as_a_new_event(tmp_path: Path) -> None:
    service, (ann, bob, cat) = start(tmp_path)
    try:
        service.submit("draw")
        service.submit("hatch", {"target": cat})
        assert hands(service) == {ann: 5, bob: 5, cat: 6}
        undone = service.submit("undo")
        assert undone["events"][0]["type"] == "undo"
        assert hands(service) == {ann: 5, bob: 6, cat: 5} and view(service)["worm"] == 0
        # The history keeps both the Hatch and its undo.
        game_id = service.snapshot()[1]["game"]["game_id"]
        types = [e["type"] for e in service.history(game_id)]
        assert "drew" in types and types[-1] == "undo"
        with pytest.raises(RuleError):
            service.submit("draw")  # the draw itself was not undone
    finally:
        stop_service(service)


def test_restart_in_the_middle_of_a_game_comes_back_exactly(tmp_path: Path) -> None:
    service, (ann, bob, cat) = start(tmp_path)
    try:
        service.submit("draw")
        service.submit("play", {"count": 2})
        service.submit("end_turn")
        service.submit("draw")
        service.submit("dig")
        before = view(service)
    finally:
        stop_service(service)
    again = make_service(tmp_path / "data", games=GAMES)
    try:
        assert view(again) == before
        assert before["current"] == cat and before["has_drawn"] is True
        again.submit("end_turn")
        assert view(again)["current"] == ann
    finally:
        stop_service(again)


def test_winner_is_named_and_the_game_refuses_more_play(tmp_path: Path) -> None:
    service, (ann, bob, cat) = start(tmp_path)
    try:
        service.submit("draw")
        service.submit("play", {"count": 6})
        service.submit("end_turn")
        game = service.snapshot()[1]["game"]
        assert game["outcome"]["winners"] == [bob]
        with pytest.raises(RuleError, match="game is over"):
            service.submit("draw")
    finally:
        stop_service(service)


def test_the_deal_cannot_be_undone(tmp_path: Path) -> None:
    service, _ = start(tmp_path)
    try:
        assert service.snapshot()[1]["game"]["can_undo"] is False
        with pytest.raises(RuleError, match="deal cannot be undone"):
            service.submit("undo")
    finally:
        stop_service(service)

"""The pure table state: each table command, each bad input, undo/redo, and replay = live."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from core.errors import InputError, NotFoundError, RuleError
from companion.games.base import Command
from companion.table import PALETTE, RECENT_HITS, TableState, fold
from core.hits import HitKind, PadHit
from helpers.counter_game import GAMES_FOR_TESTS

AT = "2026-11-29T21:00:00.000Z"


class Table:
    """A TableState plus the log it produced, like the service keeps it."""

    def __init__(self, **kwargs: Any) -> None:
        self.state = TableState(GAMES_FOR_TESTS, pad_count=4, **kwargs)
        self.log: list[dict[str, Any]] = []
        self.at_us = 1_000_000

    def run(self, name: str, /, **args: Any) -> list[dict[str, Any]]:
        self.at_us += 1000
        events = self.state.execute(Command(name, args, at_us=self.at_us, seed=42, actor="test"), AT)
        self.log += events
        return events

    def hit(self, pad: int, at_us: int | None = None, kind: HitKind = HitKind.SLAP) -> list[dict[str, Any]]:
        self.at_us += 1000
        events = self.state.execute_hit(PadHit(pad, at_us or self.at_us, kind), AT)
        self.log += events
        return events

    def view(self) -> dict[str, Any]:
        return self.state.view()

    @property
    def total(self) -> int:
        return self.view()["game"]["view"]["total"]


@pytest.fixture
def table() -> Table:
    t = Table()
    t.run("add_player", name="Ann", pad=1)
    t.run("add_player", name="Bob", pad=2, colour="#123ABC")
    t.run("add_player", name="Cy")
    return t


def names(t: Table) -> list[str]:
    return [p["name"] for p in t.view()["players"]]


# ----- players -----------------------------------------------------------------
def test_add_player_records_id_name_colour_and_pad(table: Table) -> None:
    assert table.view()["players"] == [
        {"id": 1, "name": "Ann", "colour": PALETTE[0], "pad": 1},
        {"id": 2, "name": "Bob", "colour": "#123abc", "pad": 2},
        {"id": 3, "name": "Cy", "colour": PALETTE[1], "pad": None},
    ]
    assert [e["type"] for e in table.log] == ["player_added"] * 3
    assert table.log[0]["actor"] == "test" and table.log[0]["game_id"] is None


def test_names_are_tidied(table: Table) -> None:
    table.run("add_player", name="  Dee   Dee ")
    assert names(table)[-1] == "Dee Dee"


BAD_COMMANDS = [
    ("add_player", {}, InputError, "'name' is missing"),
    ("add_player", {"name": ""}, InputError, "1 to 24 characters"),
    ("add_player", {"name": "   "}, InputError, "1 to 24 characters"),
    ("add_player", {"name": "x" * 25}, InputError, "1 to 24 characters"),
    ("add_player", {"name": 7}, InputError, "'name' must be str"),
    ("add_player", {"name": "ann"}, RuleError, "already a player called Ann"),
    ("add_player", {"name": "Dee", "colour": "red"}, InputError, "'colour' must be a colour"),
    ("add_player", {"name": "Dee", "colour": "#12345"}, InputError, "'colour' must be a colour"),
    ("add_player", {"name": "Dee", "pad": 0}, InputError, "pad number from 1 to 4"),
    ("add_player", {"name": "Dee", "pad": 5}, InputError, "pad number from 1 to 4"),
    ("add_player", {"name": "Dee", "pad": True}, InputError, "pad number from 1 to 4"),
    ("add_player", {"name": "Dee", "pad": 1}, RuleError, "pad 1 is Ann's"),
    ("add_player", {"name": "Dee", "hat": 1}, InputError, "no argument 'hat'; valid arguments: colour, name, pad"),
    ("update_player", {"player": 9, "name": "Zed"}, NotFoundError, "no player 9.*1 Ann, 2 Bob, 3 Cy"),
    ("update_player", {"player": "Zed", "name": "Zed"}, NotFoundError, "no player 'Zed'"),
    ("update_player", {"player": 1.5, "name": "Zed"}, InputError, "player id or name"),
    ("update_player", {"name": "Zed"}, InputError, "'player' is missing"),
    ("update_player", {"player": 1}, InputError, "at least one of"),
    ("update_player", {"player": 1, "name": "BOB"}, RuleError, "already a player called Bob"),
    ("update_player", {"player": 3, "pad": 2}, RuleError, "pad 2 is Bob's"),
    ("remove_player", {"player": 9}, NotFoundError, "no player 9"),
    ("remove_player", {}, InputError, "'player' is missing"),
    ("seat_players", {"order": [3, 1]}, InputError, "missing: Bob"),
    ("seat_players", {"order": [3, 1, 2, 1]}, InputError, "names a player twice"),
    ("seat_players", {"order": [3, 1, 2, 9]}, NotFoundError, "no player 9"),
    ("seat_players", {"order": "3,1,2"}, InputError, "'order' must be list"),
    ("start_game", {}, InputError, "'kind' is missing"),
    ("start_game", {"kind": "chess"}, InputError, "no game 'chess'; valid kinds: counter"),
    ("start_game", {"kind": "counter", "settings": {"speed": 3}}, InputError, "no setting 'speed'; valid settings: target"),
    ("start_game", {"kind": "counter", "settings": {"target": -1}}, InputError, "'target' must be a whole number"),
    ("start_game", {"kind": "counter", "settings": [1]}, InputError, "'settings' must be an object"),
    ("start_game", {"kind": "counter", "players": [1, 1]}, InputError, "names a player twice"),
    ("start_game", {"kind": "counter", "players": [8]}, NotFoundError, "no player 8"),
    ("start_game", {"kind": "counter", "players": []}, RuleError, "needs 1 to 8 players"),
    ("end_game", {}, RuleError, "no game is running"),
    ("end_game", {"now": True}, InputError, "no argument 'now'"),
    ("undo", {}, RuleError, "no game is running"),
    ("add", {"n": 1}, InputError, "unknown command 'add'; valid commands: add_player, .*undo"),
    ("fly", {}, InputError, "unknown command 'fly'"),
]


@pytest.mark.parametrize("name, args, error, message", BAD_COMMANDS, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_COMMANDS)])
def test_bad_table_commands_are_refused_and_change_nothing(table: Table, name, args, error, message) -> None:
    before = copy.deepcopy(table.view())
    with pytest.raises(error, match=message):
        table.run(name, **args)
    assert table.view() == before


def test_update_player_changes_only_what_is_given(table: Table) -> None:
    table.run("update_player", player="bob", name="Robert")
    table.run("update_player", player=1, pad=None)
    table.run("update_player", player=3, pad=1, colour="#00ff00")
    assert table.view()["players"] == [
        {"id": 1, "name": "Ann", "colour": PALETTE[0], "pad": None},
        {"id": 2, "name": "Robert", "colour": "#123abc", "pad": 2},
        {"id": 3, "name": "Cy", "colour": "#00ff00", "pad": 1},
    ]
    # a player may keep their own name in another case, and their own pad
    table.run("update_player", player=3, name="CY", pad=1)
    assert names(table)[-1] == "CY"


def test_remove_player_frees_the_name_and_ids_are_never_reused(table: Table) -> None:
    table.run("remove_player", player=2)
    table.run("add_player", name="Bob", pad=2)
    assert [(p["id"], p["name"]) for p in table.view()["players"]] == [(1, "Ann"), (3, "Cy"), (4, "Bob")]


def test_seat_players_sets_the_order(table: Table) -> None:
    table.run("seat_players", order=[3, "ann", 2])
    assert names(table) == ["Cy", "Ann", "Bob"]


# ----- games -------------------------------------------------------------------
def test_start_game_takes_every_seated_player_and_records_the_start(table: Table) -> None:
    events = table.run("start_game", kind="counter", settings={"target": 10})
    assert [e["type"] for e in events] == ["game_started", "counter_ready"]
    started = events[0]
    assert started["game_id"] == started["seq"] == events[1]["game_id"]
    assert started["data"]["settings"] == {"target": 10}
    assert [p["name"] for p in started["data"]["players"]] == ["Ann", "Bob", "Cy"]
    game = table.view()["game"]
    assert game["kind"] == "counter" and game["players"] == [1, 2, 3]
    assert game["view"]["started"] is True and game["outcome"] is None and game["can_undo"] is True


def test_chosen_players_play_in_seat_order(table: Table) -> None:
    table.run("seat_players", order=[3, 2, 1])
    table.run("start_game", kind="counter", players=[1, 3])
    assert table.view()["game"]["players"] == [3, 1]


def test_config_defaults_apply_under_command_settings() -> None:
    t = Table(game_defaults={"counter": {"target": 7}})
    t.run("add_player", name="Ann")
    assert t.view()["games_available"][0]["settings"] == {"target": 7}
    t.run("start_game", kind="counter")
    assert t.view()["game"]["settings"] == {"target": 7}
    t.run("end_game")
    t.run("start_game", kind="counter", settings={"target": 9})
    assert t.view()["game"]["settings"] == {"target": 9}


def test_a_running_game_blocks_a_new_one_and_its_players_removal(table: Table) -> None:
    table.run("start_game", kind="counter")
    with pytest.raises(RuleError, match="still running; end it first"):
        table.run("start_game", kind="counter")
    with pytest.raises(RuleError, match="Ann is playing Counter"):
        table.run("remove_player", player=1)
    table.run("add_player", name="Dee")
    table.run("remove_player", player="Dee")  # not in the game: fine


def test_a_finished_game_is_ended_by_the_next_start(table: Table) -> None:
    table.run("start_game", kind="counter", settings={"target": 3})
    table.run("add", n=3)
    assert table.view()["game"]["outcome"]["winners"] == [1, 2, 3]
    events = table.run("start_game", kind="counter")
    assert [e["type"] for e in events] == ["game_ended", "game_started", "counter_ready"]
    assert events[0]["data"] == {"outcome": {"winners": [1, 2, 3], "reason": "reached 3"}, "reason": "finished"}
    assert table.view()["game"]["game_id"] == events[1]["seq"]


def test_end_game_records_the_outcome_so_far(table: Table) -> None:
    game_id = table.run("start_game", kind="counter")[0]["seq"]
    [ended] = table.run("end_game")
    assert ended["type"] == "game_ended" and ended["game_id"] == game_id
    assert ended["data"] == {"outcome": None, "reason": "ended"}
    assert table.view()["game"] is None


def test_game_commands_are_routed_to_the_game_with_its_own_checks(table: Table) -> None:
    table.run("start_game", kind="counter")
    [added] = table.run("add", n=5)
    assert added["type"] == "added" and added["actor"] == "test"
    assert table.total == 5
    before = copy.deepcopy(table.view())
    with pytest.raises(InputError, match="'n' must be a whole number from 1 to 100"):
        table.run("add", n=0)
    with pytest.raises(InputError, match="valid commands: .*add, lock, set_timer"):
        table.run("subtract", n=1)
    assert table.view() == before


def test_a_game_may_not_write_table_events(table: Table, monkeypatch) -> None:
    from companion.games.base import Event
    from helpers.counter_game import CounterGame

    table.run("start_game", kind="counter")
    monkeypatch.setattr(CounterGame, "decide", lambda self, cmd: [Event("player_removed", {"id": 1})])
    with pytest.raises(TypeError, match="reserves"):
        table.run("add", n=1)
    assert len(table.view()["players"]) == 3


# ----- hits --------------------------------------------------------------------
def test_every_hit_is_logged_and_offered_to_the_game(table: Table) -> None:
    assert [e["type"] for e in table.hit(1)] == ["hit"]  # no game yet
    table.run("start_game", kind="counter", players=[1])
    events = table.hit(1, at_us=5_000_000, kind=HitKind.TOUCH)
    assert [e["type"] for e in events] == ["hit", "tapped"]
    assert events[0]["data"] == {"pad": 1, "at_us": 5_000_000, "kind": "touch", "strength": None,
                                 "resolution_us": 1, "player": 1}
    assert events[0]["game_id"] == table.view()["game"]["game_id"]
    # Bob has a pad but is not in this game; pad 4 is nobody's: logged, but the game hears no player
    assert [e["type"] for e in table.hit(2)] == ["hit"]
    assert [e["type"] for e in table.hit(4)] == ["hit"]
    assert table.hit(4)[0]["data"]["player"] is None
    assert table.view()["game"]["view"]["taps"] == {"1": 1}


def test_recent_hits_keep_only_the_last_few(table: Table) -> None:
    for i in range(40):
        table.hit(1 + i % 4, at_us=10 + i)
    recent = table.view()["recent_hits"]
    assert len(recent) == RECENT_HITS
    assert [h["at_us"] for h in recent] == list(range(10 + 40 - RECENT_HITS, 50))
    assert set(recent[0]) == {"pad", "at_us", "kind", "strength", "player"}


# ----- undo --------------------------------------------------------------------
@pytest.fixture
def playing(table: Table) -> Table:
    table.run("start_game", kind="counter", settings={"target": 1000})
    table.run("add", n=1)
    table.run("add", n=10)
    table.run("add", n=100)
    return table


def test_undo_without_seq_removes_the_last_game_event(playing: Table) -> None:
    [undo] = playing.run("undo")
    assert undo["type"] == "undo" and undo["data"]["seq"] == undo["seq"] - 1 and undo["data"]["type"] == "added"
    assert playing.total == 11
    playing.run("undo")
    assert playing.total == 1


def test_undo_of_an_older_event_keeps_the_later_ones(playing: Table) -> None:
    ten = next(e for e in playing.log if e["type"] == "added" and e["data"]["n"] == 10)
    playing.run("undo", seq=ten["seq"])
    assert playing.total == 101


def test_undoing_an_undo_is_a_redo(playing: Table) -> None:
    [undo] = playing.run("undo")
    assert playing.total == 11
    [redo] = playing.run("undo", seq=undo["seq"])
    assert redo["data"] == {"seq": undo["seq"], "type": "undo"}
    assert playing.total == 111
    # and the redo can be undone again
    playing.run("undo", seq=redo["seq"])
    assert playing.total == 11


def test_undo_skips_what_is_already_undone(playing: Table) -> None:
    playing.run("undo")  # removes +100
    playing.run("undo")  # the default target is now +10, not the undo itself
    assert playing.total == 1


def test_bad_undos_are_refused_and_change_nothing(playing: Table) -> None:
    game_id = playing.view()["game"]["game_id"]
    hit = playing.hit(1)[0]
    [first_undo] = playing.run("undo")
    locked = playing.run("lock", n=2)[0]
    before = copy.deepcopy(playing.view())
    cases = [
        ({"seq": 1}, NotFoundError, "event 1 is not part of the running game"),
        ({"seq": 10_000}, NotFoundError, "event 10000 is not part of"),
        ({"seq": "last"}, InputError, "'seq' must be an event number"),
        ({"seq": game_id}, RuleError, r"\(game_started\) cannot be undone"),
        ({"seq": hit["seq"]}, RuleError, r"\(hit\) cannot be undone"),
        ({"seq": first_undo["data"]["seq"]}, RuleError, f"already undone \\(by event {first_undo['seq']}\\)"),
        ({"seq": locked["seq"]}, RuleError, "locked addition cannot be undone"),
        ({}, RuleError, "locked addition cannot be undone"),
        ({"steps": 2}, InputError, "no argument 'steps'"),
    ]
    for args, error, message in cases:
        with pytest.raises(error, match=message):
            playing.run("undo", **args)
        assert playing.view() == before, args


def test_nothing_to_undo_in_a_fresh_game() -> None:
    t = Table()
    t.run("add_player", name="Ann")
    t.run("start_game", kind="counter")
    t.run("undo")  # the deal-like start event is a game event too
    assert t.view()["game"]["can_undo"] is False
    with pytest.raises(RuleError, match="nothing to undo in Counter"):
        t.run("undo")


def test_undo_reopens_a_finished_game(table: Table) -> None:
    table.run("start_game", kind="counter", settings={"target": 5})
    table.run("add", n=5)
    assert table.view()["game"]["outcome"] is not None
    table.run("undo")
    assert table.view()["game"]["outcome"] is None


def test_undo_rebuilds_the_game_without_losing_hits_it_recorded(playing: Table) -> None:
    playing.hit(1)
    playing.run("add", n=3)
    playing.run("undo")
    view = playing.view()["game"]["view"]
    assert view["total"] == 111 and view["taps"] == {"1": 1}


# ----- replay ------------------------------------------------------------------
def test_replaying_the_log_gives_the_live_state(playing: Table) -> None:
    playing.hit(2)
    [u] = playing.run("undo")
    playing.run("undo", seq=u["seq"])
    playing.run("update_player", player=2, name="Robert")
    playing.run("set_timer", after_us=10)
    playing.run("seat_players", order=[2, 3, 1])
    replayed = fold(playing.log, GAMES_FOR_TESTS, pad_count=4)
    assert replayed.view() == playing.view()
    assert replayed.seq == playing.log[-1]["seq"]


def test_replay_survives_an_event_a_game_can_no_longer_fold(playing: Table, caplog) -> None:
    log = [*playing.log]
    log.append({"seq": log[-1]["seq"] + 1, "at": AT, "game_id": log[-1]["game_id"], "type": "mystery", "data": {},
                "actor": None})
    replayed = fold(log, GAMES_FOR_TESTS, pad_count=4)
    assert replayed.view()["game"]["view"]["total"] == 111
    assert "could not be folded" in caplog.text


def test_replay_of_a_game_that_is_no_longer_installed_goes_on(playing: Table, caplog) -> None:
    replayed = fold(playing.log, {}, pad_count=4)
    assert replayed.view()["game"] is None
    assert len(replayed.view()["players"]) == 3
    assert "not installed" in caplog.text


def test_the_view_has_the_contract_shape(playing: Table) -> None:
    view = playing.view()
    assert set(view) == {"seq", "players", "pads", "recent_hits", "game", "games_available", "log_problem"}
    assert view["log_problem"] is None  # filled in by the service while the log cannot be written
    assert set(view["game"]) == {"game_id", "kind", "title", "settings", "players", "view", "outcome", "can_undo"}
    [available] = view["games_available"]
    assert {"kind", "title", "min_players", "max_players", "commands", "settings"} <= set(available)
    assert available["commands"][0] == {"name": "add", "summary": "add n to the counter", "args": ["n"]}


def test_can_undo_says_whether_a_plain_undo_would_be_accepted(playing: Table) -> None:
    assert playing.view()["game"]["can_undo"] is True
    playing.run("lock", n=1)
    assert playing.view()["game"]["can_undo"] is False  # the game refuses to undo a locked addition
    playing.run("add", n=1)
    assert playing.view()["game"]["can_undo"] is True
    playing.run("undo")
    assert playing.view()["game"]["can_undo"] is False  # back to the locked one


def test_events_are_folded_as_the_log_will_return_them(table: Table, monkeypatch) -> None:
    from companion.games.base import Event
    from helpers.counter_game import CounterGame

    table.run("start_game", kind="counter")
    seen: list[dict] = []
    real_evolve = CounterGame.evolve

    def evolve(self, event):
        seen.append(event.data)
        if event.type != "odd":
            real_evolve(self, event)

    monkeypatch.setattr(CounterGame, "evolve", evolve)
    monkeypatch.setattr(CounterGame, "decide", lambda self, cmd: [Event("odd", {"pair": (1, 2), 3: "x"})])
    [event] = table.run("add", n=1)
    assert event["data"] == {"pair": [1, 2], "3": "x"} == seen[-1]  # exactly what a replay will see


def test_an_event_that_cannot_be_stored_is_refused_before_folding(table: Table, monkeypatch) -> None:
    from companion.games.base import Event
    from helpers.counter_game import CounterGame

    table.run("start_game", kind="counter")
    before = copy.deepcopy(table.view())
    monkeypatch.setattr(CounterGame, "decide",
                        lambda self, cmd: [Event("added", {"n": 1}), Event("added", {"n": float("nan")})])
    with pytest.raises(TypeError, match="event 'added' has data that cannot be stored as JSON"):
        table.run("add", n=1)
    assert table.view() == before and not table.state.dirty

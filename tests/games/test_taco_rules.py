"""Taco Hat Cake Gift Pizza: invariants (cards conserved, replay explains state), settings, deal, statistics."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import CompanionError, InputError, RuleError
from companion.games import GAMES, load_games
from companion.games.base import Command, Player
from companion.games.taco import TacoGame
from companion.games.taco_cards import DEFAULT_DECK, build_deck, deal_size
from helpers.taco_driver import VirtualTable
from companion.games.taco_stats import taco_stats


def players(n: int, pads: bool = True) -> list[Player]:
    return [Player(id=i + 1, name=f"P{i + 1}", pad=(i + 1) if pads else None) for i in range(n)]


def replay(table: VirtualTable) -> TacoGame:
    game = TacoGame(table.players, table.settings)
    for event in table.log:
        game.evolve(event)
    return game


# ----- the property: nothing is lost -------------------------------------------------
step = st.one_of(
    st.tuples(st.just("advance"), st.integers(0, 4000)),
    st.tuples(st.just("hit"), st.integers(1, 8), st.integers(-300, 1500), st.sampled_from(["slap", "slap", "touch"]),
              st.integers(0, 400)),
    st.tuples(st.just("penalty"), st.integers(1, 8), st.sampled_from(["gesture", "peek", "pace"])),
    st.tuples(st.just("overrule"), st.integers(1, 8), st.sampled_from(["taker", "cancel_flinch"])),
    st.tuples(st.just("pause")),
    st.tuples(st.just("restart"), st.integers(0, 5000)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 8),
    seed=st.integers(0, 2**32),
    tempo=st.integers(200, 1500),
    speedup=st.integers(0, 100),
    steps=st.lists(step, min_size=1, max_size=60),
)
def test_cards_are_conserved_and_replay_explains_the_state(n, seed, tempo, speedup, steps):
    """Whatever the hits, commands and restarts, piles + central pile = cards dealt, and a replay agrees."""
    table = VirtualTable(n, {"tempo_ms": tempo, "speedup_ms": speedup, "min_tempo_ms": 200, "after_verdict_ms": 500},
                         seed=seed)
    dealt = table.game.cards_in_play()
    assert dealt == n * deal_size(n)
    for s in steps:
        try:
            if s[0] == "advance":
                table.advance(table.now + s[1] * 1000)
            elif s[0] == "hit":
                pad = (s[1] - 1) % n + 1
                at = table.now + s[2] * 1000
                table.hit(pad, max(at, 0), s[3], arrive_us=max(at, 0) + s[4] * 1000)
            elif s[0] == "penalty":
                table.command("penalty", {"player": (s[1] - 1) % n + 1, "reason": s[2]})
            elif s[0] == "overrule":
                args = {"taker": (s[1] - 1) % n + 1} if s[2] == "taker" else {"cancel_flinch": True}
                table.command("overrule", args)
            elif s[0] == "pause":
                table.command("resume" if table.game.paused else "pause")
            elif s[0] == "restart":
                table.restart(table.now + s[1] * 1000)
        except CompanionError:
            pass  # refused commands change nothing; checked below all the same
        assert table.game.cards_in_play() == dealt
        assert all(len(pile) >= 0 for pile in table.game.piles.values())
        assert replay(table).view() == table.game.view()
        json.dumps(table.game.view())  # the view is JSON-ready
    if table.game.outcome() is not None:
        assert table.game.next_deadline_us() is None


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 8), seed=st.integers(0, 2**32))
def test_a_table_that_slaps_on_every_due_card_plays_to_a_winner_or_keeps_every_card(n, seed):
    """Bots slap every due card (seat order decides who is fast); the game ends with a winner or goes on, cards intact."""
    table = VirtualTable(n, {"tempo_ms": 300, "lead_in_ms": 0, "after_verdict_ms": 0}, seed=seed)
    dealt = table.game.cards_in_play()
    for _ in range(400):
        if table.game.outcome() is not None:
            break
        deadline = table.game.next_deadline_us()
        assert deadline is not None, "a running digital game always has a next beat or window"
        table.advance(deadline)
        w = table.game.window
        if w is not None and w.kind == "due":
            for i, pid in enumerate(table.game.seats):
                offset = 200_000 + ((pid * 7919 + len(table.game.verdicts) * 104729) % 300_000)
                if table.game.window is None:
                    break
                table.hit(pid, w.card_at + offset + i, arrive_us=w.card_at + 600_000)
        assert table.game.cards_in_play() == dealt
    outcome = table.game.outcome()
    if outcome is not None:
        (winner,) = outcome["winners"]
        assert table.game.piles[winner] == [] and table.game.verdicts[-1]["winner"] == winner


# ----- deal and start ------------------------------------------------------------------
def test_registered_under_taco():
    load_games()
    assert GAMES["taco"] is TacoGame


@pytest.mark.parametrize("n, each", [(2, 12), (3, 12), (4, 12), (5, 12), (6, 10), (7, 8), (8, 8)])
def test_deal_sizes_follow_the_rulebook(n, each):
    game = TacoGame(players(n), {})
    (event,) = game.start(Command("start_game", at_us=5, seed=42))
    assert [len(h["cards"]) for h in event.data["hands"]] == [each] * n
    assert len(event.data["out_of_play"]) == 64 - n * each
    assert sorted(event.data["deck"]) == sorted(build_deck(DEFAULT_DECK))


def test_the_shuffle_comes_from_the_seed_and_is_recorded():
    a = TacoGame(players(3), {}).start(Command("start_game", seed=7))[0].data
    b = TacoGame(players(3), {}).start(Command("start_game", seed=7))[0].data
    c = TacoGame(players(3), {}).start(Command("start_game", seed=8))[0].data
    assert a["deck"] == b["deck"] and a["deck"] != c["deck"]
    assert len(a["deck"]) == 64 and a["dealer"] == 1


def test_dealer_setting():
    game = TacoGame(players(4), {"dealer": 3})
    (event,) = game.start(Command("start_game", seed=1))
    game.evolve(event)
    assert event.data["dealer"] == 3 and game.view()["beat"] == {"player": 3, "word": "taco"}
    random_dealers = {TacoGame(players(4), {"dealer": "random"}).start(Command("start_game", seed=s))[0].data["dealer"]
                      for s in range(40)}
    assert random_dealers == {1, 2, 3, 4}


def test_every_player_needs_a_pad_of_their_own():
    with pytest.raises(RuleError, match="give a pad to: P1, P2"):
        TacoGame(players(2, pads=False), {}).start(Command("start_game"))
    same = [Player(1, "A", pad=1), Player(2, "B", pad=1)]
    with pytest.raises(RuleError, match="different pad"):
        TacoGame(same, {}).start(Command("start_game"))


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"mode": "telepathic"}, "'mode' must be one of digital, physical"),
        ({"timeout_ms": 50}, "'timeout_ms' must be a whole number of milliseconds from 200"),
        ({"false_start_ms": "100"}, "'false_start_ms'"),
        ({"deck": {"burger": 3}}, "unknown card 'burger'"),
        ({"deck": {"taco": -1}}, "count of 'taco'"),
        ({"deck": {"taco": 10}}, "setting 'deck' has 10 cards; 2 players with 12 cards each need 24"),
        ({"dealer": 9}, "'dealer' must be empty"),
        ({"quorum": 0}, "'quorum'"),
        ({"cards_each": 0}, "'cards_each'"),
        ({"tempo": 1000}, "has no setting 'tempo'"),
    ],
)
def test_bad_settings_are_named(bad, message):
    with pytest.raises(InputError, match=message):
        TacoGame(players(2), bad)


def test_settings_survive_a_round_trip_through_json():
    game = TacoGame(players(3), {"mode": "physical", "quorum": 2, "dealer": 2})
    again = TacoGame(players(3), json.loads(json.dumps(game.settings)))
    assert again.settings == game.settings


def test_commands_before_the_deal_are_refused():
    with pytest.raises(RuleError, match="not dealt"):
        TacoGame(players(2), {}).decide(Command("pause"))


def test_undo_only_for_the_latest_hand_made_change():
    table = VirtualTable(2, {"tempo_ms": 1000, "lead_in_ms": 1000}, hands={1: ["taco", "hat"], 2: ["cake"]})
    table.advance(1_000_000)
    table.hit(1, 1_300_000)
    table.hit(2, 1_400_000)
    verdict = table.log[-1]
    assert verdict.type == "verdict"
    with pytest.raises(RuleError, match="use 'overrule'|with 'overrule'"):
        table.game.check_undo(verdict, Command("undo"))
    (overrule,) = table.command("overrule", {"taker": 1})
    table.game.check_undo(overrule, Command("undo"))  # the latest change: allowed
    table.advance(10_000_000)  # play moves on
    with pytest.raises(RuleError, match="play has moved on"):
        table.game.check_undo(overrule, Command("undo"))


# ----- statistics ----------------------------------------------------------------------
def _stored(table: VirtualTable) -> list[dict]:
    return [{"type": e.type, "data": json.loads(json.dumps(e.data))} for e in table.log]


def test_statistics_across_games():
    hands = {1: ["taco", "hat", "cake", "gift"], 2: ["hat", "gift", "pizza", "taco"], 3: ["cake", "cake", "cake", "hat"]}
    s = {"tempo_ms": 1000, "lead_in_ms": 1000, "after_verdict_ms": 1000}
    one = VirtualTable(3, s, hands=hands)
    one.advance(1_000_000)  # 1 flips taco: due
    one.hit(1, 1_200_000)
    one.hit(2, 1_300_000)
    one.hit(3, 1_500_000)  # 3 takes
    one.advance(2_500_000)  # 3 flips cake with taco
    one.hit(2, 2_700_000)  # flinch by 2
    one.advance(3_000_000)
    one.command("overrule", {"verdict": 1, "taker": 2})
    two = VirtualTable(3, s, hands=hands)
    two.advance(1_000_000)
    two.hit(3, 1_100_000)
    two.hit(2, 1_250_000)  # 1 never slaps
    two.advance(4_250_000)
    people = [{"id": i, "name": f"P{i}", "colour": "#111111"} for i in (1, 2, 3)]
    rows = {r["player"]: r for r in taco_stats([({"players": people}, _stored(one)), ({"players": people}, _stored(two))])}
    assert rows[1] == {**rows[1], "games": 2, "reactions": 1, "median_ms": 200.0, "best_ms": 200.0, "flinches": 0,
                       "piles": 1, "cards_taken": 1, "last": 1}
    assert rows[2] == {**rows[2], "reactions": 2, "median_ms": 275.0, "best_ms": 250.0, "flinches": 1,
                       "piles": 2, "cards_taken": 2}
    assert rows[3] == {**rows[3], "reactions": 2, "median_ms": 300.0, "best_ms": 100.0, "flinches": 0, "piles": 0,
                       "last": 1}
    assert [r["player"] for r in rows.values()] and all(r["wins"] == 0 for r in rows.values())


def test_a_hit_stamped_ahead_of_the_table_clock_cannot_stall_the_game():
    """The loop runs every beat due before a hit's stamp, so a stamp past the next beat is bogus."""
    from core.hits import PadHit

    table = VirtualTable(2, {"tempo_ms": 1000, "lead_in_ms": 1000}, hands={1: ["hat", "cake"], 2: ["gift", "pizza"]})
    table.advance(1_000_000)
    game = table.game
    (event,) = game.decide_hit(PadHit(pad=2, at_us=3_600_000_000), game.player(2))
    assert event.type == "hit_ignored" and "clock ahead" in event.data["why"]
    (flinch,) = game.decide_hit(PadHit(pad=2, at_us=1_500_000), game.player(2))
    table.apply([flinch])
    (event,) = game.decide_hit(PadHit(pad=1, at_us=3_600_000_000), game.player(1))
    assert event.type == "hit_ignored" and game.next_deadline_us() == 1_750_000


physical_step = st.one_of(
    st.tuples(st.just("tap"), st.sampled_from(["taco", "hat", "cake", "gift", "pizza", "monkey", "unicorn", "ninja"])),
    st.tuples(st.just("hit"), st.integers(1, 8), st.integers(0, 1500), st.integers(0, 300)),
    st.tuples(st.just("advance"), st.integers(0, 4000)),
    st.tuples(st.just("penalty"), st.integers(1, 8)),
    st.tuples(st.just("overrule"), st.integers(1, 8)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 8), steps=st.lists(physical_step, min_size=1, max_size=60))
def test_physical_counts_add_up_whenever_the_referee_claims_to_know_them(n, steps):
    """With real cards, every count shown is either unknown or part of a total that adds up to the deal."""
    table = VirtualTable(n, {"mode": "physical"})
    dealt = n * deal_size(n)
    for s in steps:
        try:
            if s[0] == "tap":
                table.command("card_flipped", {"card": s[1]})
            elif s[0] == "hit":
                at = table.now + s[2] * 1000
                table.hit((s[1] - 1) % n + 1, at, arrive_us=at + s[3] * 1000)
            elif s[0] == "advance":
                table.advance(table.now + s[1] * 1000)
            elif s[0] == "penalty":
                table.command("penalty", {"player": (s[1] - 1) % n + 1, "reason": "peek"})
            else:
                table.command("overrule", {"taker": (s[1] - 1) % n + 1})
        except CompanionError:
            pass
        view = table.game.view()
        counts = [p["count"] for p in view["piles"]]
        if None not in counts and view["central"] is not None:
            assert sum(counts) + view["central"] == dealt
        assert replay(table).view() == view

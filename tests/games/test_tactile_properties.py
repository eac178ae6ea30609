"""TacTile invariants under random play: every step is drawn from ``legal_actions()``.

Discs never share a non-home tile; resources are conserved between players
and stockpile; cards are conserved; every listed action is accepted; and a
replay of the log (a restart) rebuilds the same state. Small stockpiles and
decks make the edges (empty piles, reshuffles, automatic resets) common.
Eager random players also play whole games to a real victory in each mode.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core.errors import CompanionError
from companion.games.base import Command
from companion.games.tactile_board import COLOURS
from companion.games.tactile_cards import CARD_TYPES, PENDING_KNOWN
from test_tactile import check_invariants
from test_tactile_script import Table


def enter_pending(table: Table, data: st.DataObject) -> None:
    """Enter a card into the first waiting slot: a made-up one, or a reshuffled one."""
    market = table.game.state.market
    slot = market.pending()[0]
    if market.slots[slot - 1] == PENDING_KNOWN:
        card = data.draw(st.sampled_from(sorted(market.known)), label="reshuffled card")
        table.do("enter_card", {"slot": slot, "card": card})
        return
    colour = data.draw(st.sampled_from(COLOURS), label="colour")
    kind = data.draw(st.sampled_from(CARD_TYPES), label="type")
    cost = data.draw(st.dictionaries(st.sampled_from(COLOURS), st.integers(0, 2), max_size=2), label="cost")
    table.do("enter_card", {"slot": slot, "colour": colour, "type": kind, "cost": cost})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    stock=st.integers(1, 4),
    deck=st.integers(6, 14),
    data=st.data(),
)
def test_random_legal_play_keeps_the_invariants(players: int, seed: int, stock: int, deck: int, data: st.DataObject) -> None:
    table = Table(players, {"resources": stock, "deck_size": deck}, seed=seed)
    for step in range(80):
        where = f"step {step}"
        if table.game.state.phase == "over":
            break
        if table.game.state.market.pending() and data.draw(st.integers(0, 3), label="enter now?") > 0:
            enter_pending(table, data)
        else:
            choice = data.draw(st.integers(0, 19), label="undo?")
            if choice == 0:
                try:
                    table.do("undo")
                except CompanionError:
                    pass  # refused undo (a finished turn) must change nothing: checked below
            elif choice == 1 and table.game.view()["can_undo_turn"]:
                table.do("undo_turn")
            else:
                legal = list(table.game.legal_actions())
                assert legal, f"no legal action at {where}: ending the turn is always legal"
                action = data.draw(st.sampled_from(legal), label="action")
                name, args = action.command()
                table.do(name, args)  # a listed action is always accepted
        check_invariants(table, where)
    assert table.replayed(table.events).view() == table.game.view()


def test_refused_commands_never_change_the_state() -> None:
    table = Table(4, {}, seed=7)
    before = table.game.view()
    for name, args in [
        ("move", {"disc": "1a", "to": "c3"}),
        ("move", {"disc": "1a", "to": [9, 9]}),
        ("push", {"disc": "2a", "to": "e1"}),
        ("buy", {"slot": 1}),
        ("swap", {"card": 1, "ally_card": 2}),
        ("gain", {"colour": "red"}),
        ("enter_card", {"slot": 1, "colour": "red", "type": "move", "cost": {"red": 99}}),
        ("end_turn", {"now": True}),
    ]:
        with pytest.raises(CompanionError):
            table.game.decide(Command(name, args))
        assert table.game.view() == before


def _distance_after(table: Table, action: Any) -> int:
    """How far the moved disc would be from its nearest open score tile (lower is better)."""
    state = table.game.state
    disc = state.discs[action.disc]
    return min(abs(action.to[0] - t[0]) + abs(action.to[1] - t[1]) for t in state.open_score_tiles(disc))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_eager_players_play_a_whole_game_to_its_victory(players: int) -> None:
    """Players who head for their score tiles (with random detours) finish a game; the winners really won."""
    rng = random.Random(players)
    table = Table(players, {"deck_size": 40}, seed=players)
    for _ in range(3000):
        state = table.game.state
        if state.phase == "over":
            break
        if state.market.pending():
            slot = state.market.pending()[0]
            if state.market.slots[slot - 1] == PENDING_KNOWN:
                table.do("enter_card", {"slot": slot, "card": rng.choice(sorted(state.market.known))})
            else:
                table.do("enter_card", {"slot": slot, "colour": rng.choice(COLOURS), "type": rng.choice(CARD_TYPES), "cost": {rng.choice(COLOURS): 1}})
            continue
        legal = list(table.game.legal_actions())
        moves = [a for a in legal if a.kind in ("move", "card_move")]
        if moves and rng.random() < 0.8:
            action = min(moves, key=lambda a: (_distance_after(table, a), rng.random()))
        else:
            action = rng.choice(legal)
        table.do(*action.command())
        check_invariants(table, f"{players} players")
    outcome = table.game.outcome()
    assert outcome is not None, "the game did not end"
    state = table.game.state
    scored = {pid: sum(1 for d in state.discs_of(pid) if d.scored_on) for pid in state.order}
    if players == 4:
        ally = state.allies[outcome["winners"][0]]
        assert sorted(outcome["winners"]) == sorted([outcome["winners"][0], ally])
        assert sum(scored[p] for p in outcome["winners"]) == 3
    elif players == 3 and not outcome["winners"]:
        # Brawl: both discs on one score tile eliminate; with everyone eliminated nobody wins.
        assert sorted(state.eliminated) == sorted(state.order) and all(n == 2 for n in scored.values())
    else:
        (winner,) = outcome["winners"]
        assert scored[winner] == 2
        if players == 3:
            assert len({d.scored_on for d in state.discs_of(winner)}) == 2, "Brawl: one disc on each score tile"
    with pytest.raises(CompanionError, match="the game is over"):
        table.do("end_turn")

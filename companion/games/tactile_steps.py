"""What a TacTile step was, in words, for the undo button that takes it back.

``describe_step`` reads the step's event against the state *before* the step
(a bought card is still in its market slot, a pushed disc still names its
owner), so the words say what the step did, not a guess from the log. The
view's ``last_step.text`` is this; the phone's button reads "Undo: <text>".
"""

from __future__ import annotations

from typing import Any, Mapping

from companion.games.tactile_state import TactileState


def _card(state: TactileState, card: Any) -> str:
    """'card 3 (red move)', or 'card 3' for an id the state does not know."""
    return state.cards[card].label() if isinstance(card, int) and card in state.cards else f"card {card}"


def _with_card(state: TactileState, card: Any) -> str:
    """' with card 3 (red move)' for a card use, '' for a basic action."""
    return f" with {_card(state, card)}" if isinstance(card, int) else ""


def _action_text(state: TactileState, event_type: str, action: Mapping[str, Any], who: str) -> str:
    card = action.get("card")
    if event_type == "disc_moved":
        return f"{who}'s move of disc {action['disc']} to {action['to']}{_with_card(state, card)}"
    if event_type == "disc_pushed":
        disc = state.discs.get(action["disc"])
        owner = state.who(disc.player) if disc is not None else "another player"
        return f"{who}'s push of {owner}'s disc {action['disc']} to {action['to']}{_with_card(state, card)}"
    if event_type == "resource_gained":
        return f"{who}'s gain of a {action['colour']} resource{_with_card(state, card)}"
    if event_type == "card_bought":
        slot = action["slot"]
        bought = state.market.slots[slot - 1] if 1 <= slot <= len(state.market.slots) else None
        what = _card(state, bought) if isinstance(bought, int) else "the card"
        return f"{who}'s purchase of {what} from market slot {slot}"
    if event_type == "resource_swapped":
        return f"{who}'s swap of a {action['give']} resource for a {action['take']}"
    if event_type == "cards_swapped":
        ally = state.allies.get(state.current)
        theirs = f"{state.who(ally)}'s" if ally is not None else "the ally's"
        return f"{who}'s swap of {_card(state, action['card'])} for {theirs} {_card(state, action['ally_card'])}"
    if event_type == "market_reset":
        return f"{who}'s reset of the market"
    return f"{who}'s {event_type.replace('_', ' ')}"


def describe_step(state: TactileState, event_type: str, data: Mapping[str, Any]) -> str:
    """The step ``event_type``/``data`` in words, read against the state before it.

    A player's action names the player ("Ann's move of disc 1a to b1"); a setup
    entry or a card entered into the market names no one, since whoever holds
    the phone types it ("the placement of the red tile on c3").
    """
    if event_type == "tile_placed":
        return f"the placement of the {data['colour']} tile on {data['tile']}"
    if event_type == "layout_set":
        return "the layout entered as six rows"
    if event_type == "card_entered":
        face = data["card"]
        return f"the entry of card {face['id']} ({face['colour']} {face['type']}) in market slot {data['slot']}"
    who = state.who(data.get("player", state.current))
    return _action_text(state, event_type, data["action"], who)

"""How a game ends: an :class:`Outcome` with a :class:`Termination`, as python-chess has for chess."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping


class Termination(str, Enum):
    """How a game ended (python-chess's ``Termination``, for table games)."""

    #: A player (or a team) met the rulebook's win condition.
    WIN = "win"
    #: A score reached the game's target; the rulebook's ranking picks the winners.
    TARGET = "target"
    #: A person holding the table PIN declared the winner (Taco's overrule).
    OVERRULE = "overrule"
    #: The game is over and nobody won (every TacTile player eliminated).
    NO_WINNER = "no_winner"


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: how it ended, who won, and why, in words for the table.

    Attributes:
        termination: how it ended.
        winners: player ids (several when they share the win; none for NO_WINNER).
        reason: the sentence the phones show.
        details: extra JSON-ready facts a game reports with its outcome (Tap 4's standings).
    """

    termination: Termination
    winners: tuple[int, ...]
    reason: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the view and the ``game_ended`` event carry: ``{"winners", "reason", ...details}``."""
        return {"winners": list(self.winners), "reason": self.reason, **copy.deepcopy(dict(self.details))}

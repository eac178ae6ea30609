"""TacTile's position: where every disc is, who owns what, whose turn it is, and how it changes.

``TactileState`` is plain data plus the deterministic steps that change it
(``move``, ``push``, ``gain``, ``buy`` ...). It never validates: legality
lives in :mod:`companion.games.tactile_actions`, so the same code folds
recorded events on replay and simulates a command before it is accepted.
Each step returns short notes for the game log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from companion.games.tactile_board import (
    COLOURS,
    SIZE,
    Tile,
    is_corner,
    neighbours,
    tile_name,
)
from companion.games.tactile_cards import PENDING_NEW, Card, Market

INACTIVE, ACTIVE, USED = "inactive", "active", "used"


@dataclass
class Disc:
    """One wooden disc: on ``tile``, or scored on ``scored_on`` and off the board."""

    id: str
    player: int
    tile: Tile | None
    scored_on: Tile | None = None


@dataclass
class TactileState:
    """Everything the companion knows about one game of TacTile."""

    mode: str
    order: list[int]  # turn order, starting with the first player
    names: dict[int, str]
    homes: dict[int, Tile]
    score_tiles: dict[int, tuple[Tile, ...]]
    allies: dict[int, int | None]
    tiles: list[list[str | None]]
    discs: dict[str, Disc]
    resources: dict[int, dict[str, int]]
    stockpile: dict[str, int]
    market: Market
    cards: dict[int, Card] = field(default_factory=dict)
    owner: dict[int, int] = field(default_factory=dict)
    card_state: dict[int, str] = field(default_factory=dict)
    phase: str = "setup"  # setup -> play -> over
    turn: int = 0
    current: int = 0
    basics_used: list[str] = field(default_factory=list)
    steps: int = 0
    eliminated: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    reason: str = ""
    log: list[str] = field(default_factory=list)
    #: Time each player has spent on finished turns (pad source clock), and when this turn began.
    clock_us: dict[int, int] = field(default_factory=dict)
    turn_started_us: int | None = None
    #: House rule ``brawl_one_disc_per_tile``: in Brawl a second disc may not enter the score tile
    #: where the first scored (the rulebook allows it; the player is then eliminated).
    one_disc_per_tile: bool = False

    # ----- reading the board -------------------------------------------------
    def home_owner(self, tile: Tile) -> int | None:
        for pid, home in self.homes.items():
            if home == tile:
                return pid
        return None

    def colour_at(self, tile: Tile) -> str | None:
        """The tile's colour (None for a home corner or a tile not yet placed)."""
        return None if is_corner(tile) else self.tiles[tile[0]][tile[1]]

    def occupant(self, tile: Tile) -> Disc | None:
        """The disc on a coloured tile (home tiles may hold several: use ``discs_on``)."""
        for disc in self.discs.values():
            if disc.tile == tile:
                return disc
        return None

    def discs_of(self, pid: int) -> list[Disc]:
        return [d for d in self.discs.values() if d.player == pid]

    def cards_of(self, pid: int) -> list[int]:
        return sorted(cid for cid, who in self.owner.items() if who == pid)

    def open_score_tiles(self, disc: Disc) -> tuple[Tile, ...]:
        """Where this disc may still score: every score tile, but with the house rule
        ``brawl_one_disc_per_tile`` a Brawl disc may not follow the first onto its tile."""
        tiles = self.score_tiles[disc.player]
        if len(tiles) == 1 or not self.one_disc_per_tile:
            return tiles
        used = {d.scored_on for d in self.discs_of(disc.player) if d.scored_on is not None}
        return tuple(t for t in self.score_tiles[disc.player] if t not in used)

    def who(self, pid: int) -> str:
        return self.names.get(pid, f"player {pid}")

    def move_block(self, disc: Disc, to: Tile) -> str | None:
        """Why ``disc`` may not step onto ``to`` (adjacency aside), or None if it may."""
        if is_corner(to):
            if self.home_owner(to) == disc.player or to in self.open_score_tiles(disc):
                return None
            if to in self.score_tiles[disc.player]:
                other = ", ".join(tile_name(t) for t in self.open_score_tiles(disc))
                return f"your other disc already scored on {tile_name(to)}; this one must score on {other}"
            owner = self.home_owner(to)
            whose = f"{self.who(owner)}'s home tile" if owner is not None else "a home tile nobody uses"
            mine = ", ".join(tile_name(t) for t in self.open_score_tiles(disc))
            return f"{tile_name(to)} is {whose}: you may only enter your own home tile or your score tile ({mine})"
        taken = self.occupant(to)
        if taken is not None:
            return f"{tile_name(to)} is taken by {self.who(taken.player)}'s disc {taken.id}: discs never share a tile"
        return None

    def free_steps(self, disc: Disc) -> Iterator[Tile]:
        """Every tile ``disc`` could legally move to."""
        if disc.tile is None:
            return
        for to in neighbours(disc.tile):
            if self.move_block(disc, to) is None:
                yield to

    # ----- changes -------------------------------------------------------------
    def note(self, text: str) -> str:
        self.log.append(text)
        return text

    def activate(self, pid: int, colour: str) -> list[str]:
        """Activate every ready card of ``colour`` the player owns."""
        woken = [cid for cid in self.cards_of(pid) if self.cards[cid].colour == colour and self.card_state[cid] == INACTIVE]
        for cid in woken:
            self.card_state[cid] = ACTIVE
        if not woken:
            return []
        return [self.note(f"{self.who(pid)} activates " + ", ".join(self.cards[c].label() for c in woken))]

    def use_card(self, card: int | None) -> None:
        if card is not None:
            self.card_state[card] = USED

    def basic(self, name: str, card: int | None) -> None:
        if card is None:
            self.basics_used.append(name)

    def move(self, disc_id: str, to: Tile, card: int | None) -> list[str]:
        """Step a disc; it scores on a score tile, activates cards on a coloured tile."""
        disc = self.discs[disc_id]
        self.use_card(card)
        self.basic("move", card)
        how = f"with {self.cards[card].label()}" if card is not None else "(basic move)"
        notes = [self.note(f"{self.who(disc.player)} moves {disc.id} {tile_name(disc.tile or to)}->{tile_name(to)} {how}")]
        if is_corner(to) and to in self.open_score_tiles(disc):
            disc.tile, disc.scored_on = None, to
            notes.append(self.note(f"{disc.id} scores on {tile_name(to)}"))
            notes.extend(self.after_score(disc.player))
            return notes
        disc.tile = to
        colour = self.colour_at(to)
        if colour is not None:
            notes.extend(self.activate(disc.player, colour))
        return notes

    def after_score(self, pid: int) -> list[str]:
        """Victory (the game ends at once) or elimination.

        Brawl Victory needs one disc on each score tile: both discs on the
        same one eliminate the player instead. Once every player is
        eliminated nobody can win and the game ends without a winner.
        """
        scored = lambda p: sum(1 for d in self.discs_of(p) if d.scored_on is not None)  # noqa: E731
        ally = self.allies[pid]
        if ally is None:
            if scored(pid) < 2:
                return []
            tiles = {d.scored_on for d in self.discs_of(pid) if d.scored_on is not None}
            if self.mode != "brawl" or len(tiles) == 2:
                self.phase, self.winners = "over", [pid]
                self.reason = f"{self.who(pid)} scored both discs: {self.mode.capitalize()} Victory"
                return [self.note(self.reason)]
            return self.eliminate(pid, f"{self.who(pid)} scored both discs on {tile_name(next(iter(tiles)))} (no Brawl Victory)")
        if scored(pid) + scored(ally) >= 3:
            self.phase, self.winners = "over", sorted([pid, ally])
            self.reason = f"{self.who(pid)} and {self.who(ally)} scored 3 of their 4 discs: Team Victory"
            return [self.note(self.reason)]
        if scored(pid) == 2:
            return self.eliminate(pid, f"{self.who(pid)} has scored both discs")
        return []

    def eliminate(self, pid: int, why: str) -> list[str]:
        """Eliminate ``pid`` (their turns are skipped); with nobody left the game ends without a winner."""
        if pid in self.eliminated:
            return []
        self.eliminated.append(pid)
        notes = [self.note(f"{why} and is eliminated; their turns are skipped")]
        if len(self.eliminated) == len(self.order):
            self.phase, self.winners = "over", []
            self.reason = "every player is eliminated: nobody won"
            notes.append(self.note(self.reason))
        return notes

    def push(self, disc_id: str, to: Tile, card: int) -> list[str]:
        """Push another player's disc; a push never activates cards."""
        disc = self.discs[disc_id]
        self.use_card(card)
        text = f"{self.who(self.current)} pushes {disc.id} {tile_name(disc.tile or to)}->{tile_name(to)} with {self.cards[card].label()}"
        disc.tile = to
        return [self.note(text)]

    def gain(self, colour: str, card: int | None) -> list[str]:
        self.use_card(card)
        self.basic("gain", card)
        self.resources[self.current][colour] += 1
        self.stockpile[colour] -= 1
        how = f" with {self.cards[card].label()}" if card is not None else ""
        return [self.note(f"{self.who(self.current)} gains a {colour} resource{how}")]

    def swap_resource(self, give: str, take: str) -> list[str]:
        self.basic("swap", None)
        mine = self.resources[self.current]
        mine[give] -= 1
        self.stockpile[give] += 1
        mine[take] += 1
        self.stockpile[take] -= 1
        return [self.note(f"{self.who(self.current)} swaps a {give} resource for a {take} one")]

    def swap_cards(self, card: int, ally_card: int) -> list[str]:
        """Swap with the ally; both cards come back refreshed."""
        self.basic("swap", None)
        ally = self.owner[ally_card]
        self.owner[card], self.owner[ally_card] = ally, self.current
        self.card_state[card] = self.card_state[ally_card] = INACTIVE
        return [
            self.note(
                f"{self.who(self.current)} swaps {self.cards[card].label()} with {self.who(ally)}'s {self.cards[ally_card].label()}"
            )
        ]

    def buy(self, slot: int) -> list[str]:
        """Take the card in ``slot`` (1-based), pay its cost, and draw its replacement."""
        self.basic("buy", None)
        card = self.cards[self.market.slots[slot - 1]]  # type: ignore[index]
        for colour, n in card.cost:
            self.resources[self.current][colour] -= n
            self.stockpile[colour] += n
        self.owner[card.id] = self.current
        self.card_state[card.id] = INACTIVE
        notes = [self.note(f"{self.who(self.current)} buys {card.label()} from slot {slot}")]
        drawn = self.market.draw_into(slot - 1)
        if drawn:
            notes.append(self.note(drawn))
        return notes + self.settle_market()

    def reset_market(self) -> list[str]:
        self.basic("reset", None)
        notes = [self.note(f"{self.who(self.current)} resets the card market")]
        return notes + [self.note(n) for n in self.market.replace_all()]

    def enter_card(self, slot: int, card: Card) -> list[str]:
        """Record the card the players see in a pending slot; then the market may reset itself."""
        if card.id in self.market.known:
            self.market.known.remove(card.id)
        self.cards[card.id] = card
        self.market.slots[slot - 1] = card.id
        notes = [self.note(f"slot {slot}: {card.label()} costs {', '.join(f'{n} {c}' for c, n in card.cost) or 'nothing'}")]
        return notes + self.settle_market()

    def settle_market(self) -> list[str]:
        """Reset the complete market by itself while 5+ of its cards share a colour or a type."""
        why = self.market.crowded(self.cards)
        if why is None:
            return []
        notes = [self.note(f"the market resets by itself: {why}")]
        return notes + [self.note(n) for n in self.market.replace_all()]

    def place_tile(self, tile: Tile, colour: str) -> list[str]:
        self.tiles[tile[0]][tile[1]] = colour
        return [self.note(f"{tile_name(tile)} is {colour}")] + self.maybe_begin()

    def set_layout(self, layout: list[list[str | None]]) -> list[str]:
        self.tiles = [list(row) for row in layout]
        return [self.note("the board is laid")] + self.maybe_begin()

    def unplaced(self) -> list[Tile]:
        return [(r, c) for r in range(SIZE) for c in range(SIZE) if not is_corner((r, c)) and self.tiles[r][c] is None]

    def maybe_begin(self) -> list[str]:
        """Start the first turn once every tile is on the board."""
        if self.phase != "setup" or self.unplaced():
            return []
        self.phase, self.turn = "play", 1
        return self.begin_turn(self.order[0])

    def begin_turn(self, pid: int) -> list[str]:
        """Refresh the player's cards; a trapped disc activates its tile's colour for free."""
        self.current, self.basics_used, self.steps = pid, [], 0
        for cid in self.cards_of(pid):
            self.card_state[cid] = INACTIVE
        notes = [self.note(f"turn {self.turn}: {self.who(pid)}")]
        for disc in self.discs_of(pid):
            colour = self.colour_at(disc.tile) if disc.tile is not None else None
            if colour is not None and next(self.free_steps(disc), None) is None:
                notes.append(self.note(f"{disc.id} is trapped on {tile_name(disc.tile)}"))  # type: ignore[arg-type]
                notes.extend(self.activate(pid, colour))
        return notes

    def next_player(self) -> int:
        """The next player to the left who is not eliminated."""
        at = self.order.index(self.current)
        for step in range(1, len(self.order) + 1):
            pid = self.order[(at + step) % len(self.order)]
            if pid not in self.eliminated:
                return pid
        return self.current

    def end_turn(self) -> list[str]:
        nxt = self.next_player()
        at = self.order.index(self.current)
        skipped: list[int] = []
        while self.order[(at := (at + 1) % len(self.order))] != nxt:
            skipped.append(self.order[at])
        notes = [self.note(f"{self.who(self.current)} ends the turn")]
        notes += [self.note(f"{self.who(p)} is eliminated and skipped") for p in skipped]
        self.turn += 1
        return notes + self.begin_turn(nxt)

    # ----- totals for invariants -------------------------------------------------
    def resource_totals(self) -> dict[str, int]:
        """Per colour, what the players hold plus the stockpile (constant through a game)."""
        return {c: self.stockpile[c] + sum(r[c] for r in self.resources.values()) for c in COLOURS}

    def card_total(self) -> int:
        """Unseen deck + every entered card (owned, in market, deck or discard) + slots awaiting entry."""
        pending_new = self.market.slots.count(PENDING_NEW)
        return self.market.unseen + len(self.cards) + pending_new


def empty_layout() -> list[list[str | None]]:
    return [[None] * SIZE for _ in range(SIZE)]


__all__ = ["TactileState", "Disc", "INACTIVE", "ACTIVE", "USED", "empty_layout"]

#!/usr/bin/env python3
"""A physical model of a table of eight piezo pads, for testing the pad box.

It writes random Taco Hat Cake Gift Pizza rounds as scenario files (the
format of firmware/sim/scenario.h, rendered by scenario.c in the simavr
harness and in the host tests) plus a JSON truth sidecar, and the fixed
hardest cases ``firmware/sim/scenarios/model_*.scn``. MODEL.md beside this
file documents every part and parameter.

    python3 firmware/sim/table_model.py --rounds 200 --seed 1 --out /tmp/rounds \\
        [--players 2-8] [--frontend biased|halfwave]
    python3 firmware/sim/table_model.py --cases [DIR]   # rewrite the model_*.scn files

Standard library only. Deterministic by seed: one ``random.Random`` drives
everything, every value in a file is an integer (or a ratio with two
decimals), and the truth holds exactly the values the file holds.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

# ------------------------------------------------------------------ the box

#: ADC: 10 bits on a 5 V reference (AVCC), as simavr and the firmware see it.
MV_PER_COUNT = 5000.0 / 1023.0
#: Thresholds in counts of deviation from the rest point, at the disc: firmware 2.21.0's defaults
#: (PROTOCOL.md). Since 2.22.0 the box's are FRONTEND_GAIN of these at the pin (140 / 42), the same
#: contacts at the disc through docs/wiring.md's capacitor across it.
SLAP_THRESHOLD_COUNTS = 200
TOUCH_THRESHOLD_COUNTS = 60
SLAP_THRESHOLD_MV = SLAP_THRESHOLD_COUNTS * MV_PER_COUNT  # ~977 mV
TOUCH_THRESHOLD_MV = TOUCH_THRESHOLD_COUNTS * MV_PER_COUNT  # ~293 mV
#: A slap's own deviation, less what hum and noise can take from it during its rise, stays this far over the slap threshold.
SLAP_MARGIN_MV = 100.0
#: A touch's own deviation stays this far over the touch threshold ...
TOUCH_LOW_MARGIN_MV = 60.0
#: ... and this far under the slap threshold, after hum and noise.
TOUCH_HIGH_MARGIN_MV = 150.0
#: The pin is clamped to the rails (the ADC's clamp diodes).
RAIL_MV = 5000.0
#: Events a file (so ~6 rounds a table; fewer events a file render faster: 240 ran 17 % faster than
#: 480): the bench's tables are many and short, every one a new table, new conditions and a fresh
#: box (its first rounds, where it has learnt the least).
MAX_EVENTS_PER_FILE = 240
#: A long table (``generate(table_rounds=N)``): N rounds on one table, a file of at most this many
#: events (scenario.c holds SCN_MAX_EVENTS, 4,096): what the box does after it has played on a table
#: for a while (~150 ms a round: 80 rounds are 12 s of play), where a slow drift shows.
LONG_TABLE_MAX_EVENTS = 4000
#: Lines of a scenario file are read into 256 bytes (scenario.c).
MAX_LINE = 250

# ------------------------------------------------------------------ the table

PADS = 8
TABLE_LENGTH_M = 1.6
TABLE_WIDTH_M = 0.9
#: Pad centres (x along the length, y across), pad 1 at the head, 2-4 along the
#: near side, 5 at the foot, 6-8 back along the far side: the seats, in order round the table.
PAD_POSITIONS_M: tuple[tuple[float, float], ...] = (
    (0.06, 0.45),
    (0.30, 0.06), (0.80, 0.06), (1.30, 0.06),
    (1.54, 0.45),
    (1.30, 0.84), (0.80, 0.84), (0.30, 0.84),
)


def distance_m(i: int, j: int) -> float:
    """Straight-line distance between the centres of pads i and j (1-based)."""
    (xi, yi), (xj, yj) = PAD_POSITIONS_M[i - 1], PAD_POSITIONS_M[j - 1]
    return math.hypot(xi - xj, yi - yj)


#: The closest two pads (head to the first side seat, ~0.46 m): where the coupling is set.
NEAR_DISTANCE_M = min(distance_m(i, j) for i in range(1, PADS + 1) for j in range(1, PADS + 1) if i != j)


@dataclass(frozen=True)
class Material:
    """A table top: how fast its bending waves travel, how fast they die with distance, how it rings."""

    name: str
    what: str
    speed_m_s: tuple[int, int]
    decay_m: float
    ring_hz: tuple[int, int]
    ring_tau_us: tuple[int, int]


MATERIALS: dict[str, Material] = {
    "plywood": Material("plywood", "18 mm plywood on a light frame (a folding table): lively",
                        (700, 1000), 0.6, (1800, 2600), (2500, 3500)),
    "mdf": Material("mdf", "19-25 mm MDF: heavy, slow and lossy",
                    (500, 700), 0.5, (1500, 2200), (2000, 3000)),
    "solid_wood": Material("solid_wood", "30-40 mm solid hardwood: stiff, fast, rings longest",
                           (1000, 1500), 0.7, (2000, 3000), (3000, 4000)),
}
MATERIAL_WEIGHTS: dict[str, float] = {"plywood": 0.4, "mdf": 0.3, "solid_wood": 0.3}
#: Share of the source's amplitude reaching the closest pad (foam gains 1), per table.
NEAR_COUPLING = (0.13, 0.38)
#: How well each pad's foam couples it to the table (a gain on both sending and receiving).
FOAM_GAIN = (0.9, 1.1)
#: No pad gets more than this share of another's amplitude ...
COUPLING_MAX = 0.40
#: ... except rarely: a brace or a leg under two pads carries more.
HOT_COUPLING = (0.42, 0.45)
HOT_PAIR_P = 0.04
#: Share of discs wired the other way round (the response inverted).
REVERSED_P = 0.25
#: Crosstalk waveform: a short sharp push at the table's own frequency.
XT_RISE_US = (100, 200)
XT_RING = (0.6, 1.0)
XT_HZ_RANGE = (1500, 3000)
XT_TAU_RANGE_US = (2000, 4000)
#: Each path rings within +-10 % of the table's frequency and decay time.
XT_JITTER = 0.10
#: Crosstalk fainter than this (4 ADC counts, under the noise) is left out of the files.
XT_FLOOR_MV = 20.0
#: A slow press hardly excites the table's 1.5-3 kHz bending modes: its crosstalk is this much weaker.
PRESS_XTALK = 0.3

# ------------------------------------------------------------------ hands


@dataclass(frozen=True)
class Hand:
    """A kind of contact: its rise time (contact to peak) and peak voltage ranges, and what the box should say."""

    name: str
    rise_us: tuple[int, int]
    peak_mv: tuple[int, int]
    expect: str


HANDS: dict[str, Hand] = {
    "sharp": Hand("sharp", (150, 350), (3000, 15000), "slap"),
    "normal": Hand("normal", (300, 700), (1500, 4000), "slap"),
    "soft": Hand("soft", (500, 900), (1200, 2000), "slap"),
    "touch": Hand("touch", (400, 900), (400, 750), "touch"),
    "press": Hand("press", (2000, 5000), (1200, 3000), "press"),
}
#: How the slapping players' hands are drawn.
SLAP_HAND_WEIGHTS: dict[str, float] = {"sharp": 0.35, "normal": 0.45, "soft": 0.20}
#: The player's own pad rings after the push (the disc on its foam).
OWN_RING_HZ = (800, 2000)
OWN_RING = (0.3, 0.7)
OWN_TAU_US = (3000, 8000)
#: The loud neighbour of the special cases: a sharp slap this hard.
LOUD_MV = (6000, 15000)

# ------------------------------------------------------------------ mains and electronics

HUM_HZ = (50, 60)
#: Hum amplitude: (share of tables, range in mV). The last band is just over the touch threshold.
HUM_BANDS: tuple[tuple[float, tuple[int, int]], ...] = ((0.4, (0, 60)), (0.4, (60, 250)), (0.2, (300, 350)))
NOISE_MV = (3, 15)
DRIFT_MV = (0, 100)
DRIFT_PERIOD_US = (2_000_000, 10_000_000)
#: The biased input's rest point: a divider of two 1 % resistors and the supply's tolerance.
BIAS_MV = (2450, 2550)
FRONTENDS = ("biased", "halfwave")
#: The biased input's nominal gain since firmware 2.22.0: docs/wiring.md's capacitor CP across each
#: disc, 0.43 of its capacitance, divides what the disc sends by 1 / 1.43 before the pin.
FRONTEND_GAIN = 0.7
#: A disc's capacitance against its nominal (piezo discs are made to +-20 %): with a front-end gain
#: (a capacitor across each disc sized for the nominal disc, ``generate(frontend_gain=...)``) each
#: pad's gain follows its own disc's. (docs/wiring.md asks for CP sized to the disc as measured,
#: which spreads less: the model takes the worst, a CP sized for the nominal disc.)
DISC_CAPACITANCE = (0.8, 1.2)
#: Mixed into a file's noise seed for its pads' gains (a sequence apart from the rounds').
GAIN_SEED = 0x6A1E

# ------------------------------------------------------------------ rounds

#: Round slots: a round every 150 ms of simulated time, the first well after the box's start-up (its HELLO).
ROUND_SPACING_US = 150_000
FIRST_ROUND_US = 100_000
#: The first contact lands this far into its slot.
FIRST_CONTACT_US = (0, 5000)
#: Human reactions (150-400 ms, spread ~250 ms) compressed: everybody within 40 ms of the first.
SPREAD_US = 40_000
#: Near ties: a pair this close (log-uniform), in this share of plain rounds, and which pair.
TIE_GAP_US = (200, 5000)
TIE_P = 0.8
TIE_WHICH: dict[str, float] = {"near_tie_first": 0.25, "near_tie_last": 0.25, "near_tie": 0.5}
#: Special rounds (shares of all rounds).
EIGHT_P = 0.03
SHAKEN_P = 0.07
QUIET_FIRST_P = 0.07
#: Shaken then slapped: the player's slap this long after the loud neighbour's crosstalk reached the pad.
SHAKEN_AFTER_US = (200, 3000)
#: Quiet first slapper: the soft slap this long before the hard neighbour's.
QUIET_LEAD_US = (300, 3000)
#: Eight within this long.
EIGHT_WITHIN_US = 1000
#: Modifiers (rounds of 3 or more players): one player only touches (a feint), one presses slowly.
FEINT_P = 0.12
PRESS_P = 0.06
#: A feint lands where the crosstalk on its pad stays under this (so "touch" is unambiguous).
FEINT_QUIET_MV = 60.0
MAX_ROUNDS_PER_FILE = 20
#: The most rounds ``table_rounds`` may ask of one table (a file within LONG_TABLE_MAX_EVENTS holds
#: ~100 rounds of 2-8 players).
TABLE_ROUNDS_MAX = 100
#: A warm-up (``generate(warmup=True)``): before the rounds, each player slaps alone once (pads in
#: order, hard: WARMUP_HAND), this far apart, as players try their pads at a new table; the box learns
#: from it. Its slaps are not the rounds': the bench judges only the rounds after it. With
#: ``warmup_slaps=N`` the players go round N times: a table the box has heard for a while (one
#: round teaches it no disc's polarity, DISC_SURE in detect.c; three teach it about half of them).
WARMUP_SPACING_US = 50_000
#: The most times round a warm-up may go (``warmup_slaps``).
WARMUP_SLAPS_MAX = 10
WARMUP_HAND = "sharp"

#: Fixed hardest cases: rounds every 100 ms (the first at FIRST_ROUND_US).
CASE_SPACING_US = 100_000


# ------------------------------------------------------------------ data


@dataclass
class Table:
    """One table for a session: top, coupling, each pad's foam and disc wiring."""

    material: str
    speed_m_s: int
    decay_m: float
    near_coupling: float
    foam: list[float]
    pol: list[int]
    ring_hz: int
    ring_tau_us: int

    @classmethod
    def draw(cls, rng: random.Random, material: str | None = None) -> "Table":
        """A random table (of ``material`` if given)."""
        name = material or _weighted(rng, MATERIAL_WEIGHTS)
        m = MATERIALS[name]
        return cls(
            material=name,
            speed_m_s=rng.randint(*m.speed_m_s),
            decay_m=m.decay_m,
            near_coupling=round(rng.uniform(*NEAR_COUPLING), 3),
            foam=[round(rng.uniform(*FOAM_GAIN), 2) for _ in range(PADS)],
            pol=[-1 if rng.random() < REVERSED_P else 1 for _ in range(PADS)],
            ring_hz=rng.randint(*m.ring_hz),
            ring_tau_us=rng.randint(*m.ring_tau_us),
        )

    def delay_us(self, i: int, j: int) -> int:
        """How long the table's vibration takes from pad i to pad j."""
        return round(distance_m(i, j) / self.speed_m_s * 1e6)

    def coupling(self, i: int, j: int) -> float:
        """The share of pad i's amplitude that reaches pad j (exponential decay with distance)."""
        return self.coupling_over(distance_m(i, j), self.foam[i - 1], self.foam[j - 1])

    def coupling_over(self, d_m: float, *foams: float) -> float:
        """The share of amplitude that crosses d_m of this top through the pads' foams (each pad's factor)."""
        k = self.near_coupling
        for f in foams:  # (one at a time, in order: the same floats as near x foam_i x foam_j)
            k *= f
        return min(COUPLING_MAX, k * math.exp(-(d_m - NEAR_DISTANCE_M) / self.decay_m))

    def describe(self) -> str:
        """One comment line."""
        rev = [str(p + 1) for p in range(PADS) if self.pol[p] < 0]
        return (f"table: {self.material}, bending waves {self.speed_m_s} m/s, coupling {self.near_coupling:.2f} "
                f"at {NEAR_DISTANCE_M:.2f} m decaying over {self.decay_m} m, rings {self.ring_hz} Hz "
                f"tau {self.ring_tau_us} us; reversed discs: {', '.join(rev) or 'none'}")


@dataclass
class Electrical:
    """The input circuit and what the mains and the electronics add (one per file)."""

    frontend: str
    bias_mv: int
    noise_mv: int
    hum_mv: int
    hum_hz: int
    drift_mv: int
    drift_period_us: int
    #: The biased input's gain per pad (pad 1 first; empty: 1, no divider): draw_gains().
    gain: tuple[float, ...] = ()

    @classmethod
    def draw(cls, rng: random.Random, frontend: str = "biased") -> "Electrical":
        """Random conditions."""
        r, acc, band = rng.random(), 0.0, HUM_BANDS[-1][1]
        for share, rng_mv in HUM_BANDS:
            acc += share
            if r < acc:
                band = rng_mv
                break
        return cls(
            frontend=frontend,
            bias_mv=rng.randint(*BIAS_MV),
            noise_mv=rng.randint(*NOISE_MV),
            hum_mv=rng.randint(*band),
            hum_hz=rng.choice(HUM_HZ),
            drift_mv=rng.randint(*DRIFT_MV),
            drift_period_us=rng.randint(*DRIFT_PERIOD_US),
        )

    def headroom_mv(self, pol: int) -> float:
        """How far the pin can swing from its rest point in the direction ``pol`` before it clips."""
        if self.frontend == "halfwave":
            return RAIL_MV if pol > 0 else 0.0
        return RAIL_MV - self.bias_mv if pol > 0 else float(self.bias_mv)

    def gain_of(self, pad: int) -> float:
        """What reaches pad ``pad``'s pin (1-based) of what its disc sends (the halfwave input has no divider)."""
        return self.gain[pad - 1] if self.gain and self.frontend == "biased" else 1.0

    def clips(self, pad: int, peak_mv: float, pol: int) -> bool:
        """Whether a contact of ``peak_mv`` (at the disc) on ``pad`` reaches a rail at the pin."""
        return peak_mv * self.gain_of(pad) > self.headroom_mv(pol)

    def disturbance_mv(self, rise_us: float) -> float:
        """The most hum, drift and noise can move a reading between a contact's start and its peak.
        (With a front-end gain the box's thresholds follow it, and so do the hum and drift; the ADC's
        noise, after the divider, weighs 1 / gain more against them: at most 6 mV more at 0.7, well
        inside the margins, so the peaks drawn, and the rounds, are the same at any gain.)"""
        hum = min(2.0 * self.hum_mv, self.hum_mv * 2.0 * math.pi * self.hum_hz * rise_us / 1e6)
        drift = self.drift_mv * 2.0 * math.pi * rise_us / self.drift_period_us
        return hum + drift + self.noise_mv

    def peak_band(self, expect: str, rise_us: float) -> tuple[float, float]:
        """The peaks for which ``expect`` is unambiguous at this rise time."""
        d = self.disturbance_mv(rise_us)
        if expect == "slap":
            return SLAP_THRESHOLD_MV + SLAP_MARGIN_MV + d, math.inf
        if expect == "touch":
            return TOUCH_THRESHOLD_MV + TOUCH_LOW_MARGIN_MV + d, SLAP_THRESHOLD_MV - TOUCH_HIGH_MARGIN_MV - d
        return TOUCH_THRESHOLD_MV + TOUCH_LOW_MARGIN_MV + d, math.inf  # a press: slap or touch

    def directives(self) -> list[str]:
        """The file's directives for these conditions."""
        lines = [f"frontend {self.frontend}"]
        if self.frontend == "biased":
            lines.append(f"bias_mv {self.bias_mv}")
        lines.append(f"noise_mv {self.noise_mv}")
        if self.hum_mv:
            lines.append(f"hum_mv {self.hum_mv} {self.hum_hz}")
        if self.drift_mv:
            lines.append(f"drift_mv {self.drift_mv} {self.drift_period_us}")
        if self.gain and self.frontend == "biased":
            lines.append("gain " + " ".join(f"{g:.3f}" for g in self.gain))
        return lines


def _front_end_gain(g: float) -> float:
    """``g`` if it can be a front end's gain (more than 0, at most 1), else ValueError."""
    if not 0.0 < g <= 1.0:
        raise ValueError(f"frontend_gain must be more than 0 and at most 1, got {g}")
    return g


def draw_gains(rng: random.Random, nominal: float) -> tuple[float, ...]:
    """Each pad's front-end gain: a capacitor across the disc sized to give ``nominal`` with the
    nominal disc, ``C / C_disc = (1 - nominal) / nominal``, and each disc's capacitance within
    DISC_CAPACITANCE of its nominal (0.7 gives 0.65-0.74)."""
    ratio = (1.0 - _front_end_gain(nominal)) / nominal
    out = []
    for _ in range(PADS):
        c = rng.uniform(*DISC_CAPACITANCE)
        out.append(round(c / (c + ratio), 3))
    return tuple(out)


@dataclass
class Contact:
    """A player's hand on their pad: the truth an onset and a kind are judged against."""

    pad: int
    t_us: int
    hand: str
    pol: int
    peak_mv: int
    rise_us: int
    ring_hz: int
    ring: float
    tau_us: int
    expect: str
    clipped: bool
    role: str = ""
    #: Crosstalk over the touch threshold on this pad while this push rises (see Round.mark_shaken).
    shaken: bool = False

    def line(self) -> str:
        """The scenario file's ``hit`` line."""
        note = ", ".join([self.hand] + ["clipped"] * self.clipped + ["shaken"] * self.shaken + [self.role] * bool(self.role))
        return (f"hit {self.pad} {self.t_us} {self.peak_mv} {self.expect} rise={self.rise_us} "
                f"ring={self.ring:.2f} hz={self.ring_hz} tau={self.tau_us} pol={self.pol}  # {note}")


@dataclass
class Crosstalk:
    """The table's vibration from a contact on pad ``from_pad`` reaching pad ``pad``: never a hit."""

    pad: int
    t_us: int
    from_pad: int
    delay_us: int
    coupling: float
    peak_mv: int
    rise_us: int
    ring_hz: int
    ring: float
    tau_us: int
    pol: int

    def line(self) -> str:
        """The scenario file's ``hit ... none`` line."""
        return (f"hit {self.pad} {self.t_us} {self.peak_mv} none rise={self.rise_us} ring={self.ring:.2f} "
                f"hz={self.ring_hz} tau={self.tau_us} pol={self.pol}  "
                f"# crosstalk from pad {self.from_pad}: {self.coupling:.3f} x after {self.delay_us} us")

    def envelope_mv(self, t_us: float) -> float:
        """An upper bound of its absolute voltage at t_us."""
        u = t_us - self.t_us
        if u < 0:
            return 0.0
        if u < 2 * self.rise_us:
            return float(self.peak_mv)
        return self.peak_mv * self.ring * math.exp(-(u - 2 * self.rise_us) / self.tau_us)

    def max_envelope_mv(self, t0: float, t1: float) -> float:
        """The most of its envelope between t0 and t1."""
        if self.t_us > t1:
            return 0.0
        return self.envelope_mv(max(t0, self.t_us))


@dataclass
class Round:
    """One Taco round: who slapped (touched, pressed), when, and what shook which pad."""

    index: int
    start_us: int
    case: str
    players: list[int]
    contacts: list[Contact] = field(default_factory=list)
    crosstalk: list[Crosstalk] = field(default_factory=list)

    @property
    def events(self) -> int:
        """Scenario events this round adds."""
        return len(self.contacts) + len(self.crosstalk)

    def mark_shaken(self) -> None:
        """Flag each contact whose pad carries crosstalk over the touch threshold while its push rises
        (from contact to peak): its onset and even its presence are then partly hidden by the shaking."""
        for c in self.contacts:
            c.shaken = any(x.pad == c.pad and x.max_envelope_mv(c.t_us, c.t_us + c.rise_us) >= TOUCH_THRESHOLD_MV
                           for x in self.crosstalk)

    def slaps(self) -> list[Contact]:
        """The real slaps, in contact order."""
        return sorted((c for c in self.contacts if c.expect == "slap"), key=lambda c: (c.t_us, c.pad))

    def deciding_gaps_us(self) -> tuple[float, float]:
        """First to second slap, and second-last to last (infinite with a single slapper)."""
        s = self.slaps()
        if len(s) < 2:
            return math.inf, math.inf
        return float(s[1].t_us - s[0].t_us), float(s[-1].t_us - s[-2].t_us)

    def truth(self) -> dict[str, Any]:
        """The round as JSON."""
        first, last = self.deciding_gaps_us()
        s = self.slaps()
        return {
            "index": self.index, "start_us": self.start_us, "case": self.case, "players": self.players,
            "first": s[0].pad if s else None, "last": s[-1].pad if s else None,
            "first_gap_us": None if math.isinf(first) else first,
            "last_gap_us": None if math.isinf(last) else last,
            "contacts": [asdict(c) for c in self.contacts],
            "crosstalk": [asdict(x) for x in self.crosstalk],
        }

    def lines(self) -> list[str]:
        """The round's comment and hit lines, in time order."""
        slaps = self.slaps()
        order = " ".join(str(c.pad) for c in slaps)
        n = len(self.players)
        head = (f"# round {self.index} at {self.start_us} us: {n} player{'s' if n != 1 else ''} "
                f"(pads {' '.join(map(str, self.players))}), {self.case}; slap order {order or '-'}")
        rows = [(c.t_us, c.pad, 0, c.line()) for c in self.contacts] + [(x.t_us, x.pad, 1, x.line()) for x in self.crosstalk]
        return [head] + [r[3] for r in sorted(rows)]


@dataclass
class ScenarioFile:
    """One scenario file: a table, its electrical conditions and the rounds played on it."""

    name: str
    noise_seed: int
    table: Table
    electrical: Electrical
    rounds: list[Round]
    duration_us: int
    notes: list[str] = field(default_factory=list)
    spacing_us: int = ROUND_SPACING_US
    warmup: list[Round] = field(default_factory=list)

    @property
    def events(self) -> int:
        """Scenario events in the file's rounds (the warm-up apart)."""
        return sum(r.events for r in self.rounds)

    def text(self) -> str:
        """The scenario file."""
        out = [f"# {self.name}: generated by firmware/sim/table_model.py; do not edit, regenerate."]
        out += [f"# {n}" for n in self.notes]
        out += [f"# {self.table.describe()}", f"duration_us {self.duration_us}", f"seed {self.noise_seed}"]
        out += self.electrical.directives()
        for r in [*self.warmup, *self.rounds]:
            out += r.lines()
        for line in out:
            if len(line) > MAX_LINE:
                raise ValueError(f"{self.name}: line over {MAX_LINE} characters: {line}")
        return "\n".join(out) + "\n"

    def truth(self) -> dict[str, Any]:
        """The file's truth as JSON."""
        return {
            "scenario": f"{self.name}.scn", "noise_seed": self.noise_seed, "duration_us": self.duration_us,
            "round_spacing_us": self.spacing_us, "table": asdict(self.table),
            "electrical": asdict(self.electrical), "rounds": [r.truth() for r in self.rounds],
            "warmup": [r.truth() for r in self.warmup],
        }


# ------------------------------------------------------------------ drawing


def _weighted(rng: random.Random, weights: dict[str, float]) -> str:
    r, acc = rng.random() * sum(weights.values()), 0.0
    for key, w in weights.items():
        acc += w
        if r < acc:
            return key
    return next(reversed(weights))


def _log_uniform(rng: random.Random, lo: float, hi: float) -> int:
    return round(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def nearest(pad: int, among: Iterable[int]) -> int:
    """The pad of ``among`` (not ``pad`` itself) closest to ``pad``."""
    return min((p for p in among if p != pad), key=lambda p: (distance_m(pad, p), p))


def make_contact(rng: random.Random, table: Table, elec: Electrical, pad: int, t_us: int, hand: str,
                 peak_mv: int | None = None, rise_us: int | None = None, role: str = "") -> Contact:
    """A contact of ``hand`` on ``pad`` at ``t_us``: rise and peak drawn in the hand's ranges (or given),
    the peak kept where the expected kind is unambiguous under this file's hum and noise."""
    h = HANDS[hand]
    rise = rise_us if rise_us is not None else rng.randint(*h.rise_us)
    lo, hi = elec.peak_band(h.expect, rise)
    if peak_mv is None:
        a, b = max(h.peak_mv[0], lo), min(h.peak_mv[1], hi)
        if a > b:
            raise ValueError(f"no unambiguous {hand} peak at rise {rise} us under {elec}")
        peak = round(rng.uniform(a, b))
    else:
        if not lo <= peak_mv <= hi:
            raise ValueError(f"a {hand} of {peak_mv} mV is ambiguous (band {lo:.0f}..{hi:.0f}) under {elec}")
        peak = peak_mv
    pol = table.pol[pad - 1]
    return Contact(
        pad=pad, t_us=t_us, hand=hand, pol=pol, peak_mv=peak, rise_us=rise,
        ring_hz=rng.randint(*OWN_RING_HZ), ring=round(rng.uniform(*OWN_RING), 2), tau_us=rng.randint(*OWN_TAU_US),
        expect=h.expect, clipped=elec.clips(pad, peak, pol), role=role,
    )


def crosstalk_from(rng: random.Random, table: Table, c: Contact,
                   hot: dict[tuple[int, int], float] | None = None) -> list[Crosstalk]:
    """What a contact shakes onto every other pad (left out below XT_FLOOR_MV)."""
    out = []
    for j in range(1, PADS + 1):
        if j == c.pad:
            continue
        k = round((hot or {}).get((c.pad, j), table.coupling(c.pad, j)), 3)
        peak = c.peak_mv * k * (PRESS_XTALK if c.hand == "press" else 1.0)
        # Drawn whether or not it is kept, so the floor never shifts the random sequence.
        rise, ring = rng.randint(*XT_RISE_US), round(rng.uniform(*XT_RING), 2)
        hz = min(XT_HZ_RANGE[1], max(XT_HZ_RANGE[0], round(table.ring_hz * rng.uniform(1 - XT_JITTER, 1 + XT_JITTER))))
        tau = min(XT_TAU_RANGE_US[1], max(XT_TAU_RANGE_US[0], round(table.ring_tau_us * rng.uniform(1 - XT_JITTER, 1 + XT_JITTER))))
        pol = rng.choice((-1, 1))
        if peak < XT_FLOOR_MV:
            continue
        d = table.delay_us(c.pad, j)
        out.append(Crosstalk(pad=j, t_us=c.t_us + d, from_pad=c.pad, delay_us=d, coupling=k,
                             peak_mv=round(peak), rise_us=rise, ring_hz=hz, ring=ring, tau_us=tau, pol=pol))
    return out


def quiet_for_touch(pad: int, t_us: int, rise_us: int, crosstalk: Sequence[Crosstalk]) -> bool:
    """Whether the crosstalk on ``pad`` stays under FEINT_QUIET_MV from 0.5 ms before a touch to 2 ms after its push."""
    t0, t1 = t_us - 500, t_us + 2 * rise_us + 2000
    on_pad = [x for x in crosstalk if x.pad == pad]
    if any(t0 - 2 * x.rise_us <= x.t_us <= t1 and x.peak_mv >= FEINT_QUIET_MV for x in on_pad):
        return False
    return sum(x.envelope_mv(t0) for x in on_pad) < FEINT_QUIET_MV


def _offsets(rng: random.Random, n: int) -> tuple[list[int], str]:
    """Contact times of n players relative to the first, with a forced near tie in most rounds."""
    offs = sorted([0] + [rng.randint(0, SPREAD_US) for _ in range(n - 1)])
    if n < 2 or rng.random() >= TIE_P:
        return offs, "plain"
    gap = _log_uniform(rng, *TIE_GAP_US)
    which = _weighted(rng, TIE_WHICH)
    if which == "near_tie_first" or n == 2:
        offs = sorted([0, gap] + [rng.randint(gap, SPREAD_US) for _ in range(n - 2)])
        return offs, "near_tie_first" if n > 2 else "near_tie"
    if which == "near_tie_last":
        last = rng.randint(gap + 1000, SPREAD_US)
        offs = sorted([0, last - gap, last] + [rng.randint(0, last - gap) for _ in range(n - 3)])
        return offs, which
    k = rng.randrange(n - 1)
    offs[k + 1] = offs[k] + gap
    return sorted(offs), which


def draw_round(rng: random.Random, table: Table, elec: Electrical, index: int, start_us: int,
               players: tuple[int, int] = (2, 8)) -> Round:
    """One random round starting at ``start_us`` (its slot is ROUND_SPACING_US long)."""
    lo, hi = players
    r = rng.random()
    case = "plain"
    if hi >= PADS and r < EIGHT_P:
        case = "eight_within_1ms"
    elif r < EIGHT_P + SHAKEN_P:
        case = "shaken_then_slapped"
    elif r < EIGHT_P + SHAKEN_P + QUIET_FIRST_P:
        case = "quiet_first_slapper"
    n = PADS if case == "eight_within_1ms" else rng.randint(lo, hi)
    pads = sorted(rng.sample(range(1, PADS + 1), n))
    hands = {p: _weighted(rng, SLAP_HAND_WEIGHTS) for p in pads}
    first = start_us + rng.randint(*FIRST_CONTACT_US)
    peaks: dict[int, int] = {}
    roles: dict[int, str] = {}
    if case == "eight_within_1ms":
        times = {p: first + rng.randint(0, EIGHT_WITHIN_US) for p in pads}
    else:
        offs, tie = _offsets(rng, n)
        order = pads[:]
        rng.shuffle(order)
        times = {p: first + o for p, o in zip(order, offs)}
        if case == "plain":
            case = tie
        elif case == "shaken_then_slapped":
            i = rng.choice(pads)
            j = nearest(i, pads)
            hands[i], peaks[i] = "sharp", rng.randint(*LOUD_MV)
            times[j] = times[i] + table.delay_us(i, j) + rng.randint(*SHAKEN_AFTER_US)
            roles[i], roles[j] = "loud neighbour", "shaken then slapped"
        else:
            j = rng.choice(pads)
            i = nearest(j, pads)
            hands[j], hands[i], peaks[i] = "soft", "sharp", rng.randint(*LOUD_MV)
            times[i] = times[j] + rng.randint(*QUIET_LEAD_US)
            roles[i], roles[j] = "hard neighbour", "quiet first slapper"
    feint = None
    if n >= 3 and case != "eight_within_1ms" and rng.random() < FEINT_P:
        feint = rng.choice([p for p in pads if p not in roles])
        hands[feint], roles[feint] = "touch", "feint"
    if n >= 4 and case != "eight_within_1ms" and rng.random() < PRESS_P:
        p = rng.choice([p for p in pads if p not in roles])
        hands[p], roles[p] = "press", "slow press"
    rnd = Round(index=index, start_us=start_us, case=case, players=pads)
    hot: dict[tuple[int, int], float] = {}
    if rng.random() < HOT_PAIR_P:
        i = rng.choice([p for p in pads if p != feint])
        hot[(i, nearest(i, range(1, PADS + 1)))] = round(rng.uniform(*HOT_COUPLING), 3)
    for p in pads:
        if p == feint:
            continue
        c = make_contact(rng, table, elec, p, times[p], hands[p], peak_mv=peaks.get(p), role=roles.get(p, ""))
        rnd.contacts.append(c)
        rnd.crosstalk += crosstalk_from(rng, table, c, hot)
    if feint is not None:
        rise = rng.randint(*HANDS["touch"].rise_us)
        latest = max(x.t_us for x in rnd.crosstalk + rnd.contacts)  # type: ignore[operator]
        t = latest + 25_000
        for _ in range(40):
            cand = first + rng.randint(0, SPREAD_US + 20_000)
            if quiet_for_touch(feint, cand, rise, rnd.crosstalk):
                t = cand
                break
        c = make_contact(rng, table, elec, feint, t, "touch", rise_us=rise, role="feint")
        rnd.contacts.append(c)
        rnd.crosstalk += crosstalk_from(rng, table, c, hot)
    rnd.contacts.sort(key=lambda c: (c.t_us, c.pad))
    rnd.mark_shaken()
    return rnd


def draw_warmup(rng: random.Random, table: Table, elec: Electrical, slaps: int = 1) -> list[Round]:
    """Each player slaps alone, pads in order, WARMUP_SPACING_US apart from FIRST_ROUND_US; ``slaps`` times round."""
    out = []
    for k in range(slaps * PADS):
        pad = k % PADS + 1
        start = FIRST_ROUND_US + k * WARMUP_SPACING_US
        rnd = Round(index=0, start_us=start, case="warmup", players=[pad])
        c = make_contact(rng, table, elec, pad, start + rng.randint(*FIRST_CONTACT_US), WARMUP_HAND, role="warm-up")
        rnd.contacts.append(c)
        rnd.crosstalk += crosstalk_from(rng, table, c)
        rnd.mark_shaken()
        out.append(rnd)
    return out


def generate(rounds: int, seed: int, players: tuple[int, int] = (2, 8), frontend: str = "biased",
             prefix: str = "table", warmup: bool = False, warmup_slaps: int = 1,
             table_rounds: int | None = None,
             frontend_gain: float | None = FRONTEND_GAIN) -> list[ScenarioFile]:
    """``rounds`` random rounds packed into scenario files (a new table and new conditions per file).

    With ``warmup`` each file starts with draw_warmup()'s solo slaps and its rounds come after them:
    the same rounds as without, later by warmup_slaps * PADS * WARMUP_SPACING_US (the warm-up draws
    from a random sequence of its own; each player slaps alone warmup_slaps times). With
    ``table_rounds`` each table plays that many rounds (fewer only where a file would pass
    LONG_TABLE_MAX_EVENTS, or at the end) instead of MAX_ROUNDS_PER_FILE within
    MAX_EVENTS_PER_FILE: long tables. With ``frontend_gain`` (FRONTEND_GAIN, the wiring since
    firmware 2.22.0, unless told otherwise) the biased input has a capacitor across each disc
    (draw_gains(): each pad's gain near it; drawn from a random sequence of the file's own, so the
    rounds are the same as without); None: no capacitor, the wiring before 2.22.0."""
    if not 1 <= players[0] <= players[1] <= PADS:
        raise ValueError(f"players must be within 1..{PADS}, got {players}")
    if table_rounds is not None and not 1 <= table_rounds <= TABLE_ROUNDS_MAX:
        raise ValueError(f"table_rounds must be within 1..{TABLE_ROUNDS_MAX}, got {table_rounds}")
    most_rounds = table_rounds or MAX_ROUNDS_PER_FILE
    most_events = LONG_TABLE_MAX_EVENTS if table_rounds else MAX_EVENTS_PER_FILE
    if frontend_gain is not None:
        _front_end_gain(frontend_gain)  # (before any round is drawn)
    if warmup and not 1 <= warmup_slaps <= WARMUP_SLAPS_MAX:
        raise ValueError(f"warmup_slaps must be within 1..{WARMUP_SLAPS_MAX}, got {warmup_slaps}")
    rng = random.Random(seed)
    files: list[ScenarioFile] = []
    done = 0
    first = FIRST_ROUND_US + (warmup_slaps * PADS * WARMUP_SPACING_US if warmup else 0)
    while done < rounds:
        table, elec = Table.draw(rng), Electrical.draw(rng, frontend)
        f = ScenarioFile(name=f"{prefix}_{len(files) + 1:03d}", noise_seed=rng.randrange(1, 2**31),
                         table=table, electrical=elec, rounds=[], duration_us=0)
        if warmup:
            f.warmup = draw_warmup(random.Random(f.noise_seed), table, elec, warmup_slaps)
        while done < rounds and len(f.rounds) < most_rounds:
            start = first + len(f.rounds) * ROUND_SPACING_US
            rnd = draw_round(rng, table, elec, done + 1, start, players)
            if f.events + rnd.events > most_events:
                break  # drawn again on the next table
            f.rounds.append(rnd)
            done += 1
        f.duration_us = first + len(f.rounds) * ROUND_SPACING_US
        f.notes = [f"{len(f.rounds)} random rounds (of {rounds}, seed {seed}), one every {ROUND_SPACING_US} us; "
                   f"the truth of each contact is in truth.json"]
        if warmup:
            times = "once" if warmup_slaps == 1 else f"{warmup_slaps} times round"
            f.notes.insert(0, f"a warm-up first: each player slaps alone {times}, {WARMUP_SPACING_US} us apart")
        if frontend_gain is not None:
            with_frontend_gain(f, frontend_gain)
        files.append(f)
    return files


def with_frontend_gain(f: ScenarioFile, nominal: float) -> ScenarioFile:
    """``f`` with a capacitor across each disc: its pads' gains drawn near ``nominal`` (draw_gains(),
    from a random sequence of the file's own) and each contact's ``clipped`` judged at its pin."""
    f.electrical.gain = draw_gains(random.Random(f.noise_seed ^ GAIN_SEED), nominal)
    for r in [*f.warmup, *f.rounds]:
        for c in r.contacts:
            c.clipped = f.electrical.clips(c.pad, c.peak_mv, c.pol)
    return f


def truth_document(files: Sequence[ScenarioFile], **params: Any) -> dict[str, Any]:
    """The truth sidecar of a set of files."""
    return {
        "generator": "firmware/sim/table_model.py", **params,
        "thresholds_mv": {"slap": round(SLAP_THRESHOLD_MV, 1), "touch": round(TOUCH_THRESHOLD_MV, 1)},
        "files": [f.truth() for f in files],
    }


def write(files: Sequence[ScenarioFile], out: Path, **params: Any) -> Path:
    """Write each file as ``<name>.scn`` and the truth as ``truth.json`` into ``out``; the truth's path."""
    out.mkdir(parents=True, exist_ok=True)
    for f in files:
        (out / f"{f.name}.scn").write_text(f.text())
    path = out / "truth.json"
    path.write_text(json.dumps(truth_document(files, **params), indent=1) + "\n")
    return path


# ------------------------------------------------------------------ the fixed hardest cases


def case_table() -> Table:
    """The table of the fixed cases: plywood, 800 m/s, the closest pads at 0.30, discs 3 and 6 reversed."""
    return Table(material="plywood", speed_m_s=800, decay_m=MATERIALS["plywood"].decay_m, near_coupling=0.30,
                 foam=[1.0] * PADS, pol=[1, 1, -1, 1, 1, -1, 1, 1], ring_hz=2200, ring_tau_us=3000)


def case_electrical(**kw: int) -> Electrical:
    """Quiet conditions (a little hum, noise and drift), overridable."""
    base = dict(frontend="biased", bias_mv=2500, noise_mv=8, hum_mv=40, hum_hz=50, drift_mv=30,
                drift_period_us=4_000_000)
    base.update(kw)
    return Electrical(**base)  # type: ignore[arg-type]


def _case_file(name: str, seed: int, notes: list[str], rounds: list[Round], elec: Electrical,
               table: Table, duration_us: int | None = None) -> ScenarioFile:
    dur = duration_us or FIRST_ROUND_US + len(rounds) * CASE_SPACING_US
    return ScenarioFile(name=name, noise_seed=seed, table=table, electrical=elec, rounds=rounds,
                        duration_us=dur, notes=notes, spacing_us=CASE_SPACING_US)


def _case_round(rng: random.Random, table: Table, elec: Electrical, index: int, case: str,
                specs: Sequence[tuple[int, int, str, int | None, str]],
                hot: dict[tuple[int, int], float] | None = None, start_us: int | None = None) -> Round:
    """A round of given contacts (pad, time in the slot, hand, peak or None, role), with the model's crosstalk."""
    start = start_us if start_us is not None else FIRST_ROUND_US + (index - 1) * CASE_SPACING_US
    rnd = Round(index=index, start_us=start, case=case, players=sorted(p for p, *_ in specs))
    for pad, t, hand, peak, role in specs:
        c = make_contact(rng, table, elec, pad, start + t, hand, peak_mv=peak, role=role)
        rnd.contacts.append(c)
        rnd.crosstalk += crosstalk_from(rng, table, c, hot)
    rnd.contacts.sort(key=lambda c: (c.t_us, c.pad))
    rnd.mark_shaken()
    return rnd


def case_shaken_then_slapped() -> ScenarioFile:
    """A loud (10 V) slap shakes its neighbour; that player slaps 0.3..3 ms after the shaking arrived."""
    rng, table, elec = random.Random(101), case_table(), case_electrical()
    rounds = []
    pairs = [(2, 3), (4, 3), (5, 6), (1, 8), (7, 6), (3, 2)]
    for k, (after, (i, j)) in enumerate(zip((300, 600, 1000, 1500, 2200, 3000), pairs), start=1):
        t_j = 1000 + table.delay_us(i, j) + after
        rounds.append(_case_round(rng, table, elec, k, f"shaken_then_slapped ({after} us after the shaking)", [
            (i, 1000, "sharp", 10000, "loud neighbour"),
            (j, t_j, "normal", 2500, f"shaken then slapped {after} us after"),
        ]))
    return _case_file("model_shaken_then_slapped", 101, [
        "Neighbour shaken then slapped: a loud 10 V slap on pad i shakes its nearest neighbour j (the table's",
        "vibration arrives after distance / speed); player j slaps 0.3, 0.6, 1.0, 1.5, 2.2 and 3.0 ms after it",
        "arrived. Both slaps count; j's onset is j's own contact, not the shaking's arrival.",
    ], rounds, elec, table)


def case_quiet_first_slapper() -> ScenarioFile:
    """A soft 1.2 V slap 0.5-2 ms before a 10 V (clipped) neighbour: the quiet one was first."""
    rng, table, elec = random.Random(102), case_table(), case_electrical()
    rounds = []
    pairs = [(2, 3), (3, 4), (6, 5), (8, 1), (7, 6)]
    for k, (lead, (j, i)) in enumerate(zip((500, 800, 1200, 1600, 2000), pairs), start=1):
        rounds.append(_case_round(rng, table, elec, k, f"quiet_first_slapper ({lead} us ahead)", [
            (j, 1000, "soft", 1200, "quiet first slapper"),
            (i, 1000 + lead, "sharp", 10000, "hard neighbour"),
        ]))
    return _case_file("model_quiet_first_slapper", 102, [
        "Quiet first slapper: a soft 1.2 V slap (rise 500-900 us) 0.5, 0.8, 1.2, 1.6 and 2.0 ms before a",
        "10 V slap (clipped) on its nearest neighbour, whose crosstalk (~3 V) lands on the soft slap while it",
        "is still rising or ringing. Both are slaps; the soft one came first.",
    ], rounds, elec, table)


def case_clipped_neighbour() -> ScenarioFile:
    """A clipped slap whose nearest neighbour gets 40 % of it: the neighbour clips too and must stay silent."""
    rng, table, elec = random.Random(103), case_table(), case_electrical()
    rounds = []
    for k, (i, peak) in enumerate(((2, 12000), (6, 12000), (5, 15000), (3, 9000)), start=1):
        j = nearest(i, range(1, PADS + 1))
        rounds.append(_case_round(rng, table, elec, k, f"clipped_neighbour (pad {j} gets 40 % of pad {i})", [
            (i, 1000, "sharp", peak, "clipped slap, 40 % neighbour"),
        ], hot={(i, j): 0.40}))
    return _case_file("model_clipped_neighbour", 103, [
        "A clipped slap (9-15 V at the disc; the pin clips at ~2.5 V of swing, ~3.6 V at the disc through",
        "the capacitor across it) with its nearest neighbour coupled at 40 %: the neighbour's crosstalk",
        "(3.6-6 V) clips as well, so both pads show the same flat-topped peak. Only the slap counts; the",
        "neighbour's player did nothing.",
    ], rounds, elec, table)


def case_reversed_disc() -> ScenarioFile:
    """A reversed disc (pol=-1) 0.5 ms before a normally wired one: the reversed one was first."""
    rng, table, elec = random.Random(104), case_table(), case_electrical()
    specs = [((3, "normal", 2500), (5, "normal", 2500)), ((6, "sharp", 6000), (2, "normal", 2000)),
             ((3, "soft", 1500), (4, "sharp", 8000)), ((6, "normal", 3000), (7, "soft", 1600))]
    rounds = []
    for k, ((ri, rh, rp), (ni, nh, npk)) in enumerate(specs, start=1):
        rounds.append(_case_round(rng, table, elec, k, "reversed_disc (500 us ahead)", [
            (ri, 1000, rh, rp, "reversed disc, first"), (ni, 1500, nh, npk, "second"),
        ]))
    return _case_file("model_reversed_disc", 104, [
        "A disc wired the other way round (pol=-1: the first half-wave goes negative, the ringing then",
        "positive) slaps 0.5 ms before a normally wired one. The old half-wave input only saw the positive",
        "ringing, up to 2 ms late; the biased input sees both halves, so the order must come out right.",
    ], rounds, elec, table)


def case_hum_touches() -> ScenarioFile:
    """10 s of 350 mV 50 Hz hum (over the touch threshold) with no contact, then light touches."""
    rng, table = random.Random(105), case_table()
    elec = case_electrical(hum_mv=350, hum_hz=50, noise_mv=10, drift_mv=60)
    rounds = []
    for k in range(8):
        pad = k + 1
        start = 8_000_000 + k * 230_000  # a different hum phase each time (230 ms = 11.5 cycles)
        rounds.append(_case_round(rng, table, elec, k + 1, "feint in hum", [
            (pad, 1000 + k * 2_500, "touch", None, "feint under 350 mV hum"),
        ], start_us=start))
    return _case_file("model_hum_touches", 105, [
        "Mains hum of 350 mV at 50 Hz on every pad (just over the 293 mV touch threshold) for 10 s: no",
        "contact for the first 8 s, then eight light touches (feints) at different hum phases, on each pad",
        "in turn. Only the eight touches count: nothing from the hum, nothing from the touches' crosstalk.",
    ], rounds, elec, table, duration_us=10_000_000)


def case_eight_within_1ms() -> ScenarioFile:
    """All eight players within 1 ms, mixed strengths and disc polarities."""
    rng, table = random.Random(106), case_table()
    table.pol = [1, -1, -1, 1, 1, -1, 1, -1]
    elec = case_electrical()
    rounds = []
    for k in range(1, 4):
        specs = []
        for pad in range(1, PADS + 1):
            hand = ("sharp", "normal", "soft")[(pad + k) % 3]
            specs.append((pad, 1000 + rng.randint(0, EIGHT_WITHIN_US), hand, None, ""))
        rounds.append(_case_round(rng, table, elec, k, "eight_within_1ms", specs))
    return _case_file("model_eight_within_1ms", 106, [
        "Eight players within 1 ms (a full table on a Taco): sharp, normal and soft slaps on discs wired",
        "both ways (2, 3, 6 and 8 reversed), each shaking all the others. Eight slaps a round, in the",
        "right order where they are 0.5 ms or more apart; none of the shaking.",
    ], rounds, elec, table)


CASES = (case_shaken_then_slapped, case_quiet_first_slapper, case_clipped_neighbour, case_reversed_disc,
         case_hum_touches, case_eight_within_1ms)


def hardest_cases(frontend_gain: float | None = FRONTEND_GAIN) -> list[ScenarioFile]:
    """Every fixed hardest case, as shipped in firmware/sim/scenarios/model_*.scn, through the
    front end of gain ``frontend_gain`` (with_frontend_gain(); None: no capacitor across the disc)."""
    cases = [make() for make in CASES]
    return [with_frontend_gain(f, frontend_gain) for f in cases] if frontend_gain is not None else cases


def write_cases(directory: Path, cases: Sequence[ScenarioFile] | None = None) -> list[Path]:
    """(Re)write the fixed cases (or ``cases``, made by hardest_cases()) into ``directory``; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in cases if cases is not None else hardest_cases():
        path = directory / f"{f.name}.scn"
        path.write_text(f.text())
        paths.append(path)
    return paths


# ------------------------------------------------------------------ command line


def _players(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code."""
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=100, help="random rounds to generate (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--out", type=Path, help="directory for the scenario files and truth.json")
    ap.add_argument("--players", type=_players, default=(2, 8), help="players a round, e.g. 2-8 (default)")
    ap.add_argument("--frontend", choices=FRONTENDS, default="biased", help="the input circuit (default biased)")
    ap.add_argument("--table-rounds", type=int, metavar="N",
                    help=f"rounds a table plays (1..{TABLE_ROUNDS_MAX}; default: ~6, at most "
                         f"{MAX_ROUNDS_PER_FILE} within {MAX_EVENTS_PER_FILE} events)")
    ap.add_argument("--frontend-gain", type=float, metavar="G", default=FRONTEND_GAIN,
                    help=f"a capacitor across each disc, the biased input's gain G (0 < G <= 1; each pad's within "
                         f"its disc's tolerance; default {FRONTEND_GAIN}, the wiring since firmware 2.22.0); the "
                         f"box's thresholds follow it. --no-frontend-gain: no capacitor (the wiring before)")
    ap.add_argument("--no-frontend-gain", dest="frontend_gain", action="store_const", const=None,
                    help="no capacitor across the discs: firmware 2.21.0's wiring")
    ap.add_argument("--cases", nargs="?", const=here / "scenarios", type=Path, metavar="DIR",
                    help=f"write the fixed hardest cases (default {here / 'scenarios'})")
    args = ap.parse_args(argv)
    if args.cases is None and args.out is None:
        ap.error("give --out DIR (random rounds) and/or --cases [DIR] (the fixed hardest cases)")
    if args.out is not None:
        try:
            files = generate(args.rounds, args.seed, args.players, args.frontend, table_rounds=args.table_rounds,
                             frontend_gain=args.frontend_gain)
        except ValueError as exc:  # (--table-rounds or --frontend-gain out of range)
            ap.error(str(exc))
        extra: dict[str, Any] = {"table_rounds": args.table_rounds} if args.table_rounds else {}
        if args.frontend_gain is not None:
            extra["frontend_gain"] = args.frontend_gain
        path = write(files, args.out, seed=args.seed, rounds=args.rounds, players=list(args.players),
                     frontend=args.frontend, **extra)
        print(f"{args.rounds} rounds in {len(files)} files, truth in {path}")
    if args.cases is not None:
        for p in write_cases(args.cases):
            print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())

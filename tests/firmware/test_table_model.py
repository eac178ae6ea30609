"""The table model (firmware/sim/table_model.py): the physics it promises, the
expectations it writes, determinism, and that its files are what the C side reads.

Fast: a few hundred generated rounds, no simulation. The C check compiles a
ten-line loader against firmware/sim/scenario.c with the host's gcc.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.firmware import simtools

SIM = Path(simtools.FIRMWARE) / "sim"
tm = simtools.load_sibling("table_model")

ROUNDS = 300


@pytest.fixture(scope="module")
def files() -> list:
    """300 random rounds of 2 to 8 players."""
    return tm.generate(ROUNDS, seed=7)


def _contacts(files: list):
    return [c for f in files for r in f.rounds for c in r.contacts]


def _crosstalk(files: list):
    return [x for f in files for r in f.rounds for x in r.crosstalk]


def test_crosstalk_delay_grows_and_coupling_falls_with_distance() -> None:
    """From every pad, the farther the neighbour the later the shaking arrives, and
    (foam alike) the weaker it is; across the table 0.2-3.3 ms for every material."""
    for name in tm.MATERIALS:
        for speed in tm.MATERIALS[name].speed_m_s:
            table = tm.Table(name, speed, tm.MATERIALS[name].decay_m, 0.3, [1.0] * 8, [1] * 8, 2000, 3000)
            for i in range(1, 9):
                others = sorted((j for j in range(1, 9) if j != i), key=lambda j: tm.distance_m(i, j))
                delays = [table.delay_us(i, j) for j in others]
                coupling = [table.coupling(i, j) for j in others]
                assert delays == sorted(delays)
                assert coupling == sorted(coupling, reverse=True)
                assert 200 <= delays[0] and delays[-1] <= 3300, (name, speed, delays)


def test_crosstalk_in_the_files_follows_the_table(files: list) -> None:
    """Every crosstalk event arrives delay(i, j) after its source's contact, as strong as
    the coupling says; nearest neighbours get 10-45 % (45 only rarely), the farthest 1-15 %."""
    for f in files:
        for r in f.rounds:
            by_pad = {c.pad: c for c in r.contacts}
            for x in r.crosstalk:
                src = by_pad[x.from_pad]
                assert x.t_us == src.t_us + f.table.delay_us(src.pad, x.pad)
                scale = tm.PRESS_XTALK if src.hand == "press" else 1.0
                assert x.peak_mv == pytest.approx(src.peak_mv * x.coupling * scale, abs=1.0)
                assert tm.XT_RISE_US[0] <= x.rise_us <= tm.XT_RISE_US[1]
                assert tm.XT_HZ_RANGE[0] <= x.ring_hz <= tm.XT_HZ_RANGE[1]
                assert x.pol in (-1, 1)
    near = [x.coupling for x in _crosstalk(files) if tm.distance_m(x.pad, x.from_pad) < 0.47]
    far = [x.coupling for x in _crosstalk(files) if tm.distance_m(x.pad, x.from_pad) > 1.4]
    assert 0.10 <= min(near) and max(near) <= 0.45
    assert sum(k > tm.COUPLING_MAX for k in near) < 0.05 * len(near)
    assert max(far) <= 0.15


def test_expectations_are_unambiguous_for_the_box_thresholds(files: list) -> None:
    """Slaps peak at 1.2 V or more, touches at 0.4-0.75 V, each clear of the thresholds by
    more than the file's hum, drift and noise can move a reading during the rise; crosstalk
    is never expected to give a hit."""
    for f in files:
        e = f.electrical
        for r in f.rounds:
            for c in r.contacts:
                hand = tm.HANDS[c.hand]
                assert c.expect == hand.expect
                assert hand.rise_us[0] <= c.rise_us <= hand.rise_us[1]
                assert hand.peak_mv[0] <= c.peak_mv <= hand.peak_mv[1]
                d = e.disturbance_mv(c.rise_us)
                if c.expect == "slap":
                    assert c.peak_mv >= 1200 and c.peak_mv - d >= tm.SLAP_THRESHOLD_MV + tm.SLAP_MARGIN_MV
                elif c.expect == "touch":
                    assert c.peak_mv <= 750
                    assert c.peak_mv - d >= tm.TOUCH_THRESHOLD_MV + tm.TOUCH_LOW_MARGIN_MV
                    assert c.peak_mv + d <= tm.SLAP_THRESHOLD_MV - tm.TOUCH_HIGH_MARGIN_MV
                    assert tm.quiet_for_touch(c.pad, c.t_us, c.rise_us, r.crosstalk), "a feint in the shaking"
                assert c.clipped == (c.peak_mv * e.gain_of(c.pad) > e.headroom_mv(c.pol))
    hands = {c.hand for c in _contacts(files)}
    assert hands == {"sharp", "normal", "soft", "touch", "press"}


def test_rounds_are_compressed_tied_and_packed(files: list) -> None:
    """2-8 players a round, within 40 ms (plus a tie or a special case's few ms); most rounds
    have a pair 0.2-5 ms apart; rounds 150 ms apart and inside the file; files under the
    harness's event limit."""
    assert sum(len(f.rounds) for f in files) == ROUNDS
    tied = 0
    cases = set()
    for f in files:
        assert f.events <= tm.MAX_EVENTS_PER_FILE
        assert [r.start_us for r in f.rounds] == [tm.FIRST_ROUND_US + k * tm.ROUND_SPACING_US
                                                   for k in range(len(f.rounds))]
        assert f.duration_us >= f.rounds[-1].start_us + tm.ROUND_SPACING_US
        for r in f.rounds:
            cases.add(r.case)
            assert 2 <= len(r.players) <= 8 and sorted({c.pad for c in r.contacts}) == r.players
            hands = [c for c in r.contacts if c.hand != "touch"]
            times = sorted(c.t_us for c in hands)
            assert r.start_us <= times[0] and times[-1] - times[0] <= tm.SPREAD_US + 6000
            assert max(c.t_us for c in r.contacts) < r.start_us + tm.ROUND_SPACING_US - 40_000
            gaps = [b - a for a, b in zip(times, times[1:])]
            tied += any(200 <= g <= 5000 for g in gaps)
    assert tied >= 0.7 * ROUNDS
    assert {"near_tie", "near_tie_first", "near_tie_last", "shaken_then_slapped", "quiet_first_slapper",
            "eight_within_1ms"} <= cases


def test_special_cases_are_what_they_say(files: list) -> None:
    """Shaken then slapped: the player slaps 0.2-3 ms after the loud neighbour's crosstalk reached
    them; quiet first slapper: a soft slap 0.3-3 ms before a hard neighbour; eight within 1 ms."""
    for f in files:
        for r in f.rounds:
            roles = {c.role: c for c in r.contacts if c.role}
            if r.case == "shaken_then_slapped":
                loud, shaken = roles["loud neighbour"], roles["shaken then slapped"]
                arrival = loud.t_us + f.table.delay_us(loud.pad, shaken.pad)
                assert 200 <= shaken.t_us - arrival <= 3000 and loud.hand == "sharp"
            elif r.case == "quiet_first_slapper":
                quiet, hard = roles["quiet first slapper"], roles["hard neighbour"]
                assert quiet.hand == "soft" and hard.hand == "sharp" and 300 <= hard.t_us - quiet.t_us <= 3000
            elif r.case == "eight_within_1ms":
                times = [c.t_us for c in r.contacts]
                assert len(times) == 8 and max(times) - min(times) <= 1000


def test_deterministic_by_seed() -> None:
    """The same seed gives the same files and truth, byte for byte; another seed does not."""
    a, b, c = (tm.generate(40, seed=s) for s in (11, 11, 12))
    assert [f.text() for f in a] == [f.text() for f in b]
    assert tm.truth_document(a) == tm.truth_document(b)
    assert [f.text() for f in a] != [f.text() for f in c]


@pytest.mark.parametrize("slaps", [1, 3])
def test_a_warm_up_is_each_player_alone_before_the_same_rounds(slaps: int) -> None:
    """With a warm-up every file starts with one hard slap on each pad alone (its shakes on the
    others), ``slaps`` times round, and its rounds are the rounds drawn without it, later by the
    warm-up's length."""
    plain, warm = tm.generate(30, seed=5), tm.generate(30, seed=5, warmup=True, warmup_slaps=slaps)
    shift = slaps * tm.PADS * tm.WARMUP_SPACING_US
    assert len(plain) == len(warm)
    for a, b in zip(plain, warm):
        assert not a.warmup
        assert [r.players for r in b.warmup] == [[p] for _ in range(slaps) for p in range(1, tm.PADS + 1)]
        for k, r in enumerate(b.warmup):
            (c,) = r.contacts
            assert r.case == "warmup" and c.hand == tm.WARMUP_HAND
            assert r.start_us == tm.FIRST_ROUND_US + k * tm.WARMUP_SPACING_US
            assert {x.from_pad for x in r.crosstalk} == {c.pad}
            # over before the next one (and the rounds) begin
            assert max(x.t_us for x in [*r.contacts, *r.crosstalk]) < r.start_us + tm.WARMUP_SPACING_US // 4
        assert b.duration_us == a.duration_us + shift
        assert [(c.pad, c.t_us + shift, c.hand, c.peak_mv) for r in a.rounds for c in r.contacts] == \
               [(c.pad, c.t_us, c.hand, c.peak_mv) for r in b.rounds for c in r.contacts]
        assert b.text().count(": 1 player (pads ") == slaps * tm.PADS  # (rounds have 2 to 8)
        assert len(b.truth()["warmup"]) == slaps * tm.PADS


@pytest.mark.parametrize("slaps", [0, 11])
def test_a_warm_up_of_no_or_too_many_slaps_is_refused(slaps: int) -> None:
    """A warm-up goes round 1 to 10 times; anything else is an error that says so."""
    with pytest.raises(ValueError, match="warmup_slaps must be within 1..10"):
        tm.generate(5, seed=5, warmup=True, warmup_slaps=slaps)


def test_command_line_writes_files_and_truth(tmp_path: Path) -> None:
    """The script writes the scenario files and a truth.json that lists every contact of every round."""
    out = subprocess.run([sys.executable, str(SIM / "table_model.py"), "--rounds", "25", "--seed", "3", "--out",
                          str(tmp_path), "--players", "3-5", "--frontend", "halfwave"],
                         capture_output=True, text=True, check=True).stdout
    assert "25 rounds" in out
    truth = json.loads((tmp_path / "truth.json").read_text())
    rounds = [r for f in truth["files"] for r in f["rounds"]]
    assert len(rounds) == 25 and all(3 <= len(r["players"]) <= 5 for r in rounds)
    for f in truth["files"]:
        scn = simtools.Scenario.load(tmp_path / f["scenario"])
        assert scn.frontend == "halfwave" and scn.duration_us == f["duration_us"]
        contacts = sorted((c["pad"], c["t_us"], c["expect"], c["pol"]) for r in f["rounds"] for c in r["contacts"])
        hits = sorted((e.pad, e.t_us, e.expect, int(e.pol)) for e in scn.events if e.expect != "none")
        assert hits == contacts
        xtalk = sum(len(r["crosstalk"]) for r in f["rounds"])
        assert sum(e.expect == "none" for e in scn.events) == xtalk


def test_fixed_hardest_cases_are_what_the_generator_makes() -> None:
    """firmware/sim/scenarios/model_*.scn are regenerated byte for byte (the generator is the source)."""
    made = {f"{f.name}.scn": f.text() for f in tm.hardest_cases()}
    shipped = {p.name: p.read_text() for p in (SIM / "scenarios").glob("model_*.scn")}
    assert set(shipped) == set(made), "run: python3 firmware/sim/table_model.py --cases"
    for name, text in made.items():
        assert shipped[name] == text, f"{name} is stale: run python3 firmware/sim/table_model.py --cases"


def test_fixed_cases_hold_their_promises() -> None:
    """Each fixed case has what its name says, and the hum case is 10 s with only touches after 8 s."""
    cases = {f.name: f for f in tm.hardest_cases()}
    hum = cases["model_hum_touches"]
    assert hum.duration_us == 10_000_000 and hum.electrical.hum_mv == 350 and hum.electrical.hum_hz == 50
    assert all(c.expect == "touch" and c.t_us >= 8_000_000 for r in hum.rounds for c in r.contacts)
    clipped = cases["model_clipped_neighbour"]
    for r in clipped.rounds:
        (slap,) = r.contacts
        assert slap.clipped and max(x.coupling for x in r.crosstalk) == 0.40
    for r in cases["model_reversed_disc"].rounds:
        first, second = r.contacts
        assert first.pol == -1 and second.pol == 1 and second.t_us - first.t_us == 500
    for r in cases["model_quiet_first_slapper"].rounds:
        quiet, hard = r.contacts
        assert quiet.peak_mv == 1200 and hard.peak_mv == 10000 and hard.clipped and 500 <= hard.t_us - quiet.t_us <= 2000
    for r in cases["model_eight_within_1ms"].rounds:
        assert len(r.contacts) == 8 and {c.pol for c in r.contacts} == {-1, 1}
        assert len({c.hand for c in r.contacts}) == 3


def test_long_tables_play_their_rounds_on_one_table() -> None:
    """``table_rounds``: each table (one file, one table, one set of conditions) plays that many rounds,
    the same kind of rounds as the short tables', within LONG_TABLE_MAX_EVENTS; out of range is refused."""
    files = tm.generate(120, seed=7, table_rounds=60)
    assert [len(f.rounds) for f in files] == [60, 60]  # (~40 events a round: far from the cap)
    assert all(f.events <= tm.LONG_TABLE_MAX_EVENTS for f in files)
    assert files[0].table != files[1].table
    short = tm.generate(120, seed=7)
    assert len(short) > 3 * len(files)
    hands = {c.hand for f in files for r in f.rounds for c in r.contacts}
    assert hands == {c.hand for f in short for r in f.rounds for c in r.contacts}
    for bad in (0, tm.TABLE_ROUNDS_MAX + 1):
        with pytest.raises(ValueError, match="table_rounds"):
            tm.generate(10, seed=1, table_rounds=bad)


C_LOADER = r"""
#include <stdio.h>
#include "scenario.h"
static scenario_t s;
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        scn_init(&s);
        if (scn_load(&s, argv[i]) != 0) return 1;
        printf("file %u %d %s\n", s.duration_us, s.frontend, argv[i]);
        for (int k = 0; k < s.nevents; k++)
            printf("%d %u %.0f %d %.0f %.0f\n", s.ev[k].pad + 1, s.ev[k].t_us, s.ev[k].peak_mv, s.ev[k].expect,
                   s.ev[k].pol, s.ev[k].rise_us);
    }
    return 0;
}
"""


def _with_scenario_c(tmp_path: Path, name: str, source: str) -> Path:
    """``source`` (C, a main over scenario.h) built with firmware/sim/scenario.c by the host's gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run(["gcc", "-std=c99", "-O1", "-I", str(SIM), "-o", str(exe), str(src), str(SIM / "scenario.c"), "-lm"],
                   check=True, capture_output=True)
    return exe


def test_the_c_side_reads_every_file_as_the_truth_says(tmp_path: Path) -> None:
    """scenario.c (the harness's and the host tests' loader) parses the generated and the fixed files,
    every event with the pad, time, peak, expectation, polarity and rise the truth holds."""
    exe = _with_scenario_c(tmp_path, "loader", C_LOADER)
    long_table = tm.generate(90, seed=6, prefix="long", table_rounds=90)[0]  # (thousands of events: SCN_MAX_EVENTS holds them)
    files = tm.generate(30, seed=5) + [long_table] + tm.hardest_cases()
    assert long_table.events > 2000
    paths = []
    for f in files:
        path = tmp_path / f"{f.name}.scn"
        path.write_text(f.text())
        paths.append(path)
    out = subprocess.run([str(exe), *map(str, paths)], capture_output=True, text=True, check=True).stdout
    blocks = out.split("file ")[1:]
    assert len(blocks) == len(files)
    expect_code = {"none": 0, "slap": 1, "touch": 2, "press": 3}
    for f, block in zip(files, blocks):
        head, *rows = block.strip().splitlines()
        assert head.split()[:2] == [str(f.duration_us), "0"]
        want = sorted(
            [(c.pad, c.t_us, c.peak_mv, expect_code[c.expect], c.pol, c.rise_us) for r in f.rounds for c in r.contacts]
            + [(x.pad, x.t_us, x.peak_mv, 0, x.pol, x.rise_us) for r in f.rounds for x in r.crosstalk])
        got = sorted(tuple(int(v) for v in row.split()) for row in rows)
        assert got == want, f.name


def test_python_mirror_renders_the_model_like_scenario_c() -> None:
    """simtools' Event (the tests' truth) follows pol and the swing-back of the ringing, as scenario.c."""
    ev = simtools.Event(1, 1000, "slap", peak_mv=2000, rise_us=500, ring=0.5, hz=1000, tau_us=5000, pol=-1.0)
    assert ev.mv(1500) == pytest.approx(-2000)
    assert ev.mv(1000 + 1000 + 250) == pytest.approx(2000 * 0.5 * math.exp(-250 / 5000))


def test_a_front_end_gain_divides_each_pads_signal_and_keeps_the_rounds() -> None:
    """With a capacitor across each disc (``frontend_gain``, FRONTEND_GAIN 0.7 by default since firmware
    2.22.0) the files hold the same rounds as without one (None), each pad's gain near the nominal
    within its disc's tolerance, and a contact is clipped only where its peak times its pad's gain
    reaches a rail; a gain out of (0, 1] is refused."""
    assert tm.FRONTEND_GAIN == 0.7
    plain, divided = tm.generate(120, seed=7, frontend_gain=None), tm.generate(120, seed=7)
    ratio = 0.3 / 0.7
    lo, hi = (c / (c + ratio) for c in tm.DISC_CAPACITANCE)
    clipped = {True: 0, False: 0}
    for a, b in zip(plain, divided, strict=True):
        assert not a.electrical.gain and not any(line.startswith("gain") for line in a.text().splitlines())
        gains = b.electrical.gain
        assert len(gains) == tm.PADS and all(lo - 0.001 <= g <= hi + 0.001 for g in gains)
        assert f"gain {' '.join(f'{g:.3f}' for g in gains)}" in b.text().splitlines()
        for ra, rb in zip(a.rounds, b.rounds, strict=True):
            for ca, cb in zip(ra.contacts, rb.contacts, strict=True):
                assert (ca.pad, ca.t_us, ca.peak_mv, ca.pol) == (cb.pad, cb.t_us, cb.peak_mv, cb.pol)
                assert cb.clipped == (cb.peak_mv * gains[cb.pad - 1] > b.electrical.headroom_mv(cb.pol))
                clipped[False] += ca.clipped
                clipped[True] += cb.clipped
    assert 0 < clipped[True] < clipped[False]
    halfwave = tm.generate(20, seed=7, frontend="halfwave", frontend_gain=0.7)[0]
    assert not any(line.startswith("gain") for line in halfwave.text().splitlines())  # (the old wiring: no divider)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="frontend_gain"):
            tm.generate(10, seed=7, frontend_gain=bad)


C_RENDER = r"""
#include <stdio.h>
#include "scenario.h"
static scenario_t s;
int main(int argc, char **argv) {
    scn_init(&s);
    if (scn_load(&s, argv[1]) != 0) return 1;
    for (int pad = 0; pad < 2; pad++) printf("%.3f\n", scn_pad_mv(&s, pad, 1500.0) - s.bias_mv);
    return 0;
}
"""


@pytest.mark.parametrize("frontend", ["biased", "halfwave"])
def test_the_c_side_divides_a_pads_signal_and_hum_by_its_gain(frontend: str, tmp_path: Path) -> None:
    """scenario.c renders a ``gain`` line (one value, or one a pad) on the biased input, hum included,
    and the halfwave input (the old wiring) ignores it; a bad gain line is refused."""
    exe = _with_scenario_c(tmp_path, "render", C_RENDER)
    head = f"frontend {frontend}\nbias_mv 2500\nhum_mv 100 50\nhit 1 1000 1000 slap rise=500\nhit 2 1000 1000 slap rise=500\n"

    def render(extra: str) -> list[float]:
        path = tmp_path / "g.scn"
        path.write_text(head + extra)
        out = subprocess.run([str(exe), str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return [float(v) for v in out.stdout.split()]

    bias = 2500.0 if frontend == "biased" else 0.0
    plain = [v + bias for v in render("")] if frontend == "halfwave" else render("")
    assert min(abs(v) for v in plain) > 500  # (the slaps' rise, with hum: something to divide)
    one = render("gain 0.5\n")
    per_pad = render("gain 0.5 0.8 1 1 1 1 1 1\n")
    if frontend == "halfwave":
        assert one == render("") and per_pad == render("")
    else:
        assert one == pytest.approx([v * 0.5 for v in plain], abs=2e-3)  # (printed to a thousandth)
        assert per_pad == pytest.approx([plain[0] * 0.5, plain[1] * 0.8], abs=2e-3)
    for bad in ("gain 0\n", "gain 1.2\n", "gain 0.5 0.5\n", "gain x\n"):
        path = tmp_path / "bad.scn"
        path.write_text(head + bad)
        assert subprocess.run([str(exe), str(path)], capture_output=True, text=True).returncode != 0, bad

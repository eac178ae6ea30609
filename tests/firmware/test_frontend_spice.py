"""The pad box's piezo input circuit, simulated in ngspice (firmware/frontend/).

Each netlist prints ``RESULT <name> <value>`` lines from its .control block;
they are run once per session (about a second in all) and every figure
docs/wiring.md quotes is asserted here, by name. Another test parses the
netlist (firmware/frontend/pad.inc) and the parts table of docs/wiring.md so
the drawing, the table and the simulated circuit cannot drift apart, down to
the capacitor CP across each disc and its value for each disc size.

Needs Debian's ``ngspice``: skipped without it, failed instead under
TABLETOP_REQUIRE_FIRMWARE_TOOLS=1 (CI installs it, see .ci/run).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "firmware" / "frontend"
WIRING = ROOT / "docs" / "wiring.md"
NETLISTS = ["bias", "slap", "hard_slap", "sample_hold"]

#: The ATmega328P's ADC: counts = VIN * 1024 / VREF; at rest the input sits at VCC/2.
MID = 512
#: Firmware defaults (2.22.0, firmware/padbox/detect.h), counts of deviation from rest at the pin:
#: ~290 mV and ~980 mV at the disc times the gain CP gives (0.7); without CP they were 60 and 200.
TOUCH, SLAP = 42, 140
#: The gain CP (0.43 x the disc's capacitance, across the disc) is sized for, and how close each disc's must be.
CP_GAIN, CP_GAIN_TOL = 0.70, 0.03
#: The ATmega328P's absolute maximum rating for a pin: -0.5 V .. VCC + 0.5 V.
ABS_MAX_MARGIN_V = 0.5
#: Disc capacitances simulated (27-35 mm discs), supplies (USB 4.75..5.25 V, minus the Nano's ~0.3 V VBUS diode).
DISCS = ["10n", "20n", "30n"]
HARD_SUPPLIES = ["4.45", "5", "5.25"]
SUPPLIES = ["4.45", "4.7", "4.75", "4.95", "5", "5.25"]


def _require_ngspice() -> str:
    path = shutil.which("ngspice")
    if path:
        return path
    reason = "the pad box front-end simulation needs: ngspice (Debian package ngspice)"
    if os.environ.get("TABLETOP_REQUIRE_FIRMWARE_TOOLS") == "1":
        pytest.fail(reason + " (TABLETOP_REQUIRE_FIRMWARE_TOOLS=1)")
    pytest.skip(reason)


def run_netlist(ngspice: str, name: str) -> dict[str, float]:
    """``ngspice -b firmware/frontend/<name>.cir`` from the repository root, as docs/wiring.md says; its RESULT lines."""
    proc = subprocess.run(
        [ngspice, "-b", f"firmware/frontend/{name}.cir"],
        cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
    )
    out = proc.stdout + proc.stderr
    errors = [line for line in out.splitlines() if re.match(r"\s*(Error|Warning: Missing)", line)]
    assert proc.returncode == 0 and not errors, f"ngspice {name}.cir failed (rc {proc.returncode}):\n" + "\n".join(errors or [out[-2000:]])
    results: dict[str, float] = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            parts = line.split()
            assert len(parts) == 3, f"{name}.cir printed a RESULT line without a value: {line!r}"
            results[parts[1]] = float(parts[2])
    assert results, f"{name}.cir printed no RESULT lines"
    return results


@pytest.fixture(scope="session")
def sim() -> dict[str, float]:
    """Every netlist's RESULT figures, one ngspice run each."""
    ngspice = _require_ngspice()
    results: dict[str, float] = {}
    for name in NETLISTS:
        results.update(run_netlist(ngspice, name))
    return results


# --- 1. the absolute maximum pin voltage under a very hard slap ------------------------------


def _hard_runs() -> Iterator[tuple[str, float, str, str]]:
    for vs in HARD_SUPPLIES:
        for c in DISCS:
            for pol in ("pos", "neg"):
                yield f"hard_{vs}_{c}_{pol}", float(vs), c, pol


def test_hard_slap_keeps_the_pin_inside_its_absolute_maximum(sim: dict[str, float]) -> None:
    """A 60 V slap, both polarities, every disc and supply: the pin stays within -0.5 V .. VCC+0.5 V."""
    for tag, vcc, c, pol in _hard_runs():
        hi, lo = sim[f"{tag}_pin_max_v"], sim[f"{tag}_pin_min_v"]
        assert sim[f"{tag}_margin_high_v"] > 0.05, (
            f"pin maximum {hi:.3f} V on a 60 V {pol} slap ({c} disc, VCC {vcc} V): "
            f"over VCC+0.5 = {vcc + ABS_MAX_MARGIN_V:.2f} V or within 50 mV of it")
        assert sim[f"{tag}_margin_low_v"] > 0.05, (
            f"pin minimum {lo:.3f} V on a 60 V {pol} slap ({c} disc, VCC {vcc} V): below -0.5 V or within 50 mV of it")
        # The clamps really clamp: the slap does drive the pin to both rails (the ringing swings back).
        assert hi > vcc and lo < 0, f"{tag}: the 60 V slap never reached the clamps (pin {lo:.2f}..{hi:.2f} V)"


def test_hard_slap_clamp_current_is_a_few_milliamps(sim: dict[str, float]) -> None:
    """The Schottky clamps carry a few mA at most; the chip's own ESD diodes next to nothing."""
    for tag, vcc, c, pol in _hard_runs():
        for d in ("d1", "d2"):
            ma = sim[f"{tag}_{d}_max_ma"]
            assert 0.5 < ma <= 5.0, f"{d.upper()} peak current {ma:.2f} mA on a 60 V {pol} slap ({c} disc, VCC {vcc} V): expected a few mA (<= 5)"
        for side in ("high", "low"):
            ua = sim[f"{tag}_esd_{side}_max_ua"]
            assert ua < 10, f"the ATmega's own ESD diode ({side}) carries {ua:.1f} uA on {tag}: the Schottky clamps should take the current"


def test_cp_lowers_the_clamp_current_on_a_hard_slap(sim: dict[str, float]) -> None:
    """CP divides the slap before RS: the hard slap's clamp current falls against the same circuit without CP."""
    for c in DISCS:
        with_cp = sim[f"hard_5_{c}_pos_d1_max_ma"]
        without = sim[f"whatif_nocp_{c}_d1_max_ma"]
        assert with_cp < 0.85 * without, f"{c} disc, 60 V slap at 5 V: D1 peak {with_cp:.2f} mA with CP, {without:.2f} mA without: CP should lower it"
        assert sim[f"hard_5_{c}_pos_in_max_v"] < 0.85 * sim[f"whatif_nocp_{c}_in_max_v"], f"{c} disc: IN peaks as high with CP as without"


# --- 2. the rest point and its tolerance -------------------------------------------------------


def test_rest_point_is_mid_scale(sim: dict[str, float]) -> None:
    assert sim["bias_v"] == pytest.approx(2.5, abs=0.005), f"rest point {sim['bias_v']:.4f} V, expected 2.50 V"
    assert sim["bias_counts"] == pytest.approx(MID, abs=1), f"rest point {sim['bias_counts']:.1f} counts, expected 512"


@pytest.mark.parametrize("tol, limit", [(1, 6), (5, 27)])
def test_rest_point_tolerance_with_resistor_tolerance(sim: dict[str, float], tol: int, limit: float) -> None:
    """Worst case (one divider resistor high, the other low): 512 +- 5.12 counts at 1 %, +- 25.6 at 5 %."""
    low, high = sim[f"bias_counts_low_{tol}pct"], sim[f"bias_counts_high_{tol}pct"]
    expect = MID * tol / 100
    assert MID - low == pytest.approx(expect, abs=0.5), f"rest point with {tol} % resistors, low corner: {low:.2f} counts"
    assert high - MID == pytest.approx(expect, abs=0.5), f"rest point with {tol} % resistors, high corner: {high:.2f} counts"
    assert max(MID - low, high - MID) <= limit, f"rest point with {tol} % resistors moves {max(MID - low, high - MID):.1f} counts (limit {limit})"


def test_rest_point_is_ratiometric(sim: dict[str, float]) -> None:
    """The bias and the ADC reference share the 5V rail: 512 counts at any supply."""
    for vs in ("4.45", "4.75", "4.95", "5.25"):
        assert sim[f"bias_counts_vcc{vs}"] == pytest.approx(MID, abs=1), f"rest point at VCC {vs} V: {sim[f'bias_counts_vcc{vs}']:.1f} counts"


def test_rest_point_with_the_datasheet_maximum_pin_leakage(sim: dict[str, float]) -> None:
    """1 uA (the datasheet's maximum input leakage) through the 505 k the pin sees moves the rest point ~0.5 V: still room either side."""
    for il, sign in (("1u", -1), ("-1u", 1)):
        shift = sim[f"bias_counts_leak{il}"] - MID
        assert sign * shift == pytest.approx(1e-6 * 510e3 / 5 * 1024, rel=0.05), f"rest point with {il}A pin leakage moves {shift:.1f} counts"
        assert abs(shift) < 150, f"rest point with {il}A pin leakage moves {shift:.1f} counts: too little room left for a slap"


# --- 3. the waveform the ADC sees for a 1 V slap -----------------------------------------------


@pytest.mark.parametrize("c", DISCS)
def test_slap_swings_around_the_rest_point_following_the_disc_polarity(sim: dict[str, float], c: str) -> None:
    pos, neg = f"slap_{c}_pos", f"slap_{c}_neg"
    for tag in (pos, neg):
        assert sim[f"{tag}_rest_counts"] == pytest.approx(MID, abs=1), f"{tag}: rest {sim[f'{tag}_rest_counts']:.1f} counts before the slap"
        # the first 20 mV excursion is in the disc's direction; the other way only after the half-wave (~1.4 ms)
        assert sim[f"{tag}_opposite_after_us"] > 1000, f"{tag}: the pin went the other way {sim[f'{tag}_opposite_after_us']:.0f} us after the onset"
        # the pin sees the divider's C/(C+CP) of the disc; the high-pass trims a single half-wave by a few % more at most
        divider = sim[f"slap_{c}_divider_gain"]
        assert 0.93 <= sim[f"{tag}_peak_ratio"] / divider <= 1.0, (
            f"{tag}: first half-wave at the pin is {sim[f'{tag}_peak_ratio']:.3f} of the disc's, the divider alone gives {divider:.3f}")
        assert sim[f"{tag}_tail10ms_counts"] == pytest.approx(0, abs=10), f"{tag}: {sim[f'{tag}_tail10ms_counts']:.1f} counts left 10 ms after the onset"
    # first half-wave follows the polarity: up for a disc wired red-to-IN, down for one reversed
    # a 1 V slap at 0.7: ~140 counts, about the slap threshold (140 counts, ~980 mV at the disc)
    assert sim[f"{pos}_first_max_counts"] > 0.9 * SLAP, f"{pos}: first half-wave peak +{sim[f'{pos}_first_max_counts']:.1f} counts"
    assert sim[f"{neg}_first_min_counts"] < -0.9 * SLAP, f"{neg}: first half-wave peak {sim[f'{neg}_first_min_counts']:.1f} counts"
    # both half-waves are seen: the ringing swings below rest by as much as the disc's (0.5 V -> ~100 counts, x 0.7)
    assert sim[f"{pos}_ring_min_counts"] < -90 * CP_GAIN, f"{pos}: ringing reaches only {sim[f'{pos}_ring_min_counts']:.1f} counts below rest"
    assert sim[f"{neg}_ring_max_counts"] > 90 * CP_GAIN, f"{neg}: ringing reaches only {sim[f'{neg}_ring_max_counts']:.1f} counts above rest"
    # symmetric: the reversed disc is the exact mirror image around the rest point
    for a, b in (("first_max", "first_min"), ("first_min", "first_max"), ("ring_max", "ring_min")):
        assert sim[f"{pos}_{a}_counts"] == pytest.approx(-sim[f"{neg}_{b}_counts"], abs=0.5), (
            f"{c} disc: {a} {sim[f'{pos}_{a}_counts']:.2f} counts (disc one way) vs {b} {sim[f'{neg}_{b}_counts']:.2f} (reversed): not symmetric")


@pytest.mark.parametrize("c", DISCS)
def test_slap_reaches_the_pin_without_delay(sim: dict[str, float], c: str) -> None:
    """The pin first deviates 0.7 x 20 mV within a microsecond of the disc's 20 mV; the touch threshold (at the
    disc: 42 counts / 0.7) within a few (a scan is ~124 us)."""
    for pol in ("pos", "neg"):
        tag = f"slap_{c}_{pol}"
        assert abs(sim[f"{tag}_delay20_us"]) < 1.0, f"{tag}: onset delay at 20 mV {sim[f'{tag}_delay20_us']:.2f} us"
        assert abs(sim[f"{tag}_delay_touch_us"]) < 10.0, f"{tag}: onset delay at the touch threshold {sim[f'{tag}_delay_touch_us']:.2f} us"


def doc_cp_values() -> dict[float, float]:
    """docs/wiring.md's CP row: the disc's capacitance -> the CP it names for it (farads), from '4.7 nF for a 10 nF disc'."""
    rows = [line for line in doc_section_1().splitlines() if line.startswith("| CP")]
    assert len(rows) == 1, "docs/wiring.md section 1: no single parts-table row for CP"
    pairs = re.findall(r"([\d.]+) nF for (?:a )?([\d.]+) nF", rows[0])
    assert pairs, f"docs/wiring.md CP row names no 'X nF for a Y nF disc' values: {rows[0]!r}"
    return {float(disc) * 1e-9: float(cp) * 1e-9 for cp, disc in pairs}


def netlist_cp_values() -> dict[float, float]:
    """pad.inc's '.csparam cp_20n=8.2n' lines: the disc's capacitance -> the CP the .cir files fit with it."""
    found = re.findall(r"^\.csparam\s+cp_(\w+)\s*=\s*(\S+)", (FRONTEND / "pad.inc").read_text(), re.MULTILINE)
    values = {}
    for disc_text, cp_text in found:
        disc, cp = spice_value(disc_text), spice_value(cp_text)
        assert isinstance(disc, float) and isinstance(cp, float), f"pad.inc: unreadable value cp_{disc_text}={cp_text}"
        values[disc] = cp
    return values


@pytest.mark.parametrize("c", DISCS)
def test_cp_divides_the_slap_by_its_gain(sim: dict[str, float], c: str) -> None:
    """With the CP docs/wiring.md names for this disc, the pin sees 0.70 +- 0.03 of what the same circuit without CP
    passes (the first half-wave's peak), and the divider C/(C+CP) is that too."""
    disc = spice_value(c)
    named = doc_cp_values()
    assert disc in named, f"docs/wiring.md's CP row names no CP for a {c} disc"
    assert sim[f"slap_{c}_cp_nf"] * 1e-9 == pytest.approx(named[disc]), (
        f"slap.cir fits {sim[f'slap_{c}_cp_nf']:g} nF with a {c} disc, docs/wiring.md says {named[disc] * 1e9:g} nF")
    assert named[disc] == pytest.approx(0.43 * disc, rel=0.1), f"docs/wiring.md's CP for a {c} disc is not ~0.43 x its capacitance"
    assert sim[f"slap_{c}_divider_gain"] == pytest.approx(CP_GAIN, abs=CP_GAIN_TOL), f"{c} disc: C/(C+CP) = {sim[f'slap_{c}_divider_gain']:.3f}"
    for pol in ("pos", "neg"):
        tag = f"slap_{c}_{pol}"
        gain = sim[f"{tag}_gain_vs_nocp"]
        assert gain == pytest.approx(CP_GAIN, abs=CP_GAIN_TOL), f"{tag}: the pin sees {gain:.3f} of the slap without CP, expected {CP_GAIN} +- {CP_GAIN_TOL}"
        assert sim[f"{tag}_peak_ratio_nocp"] >= 0.9, f"{tag}: without CP the pin saw only {sim[f'{tag}_peak_ratio_nocp']:.3f} of the disc"


@pytest.mark.parametrize("c", DISCS)
def test_cp_adds_little_onset_delay(sim: dict[str, float], c: str) -> None:
    """A divider, not a filter: the pin crosses the touch threshold (42 counts) within a few us of when, without CP,
    it crossed 2.21.0's (60 counts, the same slap strength at the disc)."""
    for pol in ("pos", "neg"):
        tag = f"slap_{c}_{pol}"
        added = sim[f"{tag}_added_delay_touch_us"]
        assert abs(added) < 10.0, f"{tag}: CP moves the touch-threshold crossing by {added:.2f} us"


def test_a_capacitor_at_the_pin_would_delay_the_onset(sim: dict[str, float]) -> None:
    """Why none is fitted: 10 nF at the pin (with RS 10 k) delays the touch crossing by more than a scan period."""
    assert sim["whatif_pincap10n_delay_touch_us"] > 100, f"10 nF at the pin: touch-threshold delay {sim['whatif_pincap10n_delay_touch_us']:.0f} us"


@pytest.mark.parametrize("c", DISCS)
def test_corner_frequency_passes_slaps_and_hum(sim: dict[str, float], c: str) -> None:
    """High-pass of the disc's capacitance plus CP and the divider (1M || 1M): 1/(2 pi 500k (C + CP));
    the gains relative to the capacitive divider's C/(C+CP)."""
    cap = spice_value(c)
    assert isinstance(cap, float)
    cp = sim[f"slap_{c}_cp_nf"] * 1e-9
    fc = sim[f"ac_{c}_corner_hz"]
    assert fc == pytest.approx(1 / (2 * math.pi * 500e3 * (cap + cp)), rel=0.03), f"corner frequency with a {c} disc and CP: {fc:.1f} Hz"
    assert sim[f"ac_{c}_rel_gain_357hz"] > 0.99, f"gain at a slap's 357 Hz with a {c} disc: {sim[f'ac_{c}_rel_gain_357hz']:.3f} of the divider's"
    assert sim[f"ac_{c}_rel_gain_1500hz"] > 0.99, f"gain at the 1.5 kHz ringing with a {c} disc: {sim[f'ac_{c}_rel_gain_1500hz']:.3f} of the divider's"
    assert sim[f"ac_{c}_rel_gain_50hz"] > 0.9, f"gain at 50 Hz with a {c} disc: {sim[f'ac_{c}_rel_gain_50hz']:.3f} of the divider's (hum passes; the thresholds reject it)"
    assert sim[f"ac_{c}_gain_50hz"] == pytest.approx(sim[f"ac_{c}_rel_gain_50hz"] * cap / (cap + cp), rel=0.001)


# --- 4. the supply -------------------------------------------------------------------------------


def test_supply_keeps_rest_mid_scale_and_scales_a_slap(sim: dict[str, float]) -> None:
    """Ratiometric rest point; a slap of X volts reads X * 1024 / VCC counts."""
    ref = sim["supply_5_slap1v_counts"] * 5.0
    for vs in SUPPLIES:
        assert sim[f"supply_{vs}_rest_counts"] == pytest.approx(MID, abs=1), f"rest point at VCC {vs} V: {sim[f'supply_{vs}_rest_counts']:.1f} counts"
        got = sim[f"supply_{vs}_slap1v_counts"]
        assert got == pytest.approx(ref / float(vs), rel=0.005), f"a 1 V slap at VCC {vs} V reads {got:.1f} counts, expected {ref / float(vs):.1f} (1024/VCC)"


# --- the sample-and-hold ----------------------------------------------------------------------------


def test_sample_and_hold_settles_through_the_series_resistor(sim: dict[str, float]) -> None:
    for c in DISCS:
        err = sim[f"sh_{c}_error_counts"]
        assert abs(err) < 10, f"sample-and-hold error after switching from a channel 2.5 V away ({c} disc): {err:.1f} counts"
    assert abs(sim["sh_unused_100n_error_counts"]) < 10, f"unused input with 100 nF: {sim['sh_unused_100n_error_counts']:.1f} counts"
    # why docs/wiring.md asks for the 100 nF on an unused input: without it the previous channel leaks in
    assert abs(sim["sh_unused_1f_error_counts"]) > TOUCH, f"unused input with the divider only: {sim['sh_unused_1f_error_counts']:.1f} counts"


# --- the netlist and docs/wiring.md describe the same circuit ------------------------------------

#: docs/wiring.md's names for the netlist's nodes.
DOC_NODES = {"5V": "vcc", "IN": "in", "pin": "pin", "GND": "0"}
SPICE_SUFFIX = {"f": 1e-15, "p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "meg": 1e6, "g": 1e9}
DOC_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}


def spice_value(text: str) -> float | str:
    m = re.fullmatch(r"([\d.]+(?:e[-+]?\d+)?)(meg|[fpnumkg])?\w*", text, re.IGNORECASE)
    if not m:
        return text.upper()  # a model name
    return float(m.group(1)) * SPICE_SUFFIX.get((m.group(2) or "").lower(), 1.0)


def doc_value(text: str) -> float | str:
    m = re.match(r"\s*([\d.]+)\s*([kMG]?)Ω", text)
    if m:
        return float(m.group(1)) * DOC_PREFIX[m.group(2)]
    m = re.match(r"\s*([A-Z]+\d+)", text)
    assert m, f"docs/wiring.md parts table: cannot read a value from {text!r}"
    return m.group(1).upper()


def netlist_parts() -> dict[str, tuple[tuple[str, str], float | str]]:
    """pad.inc's R, C and D elements: designator -> ((node, node), value or model)."""
    parts = {}
    for line in (FRONTEND / "pad.inc").read_text().splitlines():
        m = re.match(r"([RCD]\w*)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if m:
            parts[m.group(1).upper()] = ((m.group(2), m.group(3)), spice_value(m.group(4)))
    return parts


def doc_section_1() -> str:
    text = WIRING.read_text()
    start, end = text.index("## 1. "), text.index("## 2. ")
    return text[start:end]


def netlist_disc() -> float:
    """The disc every .cir file starts with (``CDISC src in 20n``): pad.inc's CP is the one for it."""
    discs = set()
    for cir in sorted(FRONTEND.glob("*.cir")):
        m = re.search(r"^CDISC\s+\S+\s+\S+\s+(\S+)", cir.read_text(), re.MULTILINE | re.IGNORECASE)
        assert m, f"{cir.name}: no CDISC line"
        discs.add(spice_value(m.group(1)))
    assert len(discs) == 1, f"the .cir files start with different discs: {discs}"
    disc = discs.pop()
    assert isinstance(disc, float)
    return disc


def doc_parts() -> dict[str, tuple[tuple[str, str], float | str]]:
    """docs/wiring.md section 1's parts table: | R1, ... | 5V – IN | 1 MΩ ... | why |; CP's value is the one it
    names for the disc the netlists start with."""
    parts: dict[str, tuple[tuple[str, str], float | str]] = {}
    for line in doc_section_1().splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"([RCD][A-Z0-9]*)\b", cells[0]) if len(cells) >= 4 else None
        if not m:
            continue
        ends = [e.strip() for e in re.split(r"\s+[–-]\s+", cells[1])]
        assert len(ends) == 2, f"docs/wiring.md: {cells[0]!r} 'between' cell {cells[1]!r} is not 'A – B'"
        nodes = (DOC_NODES[ends[0].split()[0]], DOC_NODES[ends[1].split()[0]])
        if m.group(1).startswith("C"):
            named = doc_cp_values()
            disc = netlist_disc()
            assert disc in named, f"docs/wiring.md's {m.group(1)} row names no value for the netlists' {disc * 1e9:g} nF disc"
            parts[m.group(1)] = (nodes, named[disc])
        else:
            parts[m.group(1)] = (nodes, doc_value(cells[2]))
    return parts


def test_netlist_and_wiring_doc_have_the_same_parts() -> None:
    net, doc = netlist_parts(), doc_parts()
    assert net, "no R/D elements found in firmware/frontend/pad.inc"
    assert sorted(doc) == sorted(net), f"parts in docs/wiring.md {sorted(doc)} vs in pad.inc {sorted(net)}"
    for ref, (nodes, value) in net.items():
        dnodes, dvalue = doc[ref]
        if ref.startswith("D"):
            assert dnodes == nodes, f"{ref}: docs/wiring.md has anode-cathode {dnodes}, pad.inc {nodes}"
        else:
            assert sorted(dnodes) == sorted(nodes), f"{ref}: docs/wiring.md connects {dnodes}, pad.inc {nodes}"
        if isinstance(value, float):
            assert dvalue == pytest.approx(value), f"{ref}: docs/wiring.md says {dvalue:g}, pad.inc {value:g}"
        else:
            assert dvalue == value, f"{ref}: docs/wiring.md says {dvalue}, pad.inc {value}"


def test_netlist_fits_the_cp_wiring_doc_names_for_each_disc() -> None:
    """pad.inc's cp_<disc> table (what the .cir files fit with each disc) is docs/wiring.md's CP row, disc for disc."""
    net, doc = netlist_cp_values(), doc_cp_values()
    assert sorted(net) == sorted(doc), f"CP for discs {sorted(doc)} in docs/wiring.md, {sorted(net)} in pad.inc"
    for disc, cp in net.items():
        assert doc[disc] == pytest.approx(cp), f"{disc * 1e9:g} nF disc: docs/wiring.md says CP {doc[disc] * 1e9:g} nF, pad.inc {cp * 1e9:g} nF"
    assert sorted(net) == sorted(spice_value(c) for c in DISCS), f"pad.inc has CP values for {sorted(net)}, the netlists run {DISCS}"


def test_wiring_drawing_shows_the_netlist_values() -> None:
    """The ASCII drawing labels each part with the netlist's value (R1 1M, RS 10k, D1 BAT85...)."""
    section = doc_section_1()
    drawing = section[section.index("```"):section.index("```", section.index("```") + 3)]
    short = {1e-12: "p", 1e-9: "n", 1e-6: "u", 1e3: "k", 1e6: "M"}
    for ref, (_, value) in netlist_parts().items():
        if isinstance(value, float):
            scale = max(s for s in short if value >= s)
            label = f"{ref} {value / scale:g}{short[scale]}"
        else:
            label = f"{ref} {value}"
        assert label in drawing, f"the drawing in docs/wiring.md does not show {label!r} (the netlist's value)"


def doc_figures() -> dict[str, list[float]]:
    """docs/wiring.md section 1's simulated-figures table: row label -> the numbers in its 'simulated' cell."""
    rows = {}
    for line in doc_section_1().splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("figure", "---"):
            rows[cells[0]] = [float(x) for x in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", cells[1].replace("VCC+", ""))]
    return rows


def test_wiring_doc_quotes_the_simulated_figures(sim: dict[str, float]) -> None:
    """The figures table in docs/wiring.md is what the netlists give (as rounded there)."""
    rows = doc_figures()

    def row(label: str) -> list[float]:
        found = [v for k, v in rows.items() if k.startswith(label)]
        assert len(found) == 1, f"docs/wiring.md figures table: no single row starting {label!r}"
        return found[0]

    hard = list(_hard_runs())
    margin = min(min(sim[f"{t}_margin_high_v"], sim[f"{t}_margin_low_v"]) for t, *_ in hard)
    current = max(max(sim[f"{t}_d1_max_ma"], sim[f"{t}_d2_max_ma"]) for t, *_ in hard)
    low = min(sim[f"{t}_pin_min_v"] for t, *_ in hard)
    over = max(ABS_MAX_MARGIN_V - sim[f"{t}_margin_high_v"] for t, *_ in hard)
    delays = [sim[f"slap_{c}_{p}_delay20_us"] for c in DISCS for p in ("pos", "neg")]
    touch_delays = [sim[f"slap_{c}_{p}_delay_touch_us"] for c in DISCS for p in ("pos", "neg")]
    added = [sim[f"slap_{c}_{p}_added_delay_touch_us"] for c in DISCS for p in ("pos", "neg")]
    ratios = [sim[f"slap_{c}_pos_peak_ratio"] * 100 for c in DISCS]
    nocp_current = max(sim[f"whatif_nocp_{c}_d1_max_ma"] for c in DISCS)
    runs_10n = [max(sim[f"{t}_d1_max_ma"], sim[f"{t}_d2_max_ma"]) for t, _, c, _ in hard if c == "10n"]
    current_10n = [min(runs_10n), max(runs_10n), sim["whatif_nocp_10n_d1_max_ma"]]
    in_range = [min(sim[f"{t}_in_min_v"] for t, *_ in hard), max(sim[f"{t}_in_max_v"] for t, *_ in hard)]
    checks = [
        ("rest point, 1 % resistors", row("rest point, 1 %")[:2], [sim["bias_counts_low_1pct"], sim["bias_counts_high_1pct"]], 0.05),
        ("rest point, 5 % resistors", row("rest point, 5 %")[:2], [sim["bias_counts_low_5pct"], sim["bias_counts_high_5pct"]], 0.05),
        ("60 V slap: pin range (minimum, above VCC)", row("60 V slap")[:2], [low, over], 0.0005),
        ("clamp margin", row("clamp margin")[:1], [margin], 0.0005),
        ("clamp diode current", row("clamp diode current")[:1], [current], 0.05),
        ("clamp diode current without CP", row("clamp diode current")[1:2], [nocp_current], 0.05),
        ("clamp diode current, 10 nF disc, with and without CP", row("clamp diode current")[3:6], current_10n, 0.05),
        ("IN during the 60 V slap", row("IN during the 60 V slap")[:2], in_range, 0.5),
        ("onset delay at 20 mV", row("1 V slap (0.7 ms rise): onset delay")[:2], [min(delays), max(delays)], 0.006),
        ("onset delay at the touch threshold", row("1 V slap: onset delay, pin at the touch")[:2], [min(touch_delays), max(touch_delays)], 0.05),
        ("onset CP adds", row("1 V slap: the onset CP adds")[:2], [min(added), max(added)], 0.05),
        ("first half-wave at the pin, %", row("1 V slap: first half-wave at the pin")[:2], [min(ratios), max(ratios)], 0.5),
        ("CP's gain", row("1 V slap: CP's gain")[:3], [sim[f"slap_{c}_pos_gain_vs_nocp"] for c in DISCS], 0.005),
        ("high-pass corners", row("high-pass corner")[:3], [sim[f"ac_{c}_corner_hz"] for c in ("30n", "20n", "10n")], 0.05),
        ("gain at 50 Hz", row("gain at 50 Hz")[:6], [sim[f"ac_{c}_gain_50hz"] for c in ("30n", "20n", "10n")]
         + [sim[f"ac_{c}_rel_gain_50hz"] for c in ("30n", "20n", "10n")], 0.005),
        ("sample-and-hold error", row("sample-and-hold error")[:2],
         [min(abs(sim[f"sh_{c}_error_counts"]) for c in DISCS), max(abs(sim[f"sh_{c}_error_counts"]) for c in DISCS)], 0.05),
        ("10 nF pin capacitor what-if", row("what-if, not fitted: 10 nF")[-1:], [sim["whatif_pincap10n_delay_touch_us"]], 0.5),
        ("unused input", row("unused input")[:2], [abs(sim["sh_unused_1f_error_counts"]), abs(sim["sh_unused_100n_error_counts"])], 0.5),
    ]
    for name, quoted, simulated, tol in checks:
        assert len(quoted) == len(simulated) and all(abs(q - s) <= tol for q, s in zip(quoted, simulated)), (
            f"docs/wiring.md quotes {name} as {quoted}, the simulation gives {[round(s, 4) for s in simulated]}")

"""firmware/experiments/falses.py: the host core's false slaps, and with --why the rule that let each out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.firmware import ROOT, load_script, simtools

SCENARIOS = ROOT / "firmware" / "sim" / "scenarios"
falses = load_script("firmware/experiments/falses.py", "padbox_falses")


def test_the_rule_is_the_last_word_of_the_decisions_own_look() -> None:
    """The look's lines are those after the decision's XC lines (an earlier look of the same pad, at a
    restart, does not count), and a decision with no look names no source."""
    trace = [
        "   pad 2 vs source 5: gap 300, mine 90 (clipped 0), src 400 (clipped 0)",  # (a restart's look)
        "pad 2 start at 1200 e 40 back 0 onset 1200 (state was 1, ref 0 nf 4)",
        "XC pad 2 onset 1100 peak 150 lobe 520 clip 0 rails 0 under 0 flags 43 gap 700 | src 5 onset 400 ...",
        "   pad 2 vs source -: not sharp (lobe 520 gap 148 sharp 480)",
        "pad 2 decide at 3600 onset 1100 peak 150 lobe 520 clipped 0 above 8 clean 1 under 0 -> report 256",
        "XC pad 3 onset 5000 peak 160 lobe 300 clip 0 rails 0 under 0 flags 43 gap 600 | src 1 onset 4400 ...",
        "   pad 3 vs source 1: pair early (gap 600, learnt delay 928)",
        "pad 3 decide at 7500 onset 5000 peak 160 lobe 300 clipped 0 above 8 clean 1 under 0 -> report 256",
        "pad 4 decide at 9500 onset 7000 peak 150 lobe 300 clipped 0 above 8 clean 1 under 0 -> report 256",
        "   pad 6 vs source 1: bound rule (gap 120)",
        "pad 6 decide at 9900 onset 7400 peak 150 lobe 300 clipped 0 above 8 clean 1 under 0 -> report 256",
        "   pad 7 vs source 2: gap 900, mine 300 (clipped 0), src 350 (clipped 0)",
        "pad 7 decide at 9990 onset 7490 peak 300 lobe 300 clipped 0 above 8 clean 1 under 0 -> report 256",
    ]
    assert falses.why_reported(trace, 2, 1100) == "not sharp"
    assert falses.why_reported(trace, 3, 5000) == "pair early"
    assert falses.why_reported(trace, 4, 7000) == "no source"
    assert falses.why_reported(trace, 6, 7400) == "bound"
    assert falses.why_reported(trace, 7, 7490) == "sizes"
    assert falses.why_reported(trace, 2, 9999) == "?"


def test_a_report_dated_apart_from_its_rules_onset_finds_its_decision() -> None:
    """Steps 37 and 38 report a contact up to ~160 us from the onset its decision prints: the decision
    nearest the reported onset, within REPORT_SHIFT_US, is the one whose look is read."""
    trace = [
        "   pad 2 vs source -: not sharp (lobe 520 gap 148 sharp 480)",
        "pad 2 decide at 3600 onset 1100 peak 150 lobe 520 clipped 0 above 8 clean 1 under 0 -> report 256",
        "   pad 2 vs source 1: late (gap 1900, delay at most 1100)",
        "pad 2 decide at 3900 onset 1400 peak 150 lobe 520 clipped 0 above 8 clean 1 under 0 -> report 256",
    ]
    assert falses.why_reported(trace, 2, 1100 - 80) == "not sharp"
    assert falses.why_reported(trace, 2, 1400 - 120) == "late"  # (nearer 1400 than 1100)
    assert falses.why_reported(trace, 2, 1100 - falses.REPORT_SHIFT_US) == "not sharp"
    assert falses.why_reported(trace, 2, 1100 - falses.REPORT_SHIFT_US - 1) == "?"


def test_every_false_slap_gets_a_rule_and_the_counts_add_up(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """On the model's clipped_neighbour case the host's core makes a false slap at 148 us a scan; --why
    names the rule behind every false slap it lists, and the counts by rule sum to the false slaps."""
    hostrun = simtools.build_hostrun(tmp_path / "build")
    debug = simtools.build_hostrun(tmp_path / "debug", ["HOSTCC=gcc -DDETECT_DEBUG"])
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(SCENARIOS / "model_clipped_neighbour.scn", files / "table_000.scn")
    assert falses.main(["--why", str(debug), str(hostrun), str(files)]) == 0
    out = capsys.readouterr().out.splitlines()
    total = int(next(line for line in out if line.startswith("false slaps ")).split()[2])
    listed = [line for line in out if line.startswith("table_")]
    assert total == len(listed) >= 1
    names = {name for _, name in falses.WHY} | {"sizes", "no source"}
    rules = [line.split("[", 1)[1].split("]", 1)[0] for line in listed]
    assert all(rule.split()[0] in names for rule in rules), rules
    counts = out[out.index(next(line for line in out if line.startswith("false slaps "))) + 1:]
    assert sum(int(line.split()[0]) for line in counts) == total


def test_a_missing_debug_core_says_how_to_make_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "table_000.scn").write_text((SCENARIOS / "model_reversed_disc.scn").read_text())
    (tmp_path / "hostrun").write_text("")
    assert falses.main(["--why", str(tmp_path / "nothing"), str(tmp_path / "hostrun"), str(tmp_path)]) == 2
    assert "-DDETECT_DEBUG" in capsys.readouterr().err

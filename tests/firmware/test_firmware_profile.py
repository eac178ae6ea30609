"""firmware/sim/profile.py: the harness's per-address cycles summed by function of the image."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from helpers.firmware import ROOT, firmware  # noqa: F401
from helpers.firmware import load_script, simtools

SCENARIOS = ROOT / "firmware" / "sim" / "scenarios"
profile = load_script("firmware/sim/profile.py", "padbox_profile")


def test_each_address_counts_for_the_symbol_at_or_before_it() -> None:
    starts, names = [0x100, 0x180, 0x400], ["loop", "isr", "detect"]
    cycles = Counter({0x0FE: 7, 0x100: 3, 0x17E: 2, 0x180: 5, 0x3FE: 1, 0x400: 11, 0x900: 4})
    assert profile.by_function(cycles, starts, names) == Counter({"?": 7, "loop": 5, "isr": 6, "detect": 15})


def test_a_run_of_the_image_is_summed_by_its_functions(firmware: simtools.Build,  # noqa: F811
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert profile.main(["--all", "--harness", str(firmware.harness), str(firmware.elf),
                         str(SCENARIOS / "two_players.scn")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("cycles: ") and "(the whole runs)" in lines[0]
    whole = int(lines[0].split()[1])
    rows = {line.split(None, 3)[3]: int(line.split()[2]) for line in lines[1:]}
    # The scan loop and the sampling interrupt are where a quiet table's cycles go.
    assert any(name.startswith("scan_loop") for name in rows)
    assert "__vector_7" in rows  # TIMER2_COMPA: the sampler
    assert sum(rows.values()) <= whole and sum(rows.values()) > whole * 0.95


def test_the_top_of_ram_is_not_taken_for_a_function(firmware: simtools.Build) -> None:  # noqa: F811
    # __stack (0x8ff) is a weak symbol among the code's addresses: taken as code, the cycles of the end of
    # the function spanning 0x8ff (2.33.0's scan loop) went to it.
    starts, names = profile.functions(str(firmware.elf))
    assert "__stack" not in names
    assert starts == sorted(starts) and any(name.startswith("scan_loop") for name in names)


def test_a_missing_harness_says_how_to_build_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert profile.main(["--harness", str(tmp_path / "harness"), "padbox.elf", "x.scn"]) == 2
    assert "make -C firmware harness" in capsys.readouterr().err

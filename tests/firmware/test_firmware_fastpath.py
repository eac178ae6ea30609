"""The detection core's fast paths in assembly against their C versions, on the AVR.

On the AVR, detect_sample_fast and detect_sample_ringing (the paths of every
quiet and every ringing sample) are written in assembly; the host, the bench's
--host runs and the assembly's own rare cases use the C versions. A test
image of its own (firmware/tests/fastpath_avr.c) runs both on the same
random pad states and samples in simavr and compares the return value and
every byte of the state after.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.firmware import firmware, simtools  # noqa: F401

pytestmark = pytest.mark.firmware


def test_assembly_fast_paths_match_their_c_versions(firmware, tmp_path: Path) -> None:  # noqa: F811
    """3,000 random states and samples (half each path): no difference in any byte."""
    subprocess.run(["make", "-s", "-C", str(simtools.FIRMWARE), f"BUILD={tmp_path.resolve()}",
                    str(tmp_path.resolve() / "fastpath_avr.elf")], capture_output=True, text=True, check=True)
    elf = tmp_path / "fastpath_avr.elf"
    run = simtools.run(simtools.Build(elf, elf, firmware.harness, ""), simtools.SCENARIOS / "silence.scn", tmp_path)
    out = run.uart.decode("ascii", "replace")
    assert "FASTPATH 3000 0" in out, out

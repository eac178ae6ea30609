"""The detection core's paths in assembly against their C versions, on the AVR;
and the sampling interrupt's registers, used by nothing else.

On the AVR, detect_sample_fast, detect_sample_ringing and detect_sample_scan
(the paths of every quiet, ringing and scanned sample) are written in
assembly; the host, the bench's --host runs and the assembly's own rare
cases use the C versions. A test image of its own
(firmware/tests/fastpath_avr.c) runs both on the same random pad states and
samples in simavr and compares the return value and every byte of the state
after.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.firmware import firmware, require_tools, simtools  # noqa: F401

pytestmark = pytest.mark.firmware


def test_assembly_fast_paths_match_their_c_versions(firmware, tmp_path: Path) -> None:  # noqa: F811
    """10,000 random states and samples (a third each path): no difference in any byte."""
    subprocess.run(["make", "-s", "-C", str(simtools.FIRMWARE), f"BUILD={tmp_path.resolve()}",
                    str(tmp_path.resolve() / "fastpath_avr.elf")], capture_output=True, text=True, check=True)
    elf = tmp_path / "fastpath_avr.elf"
    long_enough = tmp_path / "fastpath.scn"  # (8 s simulated: ~5 s of rounds)
    long_enough.write_text("duration_us 8000000\n")
    run = simtools.run(simtools.Build(elf, elf, firmware.harness, ""), long_enough, tmp_path)
    out = run.uart.decode("ascii", "replace")
    assert "FASTPATH 10000 0" in out, out


def test_sampler_registers_are_the_handlers_alone(firmware, tmp_path_factory: pytest.TempPathFactory) -> None:  # noqa: F811
    """r2..r7 belong to the sampling interrupt (-ffixed-r2 .. r7 in both Makefiles):
    in the plain image and the Arduino core's (arduino-mk) no other code, compiled
    or from libgcc and avr-libc, touches them, but to read or clear the FIFO's
    head (r7)."""
    assert simtools.sampler_register_uses(firmware.elf) == []
    require_tools(simtools.arduino_mk_missing(), "the Arduino core build")
    elf = simtools.build_arduino(tmp_path_factory.getbasetemp() / "firmware-arduino")
    assert simtools.sampler_register_uses(elf) == []

"""The detection core's paths in assembly against their C versions, on the AVR;
and the sampling interrupt's registers, used by nothing else.

On the AVR, detect_sample_fast and detect_sample_scan (the paths of every
quiet and scanned sample), detect_tick and detect_sample_quick (whose moving
pad's part, the tick, the low-passed deviation and the ringing pad's path,
the assembly scan loop runs inline: the same text,
firmware/padbox/detect_asm.h) are written in assembly; the host, the bench's
--host runs and the assembly's own rare cases use the C versions. A test
image of its own (firmware/tests/fastpath_avr.c) runs both on the same random
pad states and samples in simavr and compares the return value and every byte
of the state after.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers.firmware import firmware, require_tools, simtools  # noqa: F401

pytestmark = pytest.mark.firmware


def test_assembly_fast_paths_match_their_c_versions(firmware, tmp_path: Path) -> None:  # noqa: F811
    """15,000 random states and samples (half of them detect_sample_quick, whose moving
    pad's path is the scan loop's inline text, a sixth each other path): no
    difference in any byte, and every branch of the low-passed deviation taken (a
    push; |lp| past 255; a level whose quarter carries past 16 bits; a contact's
    first half-wave; the rest by LP_SLEW either way in quick's ringing path, and
    short of it; each disc; lp = -32768 with a
    negative disc; the pad's own ringing; the fast decay; a tick, in a quiet, a slow
    and a slower scan: step 16), and a pad at
    rest's faint shake in the fast path (the rest after its mean, a start put off
    or not), a few times at least."""
    subprocess.run(["make", "-s", "-C", str(simtools.FIRMWARE), f"BUILD={tmp_path.resolve()}",
                    str(tmp_path.resolve() / "fastpath_avr.elf")], capture_output=True, text=True, check=True)
    elf = tmp_path / "fastpath_avr.elf"
    long_enough = tmp_path / "fastpath.scn"  # (12 s simulated: ~8 s of rounds)
    long_enough.write_text("duration_us 12000000\n")
    run = simtools.run(simtools.Build(elf, elf, firmware.harness, ""), long_enough, tmp_path)
    out = run.uart.decode("ascii", "replace")
    assert "FASTPATH 15000 0" in out, out
    cover = re.search(r"^COVER((?: \w+ \d+)+)$", out, re.M)
    assert cover, out
    words = cover.group(1).split()
    counts = dict(zip(words[::2], map(int, words[1::2])))
    assert len(counts) == 26 and min(counts.values()) >= 5, counts


def test_sampler_registers_are_the_handlers_alone(firmware, tmp_path_factory: pytest.TempPathFactory) -> None:  # noqa: F811
    """r2..r7 belong to the sampling interrupt (-ffixed-r2 .. r7 in both Makefiles):
    in the plain image and the Arduino core's (arduino-mk) no other code, compiled
    or from libgcc and avr-libc, touches them, but to read the FIFO's head (r5:r7)
    or, in sampler_start(), set it to the FIFO's start."""
    assert simtools.sampler_register_uses(firmware.elf) == []
    require_tools(simtools.arduino_mk_missing(), "the Arduino core build")
    elf = simtools.build_arduino(tmp_path_factory.getbasetemp() / "firmware-arduino")
    assert simtools.sampler_register_uses(elf) == []

"""docs/pads.md's emulator script is true: replayed by ``tabletop emulate``'s box to a real host source.

The example script of "The pad-box emulator's scripts" is parsed as written
(fractional milliseconds kept to the microsecond), played by a
PadBoxEmulator on a pseudo-terminal and read back through SerialPadBox: the
hits keep the script's gaps exactly and carry the box's resolution, so the
two hits 50 µs apart are a photo finish at the default 100 µs.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from helpers.padbox import private_emulator_dir  # noqa: F401
from test_padbox import WAIT_S, collect, hits_of

from hardware.emulator import PadBoxEmulator
from core.hits import HitKind
from hardware.padbox import SerialPadBox
from hardware.script import parse_script

PADS_MD = Path(__file__).resolve().parents[2] / "docs" / "pads.md"


def emulator_example() -> str:
    """The code block of the emulator's script section of docs/pads.md."""
    text = PADS_MD.read_text()
    section = text[text.index("## The pad-box emulator's scripts") :]
    match = re.search(r"```\n(.*?)```", section, re.S)
    assert match, "the section shows an example script"
    return match.group(1)


def test_the_documented_example_parses_with_fractional_milliseconds() -> None:
    lines = parse_script(emulator_example(), "docs/pads.md", pad_count=4)
    assert [(ln.at_us, ln.pad, ln.kind) for ln in lines] == [
        (0, 1, HitKind.SLAP),
        (250_500, 2, HitKind.SLAP),
        (250_550, 3, HitKind.SLAP),
        (400_125, 4, HitKind.TOUCH),
    ]
    assert lines[1].strength == 0.8


def test_the_emulator_replays_it_with_exact_gaps_and_its_resolution() -> None:
    script = parse_script(emulator_example(), "docs/pads.md", pad_count=4)
    box = PadBoxEmulator(pads=4).start()  # the default --resolution-us 100
    try:
        src = SerialPadBox(port=box.path, hello_timeout_s=3.0, retry_s=0.1)
        src.start()
        try:
            assert src.wait_connected(WAIT_S)
            player = threading.Thread(target=box.play, args=(script,), daemon=True)
            player.start()
            hits = hits_of(collect(src, lambda xs: len(hits_of(xs)) == 4))
            player.join(WAIT_S)
        finally:
            src.stop()
    finally:
        box.stop()
    assert [h.pad for h in hits] == [1, 2, 3, 4]
    assert [h.at_us - hits[0].at_us for h in hits] == [0, 250_500, 250_550, 400_125]
    assert {h.resolution_us for h in hits} == {100}
    assert hits[2].at_us - hits[1].at_us < hits[1].resolution_us  # a photo finish, as the comment says
    assert hits[1].strength == round(0.8 * 1023) / 1023 and hits[0].strength == 800 / 1023

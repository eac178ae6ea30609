"""End to end: the real firmware image in simavr, its UART on a pseudo-terminal,
read by the host's own serial pad box source (hardware/padbox.py) through
pyserial, exactly as a Raspberry Pi reads a Nano on /dev/ttyUSB0.
"""

from __future__ import annotations

import importlib.util
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hardware.hits import HitKind, PadHit
from hardware.padbox import SerialPadBox

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("padbox_simtools", ROOT / "firmware" / "sim" / "simtools.py")
simtools = sys.modules.get("padbox_simtools") or importlib.util.module_from_spec(_spec)
if "padbox_simtools" not in sys.modules:
    sys.modules["padbox_simtools"] = simtools
    _spec.loader.exec_module(simtools)

pytestmark = [pytest.mark.firmware, pytest.mark.slow]

TOUCH_THRESHOLD = 60


@pytest.fixture(scope="session")
def firmware(tmp_path_factory: pytest.TempPathFactory):  # -> simtools.Build
    """The firmware image and harness (shared build directory with the sim tests)."""
    missing = simtools.missing_tools(simulator=True)
    if missing:
        reason = "the firmware simulation needs: " + ", ".join(missing)
        if simtools.tools_required():
            pytest.fail(reason + " (TABLETOP_REQUIRE_FIRMWARE_TOOLS=1)")
        pytest.skip(reason)
    return simtools.build(tmp_path_factory.getbasetemp() / "firmware-build")


@pytest.fixture
def simulated_board(firmware):
    """The harness running e2e_game.scn in real time on a pseudo-terminal; yields its path."""
    scenario = simtools.SCENARIOS / "e2e_game.scn"
    proc = subprocess.Popen(
        [str(firmware.harness), "--pty", str(firmware.elf), str(scenario)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()  # "PTY /dev/pts/N", printed before the board starts
        assert line.startswith("PTY "), f"harness said {line!r}: {proc.stderr.read() if proc.poll() is not None else ''}"
        yield line.split()[1], simtools.Scenario.load(scenario)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serial_pad_box_reads_the_simulated_firmware(simulated_board) -> None:
    """SerialPadBox connects (HELLO), and the firmware's hits arrive as PadHits
    with the box's resolution, the right kinds, and onsets as far apart as the truth."""
    port, scn = simulated_board
    box = SerialPadBox(port=port, hello_timeout_s=10.0, silence_timeout_s=10.0)
    box.start()
    try:
        assert box.wait_connected(30.0), f"no HELLO from the simulated board on {port}: {box.status()}"
        hits: list[PadHit] = []
        deadline = time.monotonic() + 60.0  # bounds a hang only; the scenario takes ~1.5 s
        while len(hits) < 3 and time.monotonic() < deadline:
            try:
                item = box.queue.get(timeout=0.5)
            except queue.Empty:
                continue
            if isinstance(item, PadHit):
                hits.append(item)
        status = box.status()
    finally:
        box.stop()
    assert [(h.pad, h.kind) for h in hits] == [(1, HitKind.SLAP), (3, HitKind.SLAP), (2, HitKind.TOUCH)], hits
    resolution = hits[0].resolution_us
    assert 50 <= resolution <= 200, f"resolution from HELLO: {resolution} us"
    expected = [e for e in scn.events if e.expect != "none"]
    truth = [scn.truth_onset(e, TOUCH_THRESHOLD) for e in expected]
    # Same clock for every pad: the gaps between onsets are the true gaps.
    for k in (1, 2):
        measured = hits[k].at_us - hits[0].at_us
        true_gap = truth[k] - truth[0]
        assert abs(measured - true_gap) <= 2 * resolution, f"gap {k}: {measured} us measured, {true_gap:.0f} us true"
    assert status["firmware"] == "1.0.0" and status["mode"] == "piezo" and status["box_pads"] == 8, status
    refused = {k: v for k, v in status["counters"].items() if k not in ("bytes", "lines", "hits") and v}
    assert not refused, f"the host refused or lost firmware lines: {refused}"

"""Step 22 of the pad box's detection (firmware/README.md, "Detection"): a
ringing pad's slow swell is no hand's push.

The fixture is a stretch of the bench's table model (table_142 of seed
20261201, its first 292 ms) with the sample times firmware 2.15.0's image
took of it in simavr. Replayed through the detection core on the host
(sim/hostrun.c --adclog), the core decides exactly as an image sampling at
those times would. On them, pad 2, still ringing from its neighbours' slaps,
swells for over 1.4 ms without rising above that ringing: 2.15.0 took the
swell for a slap at ~280.7 ms, and its mask then lost pad 2's real slap at
285.3 ms.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from helpers.firmware import FIRMWARE_TEST_DATA, require_tools, simtools

pytestmark = pytest.mark.firmware

DATA = FIRMWARE_TEST_DATA
SWELL_US = 280_679
SLAP_US = 285_253


@pytest.fixture(scope="module")
def fixture_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The scenario and its (unzipped) log of sample times."""
    require_tools([m for m in simtools.missing_tools(simulator=False) if not m.startswith("avr")], "hostrun")
    tmp = tmp_path_factory.mktemp("ringing-swell")
    log = tmp / "ringing_swell.adclog"
    log.write_bytes(gzip.decompress((DATA / "ringing_swell.adclog.gz").read_bytes()))
    return DATA / "ringing_swell.scn", log


def _pad2(hits: list[tuple[int, int, str, int]]) -> list[tuple[int, str]]:
    """Pad 2's hits as (onset us, kind)."""
    return [(onset, kind) for pad, onset, kind, _ in hits if pad == 2]


def test_a_ringing_swell_is_no_slap_and_the_slap_after_it_is_found(fixture_files: tuple[Path, Path], tmp_path: Path) -> None:
    """Pad 2's swell is no hit, and its real slap 4.6 ms later is found, a slap."""
    scenario, log = fixture_files
    hits = _pad2(simtools.host_replay(scenario, log, tmp_path))
    assert not [h for h in hits if abs(h[0] - SWELL_US) < 2000], hits
    found = [h for h in hits if abs(h[0] - SLAP_US) <= 300]
    assert found and found[0][1] == "S", hits


def test_without_step_22_the_swell_is_a_slap_and_masks_the_real_one(fixture_files: tuple[Path, Path], tmp_path: Path) -> None:
    """What makes the rule worth having: the same core with step 22 off."""
    scenario, log = fixture_files
    hits = _pad2(simtools.host_replay(scenario, log, tmp_path, ["HOSTCC=gcc -DDETECT_SWELL_LOBE_US=0xFFFFu"]))
    assert [h for h in hits if abs(h[0] - SWELL_US) < 300 and h[1] == "S"], hits
    assert not [h for h in hits if abs(h[0] - SLAP_US) <= 300], hits

"""Host tests of the pad box firmware's C code (gcc): the detection core fed
synthetic piezo waveforms, and the protocol codec against the shared vectors.

The C test programs live in firmware/tests/; this wrapper builds and runs
them (`make -C firmware test`) so they are part of the suite.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.firmware import ROOT, require_tools, simtools

pytestmark = pytest.mark.firmware


@pytest.fixture(scope="module")
def host_results(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Build and run the C host tests once; their combined output."""
    require_tools([m for m in simtools.missing_tools(simulator=False) if not m.startswith("avr")], "firmware host tests")
    build = tmp_path_factory.mktemp("firmware-host")
    proc = subprocess.run(
        ["make", "-C", str(ROOT / "firmware"), f"BUILD={build}", "test"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"firmware host tests failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_detection_core_passes_every_waveform_scenario(host_results: str) -> None:
    """Clean slap, light touch, long ringing, crosstalk, two players 0.5 ms apart,
    eight players at once, hum and noise, glitches, silence: judged at four scan
    periods and across the clock wrap."""
    assert "all detection tests passed" in host_results
    for name in ("clean_slap", "light_touch", "long_ringing", "crosstalk", "two_players", "eight_players", "hum_noise",
                 "glitches", "silence"):
        assert f"{name}.scn (clock wrapping)" in host_results, f"scenario {name} did not run"
    assert "FAIL" not in host_results


def _counts(host_results: str, scenario: str) -> tuple[int, int, int]:
    """(hits, dropped as crosstalk, dropped as glitches) of a scenario's first run."""
    line = next(l for l in host_results.splitlines() if l.startswith(f"sim/scenarios/{scenario}.scn "))
    words = line.replace(",", "").split()
    return int(words[-9]), int(words[-7]), int(words[-3])


def test_crosstalk_is_dropped_on_the_host(host_results: str) -> None:
    """The crosstalk scenario reports its two slaps; all seven shaken neighbours
    are dropped (as crosstalk, or as glitches when too short to be a contact)."""
    hits, xtalk, glitches = _counts(host_results, "crosstalk")
    assert hits == 2 and xtalk + glitches == 7 and xtalk >= 4, (hits, xtalk, glitches)


def test_glitches_are_dropped_on_the_host(host_results: str) -> None:
    """Four electrical spikes, none of them a hit (those a sample caught were
    dropped as glitches; the others fell between samples); the slap and the
    feint still count."""
    hits, _, glitches = _counts(host_results, "glitches")
    assert hits == 2 and glitches >= 1, (hits, glitches)


def test_protocol_codec_matches_the_shared_vectors(host_results: str) -> None:
    """Encoder rebuilds every canonical box line; parser answers every host command as the vectors say."""
    line = next(l for l in host_results.splitlines() if "protocol checks" in l)
    checks, failures = int(line.split()[0]), int(line.split(",")[1].split()[0])
    assert failures == 0 and checks > 50, line


def test_noise_floors_stay_down_on_a_long_table(tmp_path: Path) -> None:
    """Eighty rounds on one table (12 s of play, firmware/sim/table_model.py's ``table_rounds``) through
    the detection core on the host at 148 us a scan: at the end every pad's noise floor is back near
    the table's noise (a few counts), and the soft slaps and touches of its last 40 rounds are found
    (all 40 here; 2.18.0 missed 10). Before 2.19.0 six pads of eight kept their floor at 80-100 counts
    by then (its count down came round only for pads whose sample times hit a multiple of 32 us),
    and light contacts went unheard."""
    require_tools([m for m in simtools.missing_tools(simulator=False) if not m.startswith("avr")], "hostrun")
    tm = simtools.load_sibling("table_model")
    table = tm.generate(80, seed=3, prefix="long", table_rounds=80)[0]
    assert len(table.rounds) == 80
    scn = tmp_path / f"{table.name}.scn"
    scn.write_text(table.text())
    binary = simtools.build_hostrun(tmp_path)
    out = subprocess.run([str(binary), "--show-learnt", str(scn)], capture_output=True, text=True, check=True).stdout
    floors = {int(w[2]): int(w[3]) for w in (line.split() for line in out.splitlines()) if w[:2] == ["LEARNT", "FLOOR"]}
    assert sorted(floors) == list(range(1, 9)), floors
    assert max(floors.values()) <= 15, floors
    hits = simtools.hostrun_hits(out)[table.name]
    late = [c for r in table.rounds[40:] for c in r.contacts if c.hand in ("soft", "touch")]
    found = [c for c in late if any(p == c.pad and abs(t - c.t_us) <= 3000 for p, t, _, _ in hits)]
    assert len(late) >= 30 and len(found) >= 0.95 * len(late), (len(found), len(late))


def test_oracle_core_builds_and_knowing_the_delays_drops_fewer(tmp_path: Path) -> None:
    """The experiment build of the core (``-DDETECT_ORACLE``, firmware/sim/hostrun.c: the table's truth
    read from the scenario's comments in place of what is learnt; never the firmware) still builds, and
    with every pair's true vibration delay known from the first round (``ORACLE_DELAY=1``) it drops fewer
    real slaps than the core that must learn them, on the same fresh tables: the figure
    firmware/experiments/README.md gives for what learning the delays could bring at best."""
    require_tools([m for m in simtools.missing_tools(simulator=False) if not m.startswith("avr")], "hostrun")
    tm = simtools.load_sibling("table_model")
    tables = tm.generate(400, seed=20261201, prefix="oracle")
    files = [tmp_path / f"{t.name}.scn" for t in tables]
    for t, f in zip(tables, files):
        f.write_text(t.text())
    real = {(t.name, c.pad, c.t_us) for t in tables for r in t.rounds for c in r.contacts if c.expect == "slap"}

    def dropped(binary: Path, env: dict[str, str]) -> int:
        out = subprocess.run([str(binary), *map(str, files)], capture_output=True, text=True, check=True,
                             env={**os.environ, **env}).stdout
        hits = simtools.hostrun_hits(out)
        return sum(not any(p == pad and abs(t - t_us) <= 3000 for p, t, _, _ in hits.get(name, []))
                   for name, pad, t_us in real)

    learning = dropped(simtools.build_hostrun(tmp_path / "learning"), {})
    oracle = dropped(simtools.build_hostrun(tmp_path / "oracle", ["HOSTCC=gcc -DDETECT_ORACLE"]), {"ORACLE_DELAY": "1"})
    assert oracle < learning, (oracle, learning)

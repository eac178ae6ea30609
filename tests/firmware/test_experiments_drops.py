"""firmware/experiments/drops.py: the host core's dropped slaps, classed by what timing alone could tell."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.firmware import ROOT, load_script, simtools

SCENARIOS = ROOT / "firmware" / "sim" / "scenarios"
drops = load_script("firmware/experiments/drops.py", "padbox_drops")


def test_a_slap_is_classed_by_its_possible_sources() -> None:
    source = drops.Source
    assert drops.classify([]) == "no contact before"
    # 200 us after a slap whose vibration needs 1,000 us: too soon, by more than the 300 us margin.
    too_soon = source(pad=1, mv=9000, gap_us=200, delay_us=1000, learnt_us=0)
    assert too_soon.too_soon
    assert drops.classify([too_soon]) == "too soon for every source, not all pairs learnt by the file's end"
    assert drops.classify([source(1, 9000, 200, 1000, 960)]) == "too soon for every source, all pairs learnt by the file's end"
    # 750 us is within the margin of a 1,000 us delay: a shake could have come by then.
    allows = source(pad=2, mv=4000, gap_us=750, delay_us=1000, learnt_us=0)
    assert not allows.too_soon
    assert drops.classify([too_soon, allows]) == "a source's delay allows a shake"
    # A pair that no shake in the file shows has no known delay: it allows a shake.
    assert drops.classify([source(3, 4000, 100, None, 0)]) == "a source's delay allows a shake"


def test_the_scenario_gives_its_real_contacts_and_true_delays() -> None:
    contacts, delays = drops.read_scenario(str(SCENARIOS / "model_shaken_then_slapped.scn"))
    assert sum(c.expect == "slap" for c in contacts) == 12
    assert all(c.expect in ("slap", "touch", "press") for c in contacts)
    # The file's first round: pad 2's slap shakes pad 1 after 572 us and pad 3 after 625 us; pad 3's
    # player slaps 300 us after that shake, a normal hand with a 303 us rise.
    assert delays[(2, 1)] == delays[(1, 2)] == 572
    assert delays[(2, 3)] == delays[(3, 2)] == 625
    assert drops.Contact(3, 101925, 2500, "slap", 303, "normal, shaken, shaken then slapped 300 us after") in contacts


def test_a_run_of_the_core_counts_every_slap_and_classes_every_drop(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    hostrun = simtools.build_hostrun(tmp_path / "build")
    files = tmp_path / "files"
    files.mkdir()
    for n, name in enumerate(["shaken_then_slapped", "eight_within_1ms"]):
        shutil.copy(SCENARIOS / f"model_{name}.scn", files / f"table_{n:03d}.scn")
    assert drops.main(["--list", str(hostrun), str(files)]) == 0
    out = capsys.readouterr().out.splitlines()
    head = next(line for line in out if line.startswith("dropped "))
    dropped, slaps = int(head.split()[1]), int(head.split()[3])
    assert slaps == 12 + 24
    listed = [line for line in out if line.startswith("table_")]
    assert len(listed) == dropped
    classes = out[out.index(head) + 1:]
    assert sum(int(line.split()[0]) for line in classes if not line.split(None, 1)[1].startswith(
        ("sharp", "normal", "soft"))) == dropped


def test_a_missing_core_or_folder_says_what_to_make(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "table_000.scn").write_text((SCENARIOS / "model_reversed_disc.scn").read_text())
    assert drops.main([str(tmp_path / "hostrun"), str(tmp_path)]) == 2
    assert "B/hostrun" in capsys.readouterr().err
    (tmp_path / "hostrun").write_text("")
    assert drops.main([str(tmp_path / "hostrun"), str(tmp_path / "empty")]) == 2
    assert "--keep DIR" in capsys.readouterr().err


def test_a_replay_at_the_images_sample_times_reports_what_it_learnt(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--adclogs``: each file is replayed at the sample times of its ``<file>.adclog`` (here the host's
    own schedule, every pad every 148 us, written as the harness writes the image's), and what the core
    learnt of the table comes back too: before stop 57 hostrun printed nothing for --show-learnt with
    --adclog, so every pair looked unknown in a replay of the image's samples."""
    hostrun = simtools.build_hostrun(tmp_path / "build")
    files, logs = tmp_path / "files", tmp_path / "adclogs"
    files.mkdir()
    logs.mkdir()
    shutil.copy(SCENARIOS / "model_shaken_then_slapped.scn", files / "table_000.scn")
    duration_us = next(int(line.split()[1]) for line in (files / "table_000.scn").read_text().splitlines()
                       if line.startswith("duration_us"))
    slots = int((duration_us - 2000) / 18.5)
    (logs / "table_000.adclog").write_text("".join(f"{k % 8} {2000 + k * 18.5:.4f}\n" for k in range(slots)))
    paths = [str(files / "table_000.scn")]
    hits, learnt = drops.run_core(str(hostrun), paths, [], str(logs))
    plain_hits, plain_learnt = drops.run_core(str(hostrun), paths, [])
    assert learnt[paths[0]], "no pair's delay came back from the replay"
    assert set(learnt[paths[0]]) == set(plain_learnt[paths[0]])
    assert len(hits[paths[0]]) == len(plain_hits[paths[0]]) > 0
    assert drops.main(["--adclogs", str(logs), str(hostrun), str(files)]) == 0
    assert any(line.startswith("dropped ") for line in capsys.readouterr().out.splitlines())
    # A file without its adclog is named, not replayed on the host's own schedule.
    (logs / "table_000.adclog").unlink()
    assert drops.main(["--adclogs", str(logs), str(hostrun), str(files)]) == 2
    assert "table_000.scn" in capsys.readouterr().err

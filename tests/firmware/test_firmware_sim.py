"""The real pad box firmware image running in simavr (an ATmega328P at 16 MHz).

The C harness (firmware/sim/harness.c) loads build/padbox.elf, puts the
scenario's piezo waveforms on the ADC inputs at each conversion's
sample-and-hold, and captures the UART. Everything the box sends is decoded
with the host's own protocol parser (hardware/protocol.py), so these tests
also prove that parser and firmware agree on the wire.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.firmware import FIRMWARE_TEST_DATA, ONSET_TOL_US, TOUCH_ONSET_TOL_US, decode, firmware, require_tools, simtools  # noqa: F401

from hardware import protocol as p

pytestmark = pytest.mark.firmware

#: Firmware defaults (PROTOCOL.md, since 2.22.0): detection starts at the touch threshold.
TOUCH_THRESHOLD = 42
#: The budget for one scan of 8 pads at 16 MHz on a quiet table (the sampler's
#: period while the loop keeps up: 160 us).
SCAN_BUDGET_US = 200
#: The same while pads are in contacts (99th percentile): the sampler slows
#: evenly while the loop works off a burst (firmware/README.md, "Sampling").
BUSY_SCAN_BUDGET_US = 300
WAVEFORM_SCENARIOS = [
    "clean_slap", "light_touch", "long_ringing", "crosstalk", "two_players", "eight_players", "hum_noise", "glitches",
    "silence",
]


def run_scenario(firmware, name: str, tmp_path: Path):
    """Run a shipped scenario; its parsed form, the run and the decoded events."""
    path = simtools.SCENARIOS / f"{name}.scn"
    run = simtools.run(firmware, path, tmp_path)
    return simtools.Scenario.load(path), run, decode(run.uart)


def judge(scn, hits: list[p.Hit], tolerance_us: float) -> list[str]:
    """Every expected contact found once with the right kind, onset within
    tolerance of the truth; nothing else. Returns the problems found."""
    problems: list[str] = []
    used: set[int] = set()
    for ev in scn.events:
        if ev.expect == "none":
            continue
        truth = float(ev.t_us)  # the moment of contact
        tol = max(tolerance_us, TOUCH_ONSET_TOL_US) if ev.expect == "touch" else tolerance_us
        match = next(
            (i for i, h in enumerate(hits) if i not in used and h.pad == ev.pad and abs(h.t - truth) <= tol),
            None,
        )
        if match is None:
            problems.append(f"pad {ev.pad} contact at {ev.t_us} us (true onset {truth:.0f}): no hit within {tolerance_us:.0f} us")
            continue
        used.add(match)
        want = "S" if ev.expect == "slap" else "T"
        if hits[match].kind != want:
            problems.append(f"pad {ev.pad} at {ev.t_us} us reported as {hits[match].kind}, expected {want}")
    problems += [f"unexpected hit: pad {h.pad} at {h.t} us kind {h.kind} peak {h.peak}" for i, h in enumerate(hits) if i not in used]
    return problems


def test_build_prints_flash_and_ram_use(firmware) -> None:
    """One `make` produces the .hex and reports program and data size."""
    assert firmware.hex.exists() and firmware.hex.stat().st_size > 0
    assert "Program:" in firmware.size_report and "Data:" in firmware.size_report


@pytest.mark.parametrize("name", WAVEFORM_SCENARIOS)
def test_firmware_detects_each_scenario(firmware, name: str, tmp_path: Path) -> None:
    """Every slap found, feints as touch, crosstalk and silence report nothing,
    each onset within ONSET_TOL_US of the moment of contact; no sample lost
    (the sample FIFO never overflowed), and the scan period fits the busy
    budget even while all eight pads are in a contact at once (simulated CPU
    cycles, not wall-clock time)."""
    scn, run, events = run_scenario(firmware, name, tmp_path)
    hello = events[0]
    assert isinstance(hello, p.Hello) and hello.seq == 0 and hello.mode == "piezo" and hello.pads == 8
    hits = [e for e in events if isinstance(e, p.Hit)]
    problems = judge(scn, hits, tolerance_us=ONSET_TOL_US)
    assert not problems, "\n".join(problems)
    assert run.report["sampler_restarts"] == 0, f"{name}: the sample FIFO overflowed"
    assert run.scan_us_p99 <= BUSY_SCAN_BUDGET_US, f"{name}: p99 scan {run.scan_us_p99:.1f} us"


def _image_hits_are_the_hosts(build, path: Path, tmp_path: Path):
    """Run ``path`` through ``build`` in simavr, logging each conversion's time; assert
    it gave hits and that the core on the host, fed those samples at those times,
    finds the same ones at the same onsets. The run, for more checks."""
    log = tmp_path / "adc.log"
    run = simtools.run(build, path, tmp_path, adclog=log)
    image = [(h.pad, h.t, h.kind, h.peak) for h in decode(run.uart) if isinstance(h, p.Hit)]
    assert image, "the scenario gave no hit"
    host = simtools.host_replay(path, log, tmp_path)
    assert [h[:3] for h in image] == [h[:3] for h in host]
    return run


@pytest.mark.parametrize("name", ["two_players", "eight_players", "held_sample", "slow_scans"])
def test_sample_times_are_the_conversions(firmware, name: str, tmp_path: Path) -> None:
    """The image counts its samples' times from the sampler's periods (no time
    is stored with a sample, and the period stretches under load): the
    detection core on the host, fed the same samples at the times the
    simulator logged each conversion, finds the very same hits at the same
    onsets to the microsecond. held_sample: an interrupt holds a
    sample-and-hold back 2.4 us in a slap's rise; the image stamps it on its
    sampler's schedule, and so must the replay (at the time taken, that
    slap's onset comes out 6 us late). slow_scans: paced scans in which no
    two neighbouring samples are both on the schedule; the replay must still
    find each scan's period for its detect_slow (step 16), or an onset comes
    out 7 us late."""
    _image_hits_are_the_hosts(firmware, simtools.SCENARIOS / f"{name}.scn", tmp_path)


def test_fifo_holds_a_burst_the_old_one_could_not(firmware, tmp_path: Path) -> None:
    """The sample FIFO keeps a byte a sample (a conversion's 8 high bits), 256
    of them in the RAM 128 samples of 16 bits took (firmware 2.18.0; 360 since
    2.29.0): while
    all eight pads start a contact at once (eight_players) the loop falls
    more than 128 samples behind, and no sample is lost (the old FIFO would
    have overflowed or paced the sampler there), and the host's core, fed
    the same 8-bit samples at the logged times, finds the image's hits."""
    run = _image_hits_are_the_hosts(firmware, simtools.SCENARIOS / "eight_players.scn", tmp_path)
    assert run.report["fifo_peak"] > 128
    assert run.report["sampler_restarts"] == 0


#: Two of the bench's files (the table model's default rounds, seed 20261201's
#: table_002 and table_018) whose bursts take the loop past its sample FIFO's
#: end when the pacing starts 32 samples nearer it than the released image's
#: (FIFO_SLOW 448, FIFO_FAST 460, FIFO_BRAKE 464) and heavy work never waits.
#: Which burst goes round moves with the image's exact timing: with firmware
#: 2.34.0 both did at FIFO_SLOW 440 (FIFO_FAST 456, FIFO_BRAKE 462); 2.35.0's
#: step 36 moved the timing, and there neither does, at 448 only table_018
#: (firmware/experiments/README.md, "Tried in stop 60"). So the test asks
#: that at least one of them go round without the wait. Until 2.36.0 it
#: asked at 36 samples nearer (452, 462, 466); there 2.37.0's image loses a
#: sample of table_002 even with the wait at draws 0 and 1 of four (the
#: bench's --draw), at 448 at none, while without the wait table_018 goes
#: round at draws 0, 1 and 3 ("Tried in stop 62").
FIFO_BURSTS = ("fifo_burst_table002.scn", "fifo_burst_table018.scn")
LATE_PACING = "-DFIFO_SLOW=448u -DFIFO_FAST=460u -DFIFO_BRAKE=464u"


def test_heavy_work_waits_for_the_brake_so_no_sample_is_lost(firmware, tmp_path: Path) -> None:
    """Near the FIFO's end, with the brake asked for but not in yet, a unit of
    heavy work waits a scan or two (firmware 2.34.0: detect_work_taken()
    returns 0 from FIFO_HOLD samples behind). On a build whose pacing leaves
    32 samples less room, bursts of the bench lose samples when the work
    never waits (FIFO_HOLD past the FIFO's end: at least one of the two;
    both with 2.35.0) and none when it does, and the loop still fell over
    255 samples behind in each."""
    lost: dict[str, dict[str, int]] = {}
    for hold in ("waits", "never waits"):
        flags = LATE_PACING + (" -DFIFO_HOLD=9999u" if hold == "never waits" else "")
        where = tmp_path / hold.replace(" ", "_")
        elf = simtools.build_variant(where / "build", [f"OPT=-O2 {flags}"])
        build = simtools.Build(elf, elf, firmware.harness, "")
        lost[hold] = {}
        for name in FIFO_BURSTS:
            out = where / name
            out.mkdir()
            run = simtools.run(build, FIRMWARE_TEST_DATA / name, out)
            lost[hold][name] = run.report["sampler_restarts"]
            assert run.report["fifo_peak"] == 255, f"{name}: the loop fell only {run.report['fifo_peak']} samples behind"
    assert any(lost["never waits"].values()), f"without the wait these bursts should lose samples: {lost}"
    assert not any(lost["waits"].values()), f"samples lost though heavy work waits: {lost}"


#: Images built another way whose sample times must be as exact: the sampler
#: paced from 4 samples behind (its period changes scan by scan), the
#: handler that saves its registers on the stack (the Arduino IDE's build:
#: no -ffixed flags, the scan loop in C), a draw of the sample timing
#: (3 cycles more a scan: the bench's --draw 3), and a box of four pads paced
#: the same way (the pace changes at odd scans, told by bit 2 of the FIFO's
#: entry where 8 pads use bit 3: firmware 2.31.0).
VARIANTS = {"paced": ["OPT=-O2 -DFIFO_SLOW=4u"], "stacking_handler": ["SAMPLER_REGS="], "draw": ["DRAW=3"],
            "four_pads_paced": ["PADS=4", "OPT=-O2 -DFIFO_SLOW=4u"]}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_sample_times_of_other_builds(firmware, variant: str, tmp_path: Path) -> None:
    """As above, on eight_players, for the builds of VARIANTS (a draw's samples
    fall elsewhere than the released image's in the burst: the same detection
    judged on other samples)."""
    elf = simtools.build_variant(tmp_path / "build", VARIANTS[variant])
    scn = simtools.SCENARIOS / "eight_players.scn"
    run = _image_hits_are_the_hosts(simtools.Build(elf, elf, firmware.harness, ""), scn, tmp_path)
    assert run.report["sampler_restarts"] == 0
    if variant in ("paced", "four_pads_paced"):  # (periods of more than one length)
        assert run.report["scan_cycles_max"] > run.report["scan_cycles_min"] + 16 * 8
    if variant == "draw":
        plain = tmp_path / "plain"
        plain.mkdir()
        simtools.run(firmware, scn, plain, adclog=plain / "adc.log")
        assert (tmp_path / "adc.log").read_text() != (plain / "adc.log").read_text()


def test_scan_of_8_pads_fits_200_us_and_hello_reports_it(firmware, tmp_path: Path) -> None:
    """Measured in simulated CPU cycles between samples of pad 1 on a quiet table;
    the resolution in HELLO is the firmware's own measure of the same."""
    _, run, events = run_scenario(firmware, "silence", tmp_path)
    assert run.report["scans"] > 1000
    assert run.scan_us_median <= SCAN_BUDGET_US, f"median scan {run.scan_us_median:.1f} us"
    assert run.scan_us_p99 <= SCAN_BUDGET_US, f"p99 scan {run.scan_us_p99:.1f} us"
    hello = events[0]
    assert isinstance(hello, p.Hello)
    assert abs(hello.resolution_us - run.scan_us_median) <= 0.1 * run.scan_us_median, (
        f"HELLO says {hello.resolution_us} us, the simulator measured {run.scan_us_median:.1f} us"
    )


def test_stack_never_reaches_the_variables(firmware, tmp_path: Path) -> None:
    """2 KB of RAM: through commands, replies and streaming, the lowest stack
    pointer the simulator saw stays at least 64 bytes above .data + .bss."""
    _, run, _ = run_scenario(firmware, "commands", tmp_path)
    headroom = run.report["stack_min_address"] - simtools.bss_end(firmware.elf)
    assert headroom >= 64, f"stack came within {headroom} bytes of the variables"


def test_silence_sends_only_hello_and_heartbeats(firmware, tmp_path: Path) -> None:
    """A second of a quiet table: HELLO, then a heartbeat every 500 ms (+-50 ms)."""
    _, _, events = run_scenario(firmware, "silence", tmp_path)
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "Hello" and set(kinds[1:]) <= {"Heartbeat"}, kinds
    times = [events[0].t] + [e.t for e in events if isinstance(e, p.Heartbeat)]
    assert len(times) == 3, times
    assert all(abs((b - a) - 500_000) <= 50_000 for a, b in zip(times, times[1:])), times


def test_commands_change_the_box_at_once(firmware, tmp_path: Path) -> None:
    """SET takes effect at once (a 102-count contact becomes a slap after
    SET 2 slap 80), STREAM streams LVL, bad commands get the right ERR,
    DEFAULTS restores, CFG reports every pad."""
    _, _, events = run_scenario(firmware, "commands", tmp_path)
    oks = [e.command for e in events if isinstance(e, p.Ok)]
    assert oks == ["SET 2 slap 80", "STREAM 1", "STREAM 0", "DEFAULTS", "CFG"]
    errs = [(e.code, e.command) for e in events if isinstance(e, p.Err)]
    assert errs == [("PAD", "SET"), ("PARAM", "SET"), ("RANGE", "SET")]
    hellos = [e for e in events if isinstance(e, p.Hello)]
    assert len(hellos) == 2 and not hellos[1].new_session, "a HELLO on request continues the session"
    hits = [(e.pad, e.kind) for e in events if isinstance(e, p.Hit)]
    assert hits == [(4, "S"), (2, "S"), (2, "T")], hits
    levels = [e for e in events if isinstance(e, p.Levels)]
    assert len(levels) == 2, "LVL every 50 ms from 40 to 150 ms"
    assert max(lv.peaks[3] for lv in levels) > 500, "the slap on pad 4 shows in the streamed peaks"
    assert all(max(lv.levels) < 60 for lv in levels), "levels between contacts are quiet"
    cfg = pad_configs(events)
    assert sorted(cfg) == list(range(1, 9))
    assert cfg[2] == {"slap": 140, "touch": 42, "scan": 2000, "mask": 30000, "xtalk": 55, "xwin": 5000}
    # (the box's factory settings are the ones the host suggests: a default changed on one side only fails here)
    assert cfg[2] == {name: default for name, (_, _, default) in p.PARAMS.items()}


def run_script(firmware, tmp_path: Path, name: str, script: str, eeprom: Path) -> list[p.Event]:
    """Write ``script`` as the scenario ``name``.scn, run it on the ``eeprom`` file; the decoded events."""
    path = tmp_path / f"{name}.scn"
    path.write_text(script)
    return decode(simtools.run(firmware, path, tmp_path, eeprom=eeprom).uart)


def pad_configs(events: list[p.Event]) -> dict[int, dict[str, int]]:
    """The settings each CFG line reported, by pad."""
    return {e.pad: e.settings for e in events if isinstance(e, p.PadConfig)}


def test_settings_survive_a_reset_only_after_save(firmware, tmp_path: Path) -> None:
    """SAVE writes EEPROM; at the next power-up CFG shows the saved value."""
    eeprom = tmp_path / "eeprom.bin"
    first = "duration_us 100000\nsend 20000 SET 3 slap 321\nsend 30000 SET 5 xwin 7000\nsend 40000 SAVE\n"
    events = run_script(firmware, tmp_path, "first", first, eeprom)
    assert [e.command for e in events if isinstance(e, p.Ok)] == ["SET 3 slap 321", "SET 5 xwin 7000", "SAVE"]
    run_script(firmware, tmp_path, "unsaved", "duration_us 80000\nsend 20000 SET 3 slap 999\n", eeprom)
    cfg = pad_configs(run_script(firmware, tmp_path, "second", "duration_us 80000\nsend 20000 CFG\n", eeprom))
    assert cfg[3]["slap"] == 321 and cfg[5]["xwin"] == 7000 and cfg[1]["slap"] == 140


def test_a_corrupt_eeprom_means_factory_settings(firmware, tmp_path: Path) -> None:
    """Settings saved, then one EEPROM byte flipped: the checksum fails and the
    box starts with factory settings rather than half-believed ones."""
    eeprom = tmp_path / "eeprom.bin"
    run_script(firmware, tmp_path, "save", "duration_us 80000\nsend 20000 SET 4 touch 99\nsend 30000 SAVE\n", eeprom)
    check = "duration_us 80000\nsend 20000 CFG\n"
    assert pad_configs(run_script(firmware, tmp_path, "check", check, eeprom))[4]["touch"] == 99
    raw = bytearray(eeprom.read_bytes())
    raw[4 + 16 * 3 + 2] ^= 0x01  # pad 4's touch threshold, low byte
    eeprom.write_bytes(bytes(raw))
    cfg = pad_configs(run_script(firmware, tmp_path, "check", check, eeprom))
    assert cfg[4]["touch"] == 42 and all(c["slap"] == 140 for c in cfg.values())


def test_button_box_gives_one_hit_per_bouncing_press(firmware, tmp_path: Path) -> None:
    """Jumper D12 to GND: button pads on D2..D9 by pin-change interrupt; each
    press bounces down and up and still gives one slap, stamped at its first edge."""
    scn, _, events = run_scenario(firmware, "buttons", tmp_path)
    hello = events[0]
    assert isinstance(hello, p.Hello) and hello.mode == "button"
    hits = [e for e in events if isinstance(e, p.Hit)]
    assert all(h.kind == "S" and h.peak == 1023 for h in hits)
    # The harness changes pins every 2 us; the interrupt adds a few us.
    problems = judge(scn, hits, tolerance_us=2 + hello.resolution_us)
    assert not problems, "\n".join(problems)


def test_button_box_streams_levels(firmware, tmp_path: Path) -> None:
    """STREAM on a button box: LVL shows a held button at 1023, in its level while it is held and in
    its peak until the LVL after its release, and every other pad at 0 (the box works the levels out
    as each LVL is built, since 2.31.0)."""
    script = "mode button\nduration_us 400000\nsend 20000 STREAM 1\nbutton 2 100000 120000 slap\n"
    events = run_script(firmware, tmp_path, "button_stream", script, tmp_path / "eeprom.bin")
    levels = [e for e in events if isinstance(e, p.Levels)]
    assert len(levels) >= 5, levels
    held = [lv for lv in levels if 110_000 <= lv.t <= 210_000]
    assert held and all(lv.levels[1] == 1023 and lv.peaks[1] == 1023 for lv in held), held
    after = [lv for lv in levels if lv.t >= 290_000]
    assert after and all(lv.levels[1] == 0 and lv.peaks[1] == 0 for lv in after), after
    assert all(lv.levels[k] == 0 and lv.peaks[k] == 0 for lv in levels for k in range(8) if k != 1), levels


def test_arduino_ide_build_detects_like_the_plain_build(firmware, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The sketch compiled the Arduino IDE's way (Arduino core: its main(), init()
    and Timer0 interrupt, via arduino-mk) runs the same in the simulator."""
    require_tools(simtools.arduino_mk_missing(), "the Arduino core build")
    elf = simtools.build_arduino(tmp_path_factory.getbasetemp() / "firmware-arduino")
    ide = simtools.Build(elf, elf, firmware.harness, "")
    for name in ("two_players", "light_touch"):
        scn = simtools.Scenario.load(simtools.SCENARIOS / f"{name}.scn")
        run = simtools.run(ide, simtools.SCENARIOS / f"{name}.scn", tmp_path)
        events = decode(run.uart)
        assert isinstance(events[0], p.Hello) and events[0].resolution_us <= SCAN_BUDGET_US
        problems = judge(scn, [e for e in events if isinstance(e, p.Hit)], tolerance_us=ONSET_TOL_US)
        assert not problems, f"{name}: " + "\n".join(problems)

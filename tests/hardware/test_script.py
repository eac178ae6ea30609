"""The scripted pad source: parsing with line-numbered errors, deterministic replay."""

from __future__ import annotations

import math
import queue
from pathlib import Path

import pytest

from core.errors import InputError
from core.hits import HitKind, PadHit
from hardware.script import ScriptedPads, parse_script
from hardware.source import SourceNotice

SCRIPT = """\
# a rehearsal
0      1
250.5  2 slap 0.8   # trailing comment
400    3 TOUCH

300    4 touch 0.25
"""

TIMEOUT_S = 10.0  # only bounds a hang


def drain_until_finished(source: ScriptedPads) -> tuple[list[PadHit], list[SourceNotice]]:
    """Hits and notices until the script says it is finished."""
    hits: list[PadHit] = []
    notices: list[SourceNotice] = []
    while True:
        item = source.queue.get(timeout=TIMEOUT_S)
        if isinstance(item, PadHit):
            hits.append(item)
        else:
            notices.append(item)
            if item.details.get("finished"):
                return hits, notices


def test_parse_sorts_by_time_and_reads_every_field() -> None:
    lines = parse_script(SCRIPT)
    assert [(l.at_us, l.pad, l.kind, l.strength, l.line) for l in lines] == [
        (0, 1, HitKind.SLAP, None, 2),
        (250_500, 2, HitKind.SLAP, 0.8, 3),
        (300_000, 4, HitKind.TOUCH, 0.25, 6),
        (400_000, 3, HitKind.TOUCH, None, 4),
    ]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("0 1\nabc 2\n", "line 2: time 'abc'"),
        ("-5 1\n", "line 1: time '-5'"),
        ("nan 1\n", "line 1: time 'nan'"),
        ("1e12 1\n", "line 1: time '1e12'"),
        ("# c\n0 0\n", "line 2: pad '0'"),
        ("0 x\n", "line 1: pad 'x'"),
        ("0 1.5\n", "line 1: pad '1.5'"),
        ("0 1 slam\n", "line 1: 'slam' is neither"),
        ("0 1 slap 1.5\n", "line 1: strength '1.5'"),
        ("0 1 0.5 extra\n", "line 1: unexpected 'extra'"),
        ("0\n", "line 1: '0' should be"),
        ("0 1 2 3 4\n", "line 1:"),
        ("\n\n0 9\n", "line 3: pad 9 does not exist"),
    ],
)
def test_bad_lines_name_the_line(text: str, needle: str) -> None:
    with pytest.raises(InputError) as info:
        parse_script(text, name="hits.txt", pad_count=4)
    assert f"hits.txt {needle}" in str(info.value)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        ScriptedPads(tmp_path / "nope.txt")


def test_pad_count_defaults_to_highest_pad_and_bounds_the_file(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text(SCRIPT)
    assert ScriptedPads(path).pad_count == 4
    with pytest.raises(InputError, match="line 6: pad 4 does not exist"):
        ScriptedPads(path, pad_count=3)


def test_replay_stamps_start_plus_file_time_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text(SCRIPT)
    source = ScriptedPads(path, pad_count=4, speed=None, start_us=1_000_000)
    source.start()
    try:
        hits, notices = drain_until_finished(source)
    finally:
        source.stop()
    assert [(h.pad, h.at_us, h.kind.value, h.strength) for h in hits] == [
        (1, 1_000_000, "slap", None),
        (2, 1_250_500, "slap", 0.8),
        (4, 1_300_000, "touch", 0.25),
        (3, 1_400_000, "touch", None),
    ]
    assert notices[0].kind == "connected"
    assert notices[-1].message == "script finished: 4 hits replayed"
    assert source.finished.is_set()
    # The clock never lags behind a hit it has produced.
    assert source.now_us() >= 1_400_000


def test_replay_is_the_same_every_run(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text(SCRIPT)
    runs = []
    for _ in range(2):
        source = ScriptedPads(path, speed=math.inf, start_us=0)
        source.start()
        runs.append(drain_until_finished(source)[0])
        source.stop()
    assert runs[0] == runs[1]


def test_real_time_replay_waits_for_each_hit_on_its_clock(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text("0 1\n30 2\n60 1 touch\n")
    source = ScriptedPads(path, speed=1.0, start_us=0)
    source.start()
    try:
        hits, _ = drain_until_finished(source)
        # Each hit came out only once the source's clock had reached its stamp.
        assert [h.at_us for h in hits] == [0, 30_000, 60_000]
        assert source.now_us() >= 60_000
    finally:
        source.stop()


def test_faster_speed_runs_the_clock_faster(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text("0 1\n2000 2\n")  # two seconds of script
    source = ScriptedPads(path, speed=100.0, start_us=0)
    source.start()
    try:
        hits, _ = drain_until_finished(source)
        assert [h.at_us for h in hits] == [0, 2_000_000]
        assert source.now_us() >= 2_000_000
    finally:
        source.stop()


def test_stop_ends_a_long_replay_early(tmp_path: Path) -> None:
    path = tmp_path / "hits.txt"
    path.write_text("0 1\n3600000 2\n")  # an hour later
    source = ScriptedPads(path, start_us=0, sink=queue.Queue())
    source.start()
    first = source.queue.get(timeout=TIMEOUT_S)  # connected notice
    assert isinstance(first, SourceNotice)
    assert source.queue.get(timeout=TIMEOUT_S).pad == 1
    source.stop()
    assert not source.finished.is_set()
    assert source.queue.empty()


@pytest.mark.parametrize("speed", [0, -1.0])
def test_speed_must_be_positive(speed: float) -> None:
    with pytest.raises(InputError, match="speed"):
        ScriptedPads(parse_script("0 1\n"), speed=speed)

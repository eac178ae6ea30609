"""PadHit values and the simulated source."""

import pytest

from core.hits import HitKind, PadHit
from hardware.sim import SimulatedPads


def test_hit_round_trips_through_dict():
    hit = PadHit(pad=3, at_us=1_000_123, kind=HitKind.TOUCH, strength=0.25, resolution_us=160)
    assert PadHit.from_dict(hit.to_dict()) == hit


@pytest.mark.parametrize(
    "kwargs",
    [
        {"pad": 0, "at_us": 1},
        {"pad": True, "at_us": 1},
        {"pad": 1, "at_us": 1.5},
        {"pad": 1, "at_us": 1, "strength": 1.5},
        {"pad": 1, "at_us": 1, "resolution_us": 0},
        {"pad": 1, "at_us": 1, "kind": "punch"},
    ],
)
def test_bad_hits_are_refused(kwargs):
    with pytest.raises(ValueError):
        PadHit(**kwargs)


def test_injected_hits_keep_their_timestamps_and_reach_the_queue():
    pads = SimulatedPads(pad_count=4)
    pads.inject(2, at_us=5_000)
    pads.inject(1, "touch", strength=0.1, at_us=4_000)
    got = [pads.queue.get_nowait(), pads.queue.get_nowait()]
    # Arrival order is kept in the queue; judging sorts by onset.
    assert [h.pad for h in got] == [2, 1]
    assert [h.pad for h in sorted(got, key=PadHit.sort_key)] == [1, 2]
    assert got[1].kind is HitKind.TOUCH


def test_inject_refuses_unknown_pad():
    pads = SimulatedPads(pad_count=4)
    with pytest.raises(ValueError, match="1 to 4"):
        pads.inject(5)
    assert pads.queue.empty()


def test_inject_without_time_uses_the_source_clock():
    pads = SimulatedPads(pad_count=2)
    before = pads.now_us()
    hit = pads.inject(1)
    assert before <= hit.at_us <= pads.now_us()

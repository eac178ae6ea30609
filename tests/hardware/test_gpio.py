"""GPIO pads on gpiozero's mock pins with chosen edge times."""

from __future__ import annotations

import queue
import random
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from core.errors import ConfigError, PadSourceError
from hardware.gpio import GpioPads, SlapPad, factory_name, load_pin_factory
from core.hits import HitKind, PadHit
from hardware.mockpins import TimedMockFactory, TimedMockPin
from hardware.source import SourceNotice

PINS = (17, 27, 22, 23)


def hits_of(source: GpioPads) -> list[PadHit]:
    """Every hit on the source's queue so far (notices dropped)."""
    out: list[PadHit] = []
    while True:
        try:
            item = source.queue.get_nowait()
        except queue.Empty:
            return out
        if isinstance(item, PadHit):
            out.append(item)


def pin(factory: TimedMockFactory, bcm: int) -> TimedMockPin:
    p = factory.pin(bcm)
    assert isinstance(p, TimedMockPin)
    return p


@pytest.fixture
def pads(mock_factory: TimedMockFactory) -> Any:
    source = GpioPads(PINS, mask_ms=30)
    source.start()
    yield source
    source.stop()


def test_pins_are_inputs_with_pull_up_and_active_low(mock_factory: TimedMockFactory, pads: GpioPads) -> None:
    for bcm in PINS:
        p = pin(mock_factory, bcm)
        assert p.function == "input"
        assert p.pull == "up"
        assert p.state == 1  # idle: pulled high
    assert all(isinstance(d, SlapPad) and d.pull_up for d in pads.devices)
    # Pad 2 is BCM 27: driving it LOW is a press (active-low), driving it high is a release.
    p = pin(mock_factory, 27)
    p.drive_low(ticks=mock_factory.ticks() + 0.001)
    assert pads.devices[1].is_active
    p.drive_high(ticks=mock_factory.ticks() + 0.050)
    hits = hits_of(pads)
    assert [(h.pad, h.kind, h.strength) for h in hits] == [(2, HitKind.SLAP, None)]


def test_rising_edge_alone_is_no_hit(mock_factory: TimedMockFactory, pads: GpioPads) -> None:
    p = pin(mock_factory, 17)
    p.drive_low(ticks=mock_factory.ticks() + 0.001)
    hits_of(pads)
    p.drive_high(ticks=mock_factory.ticks() + 0.100)
    assert hits_of(pads) == []


def test_timestamp_is_the_edge_tick_not_the_callback_time(mock_factory: TimedMockFactory, pads: GpioPads) -> None:
    epoch = mock_factory.ticks()
    # The callback runs half a second after the edge (a busy Pi): the hit keeps the edge time.
    mock_factory.advance(0.5)
    pin(mock_factory, 22).drive_low(ticks=epoch + 0.012345)
    (hit,) = hits_of(pads)
    assert hit.at_us == 12_345
    assert pads.now_us() == 500_000
    assert hit.pad == 3


def test_now_us_reads_factory_ticks_from_start_epoch(mock_factory: TimedMockFactory, pads: GpioPads) -> None:
    assert pads.now_us() == 0
    mock_factory.advance(1.25)
    assert pads.now_us() == 1_250_000


def test_resolution_is_reported_for_the_factory(pads: GpioPads) -> None:
    hit_res = pads.resolution_us
    assert pads.factory_name == "mock"
    assert hit_res == 1
    assert pads.status()["pin_factory"] == "mock"


def test_chattering_contact_gives_one_hit(mock_factory: TimedMockFactory, pads: GpioPads) -> None:
    epoch = mock_factory.ticks()
    p = pin(mock_factory, 17)
    # Edges every 1 ms for 20 ms: low, high, low, ... then it stays low (held).
    for i in range(21):
        t = epoch + 0.100 + i * 0.001
        (p.drive_low if i % 2 == 0 else p.drive_high)(ticks=t)
    hits = hits_of(pads)
    assert [(h.pad, h.at_us) for h in hits] == [(1, 100_000)]
    assert pads.status()["masked_edges"][1] == 10


def test_release_bounce_after_a_long_hold_is_no_hit(mock_factory: TimedMockFactory, pads: GpioPads) -> None:
    epoch = mock_factory.ticks()
    p = pin(mock_factory, 17)
    p.drive_low(ticks=epoch + 0.010)
    # Held 500 ms, then the hand lifts and the contact bounces for 4 ms.
    for i, t in enumerate((0.510, 0.511, 0.512, 0.513, 0.514)):
        (p.drive_high if i % 2 == 0 else p.drive_low)(ticks=epoch + t)
    assert [h.at_us for h in hits_of(pads)] == [10_000]
    # A real slap after a quiet release counts again.
    p.drive_low(ticks=epoch + 0.600)
    assert [h.at_us for h in hits_of(pads)] == [600_000]


def test_a_second_slap_exactly_one_mask_time_later_counts(mock_factory: TimedMockFactory) -> None:
    source = GpioPads(PINS, mask_ms=5)
    source.start()
    try:
        epoch = mock_factory.ticks()
        p = pin(mock_factory, 23)
        p.drive_low(ticks=epoch + 0.010)
        p.drive_high(ticks=epoch + 0.011)
        p.drive_low(ticks=epoch + 0.014)  # 3 ms after release: masked
        p.drive_high(ticks=epoch + 0.015)
        p.drive_low(ticks=epoch + 0.020)  # exactly 5 ms after release, 10 ms after the slap
        assert [h.at_us for h in hits_of(source)] == [10_000, 20_000]
    finally:
        source.stop()


def test_random_edge_trains_never_give_two_hits_within_a_mask_time(mock_factory: TimedMockFactory) -> None:
    mask_ms = 30
    source = GpioPads(PINS, mask_ms=mask_ms)
    source.start()
    try:
        rng = random.Random(1234)
        epoch = mock_factory.ticks()
        p = pin(mock_factory, 17)
        t = epoch
        low = False
        for _ in range(2000):
            t += rng.choice([0.0002, 0.001, 0.003, 0.02, 0.05])
            (p.drive_high if low else p.drive_low)(ticks=t)
            low = not low
        times = [h.at_us for h in hits_of(source)]
        assert len(times) > 10
        assert all(b - a >= mask_ms * 1000 for a, b in zip(times, times[1:]))
    finally:
        source.stop()


def test_two_pads_300_us_apart_keep_their_order_whatever_the_callback_order(
    mock_factory: TimedMockFactory, pads: GpioPads
) -> None:
    epoch = mock_factory.ticks()
    mock_factory.advance(0.2)
    # Pad 4's callback happens to run first, though pad 1 touched 300 µs earlier.
    pin(mock_factory, 23).drive_low(ticks=epoch + 0.1003)
    pin(mock_factory, 17).drive_low(ticks=epoch + 0.1000)
    hits = hits_of(pads)
    assert [h.pad for h in hits] == [4, 1]  # arrival order
    ordered = sorted(hits, key=PadHit.sort_key)
    assert [(h.pad, h.at_us) for h in ordered] == [(1, 100_000), (4, 100_300)]


def test_edges_before_start_and_after_stop_are_ignored(mock_factory: TimedMockFactory) -> None:
    source = GpioPads(PINS)
    p = pin(mock_factory, 17)
    p.drive_low(ticks=mock_factory.ticks())
    p.drive_high(ticks=mock_factory.advance(0.1))
    assert hits_of(source) == []
    source.start()
    source.stop()
    assert source.devices == []
    source.stop()  # idempotent
    with pytest.raises(PadSourceError):
        source.start()


def test_stop_releases_the_pins(mock_factory: TimedMockFactory) -> None:
    source = GpioPads(PINS)
    source.stop()
    again = GpioPads(PINS)  # would raise GPIOPinInUse if the pins were still reserved
    again.stop()


def test_start_announces_the_source(mock_factory: TimedMockFactory) -> None:
    source = GpioPads((5, 6))
    source.start()
    notice = source.queue.get_nowait()
    source.stop()
    assert isinstance(notice, SourceNotice) and notice.kind == "connected"
    assert "5, 6" in notice.message


def test_pad_held_at_start_is_reported(mock_factory: TimedMockFactory) -> None:
    source = GpioPads(PINS)
    pin(mock_factory, 27).drive_low()  # before start: held down or shorted to ground
    source.start()
    try:
        assert source.status()["pressed_at_start"] == [2]
    finally:
        source.stop()


@pytest.mark.parametrize(
    "pins, needle",
    [
        ([], "non-empty"),
        ([17, 17], "twice"),
        ([1], "from 2 to 27"),
        ([28], "from 2 to 27"),
        (["17"], "from 2 to 27"),
        ([True], "from 2 to 27"),
        ("17", "non-empty"),
    ],
)
def test_bad_pins_are_config_errors(mock_factory: TimedMockFactory, pins: Any, needle: str) -> None:
    with pytest.raises(ConfigError, match="pads.gpio.pins") as info:
        GpioPads(pins)
    assert needle in str(info.value)


def test_pin_in_use_is_a_config_error_and_frees_the_others(mock_factory: TimedMockFactory) -> None:
    from gpiozero import LED

    led = LED(22)
    try:
        with pytest.raises(ConfigError, match="pads.gpio.pins"):
            GpioPads(PINS)
        # the pins taken before the clash were released again
        GpioPads((17, 27)).stop()
    finally:
        led.close()


def test_bad_mask_is_a_config_error(mock_factory: TimedMockFactory) -> None:
    with pytest.raises(ConfigError, match="pads.gpio.mask_ms"):
        GpioPads(PINS, mask_ms=-1)


def test_pin_factory_chosen_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = Device.pin_factory
    Device.pin_factory = None
    try:
        source = GpioPads((17,), pin_factory="mock")
        assert isinstance(source.factory, MockFactory)
        assert source.factory_name == "mock"
        source.stop()
        monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
        source = GpioPads((17,))
        assert isinstance(source.factory, MockFactory)
        source.stop()
    finally:
        Device.pin_factory = saved


def test_unknown_or_missing_pin_factory_is_a_pad_source_error() -> None:
    with pytest.raises(PadSourceError, match="no pin factory called 'nonsense'"):
        load_pin_factory("nonsense")
    # This machine is no Raspberry Pi and has no lgpio: the message says what to do.
    try:
        import lgpio  # noqa: F401
    except ImportError:
        with pytest.raises(PadSourceError, match="lgpio"):
            load_pin_factory("lgpio")


def test_factory_name_knows_subclasses() -> None:
    factory = TimedMockFactory()
    assert factory_name(factory) == "mock"


def test_explicit_factory_instance_is_used_and_not_closed(mock_factory: TimedMockFactory) -> None:
    other = TimedMockFactory(start=5.0)
    source = GpioPads((17,), pin_factory=other)
    source.start()
    other.advance(0.25)
    assert source.now_us() == 250_000
    source.stop()
    assert other.pins  # still usable: the source did not own it


class WrappingFactory(TimedMockFactory):
    """Ticks like pigpio's: integer µs in 32 bits, wrapping every 71.6 minutes."""

    def ticks(self) -> int:  # type: ignore[override]
        return round(super().ticks() * 1_000_000) % 2**32

    @staticmethod
    def ticks_diff(later: int, earlier: int) -> float:  # type: ignore[override]
        return ((later - earlier) % 2**32) / 1_000_000


def test_wrapping_ticks_keep_a_steady_clock() -> None:
    factory = WrappingFactory(start=2**32 / 1e6 - 1.0)  # one second before the wrap
    source = GpioPads((17,), pin_factory=factory)
    source.start()
    try:
        factory.advance(2.0)
        assert source.now_us() == 2_000_000  # across the wrap
        p = factory.pin(17)
        p.drive_low(ticks=500_000)  # ticks after the wrap: 1.5 s after start
        p.drive_high(ticks=600_000)
        (hit,) = hits_of(source)
        assert hit.at_us == 1_500_000
        # Another pad's edge from before the wrap, delivered after it, is still placed right.
        assert source.ticks_to_us(2**32 - 500_000) == 500_000
        # Three hours, read every five minutes as the table loop would: no drift, no jumps.
        for _ in range(36):
            factory.advance(300.0)
            source.now_us()
        assert abs(source.now_us() - (2_000_000 + 36 * 300_000_000)) <= 1
        now_ticks = factory.ticks()
        p.drive_low(ticks=now_ticks - 250_000)  # delivered a quarter second late
        (late,) = hits_of(source)
        assert abs(late.at_us - (source.now_us() - 250_000)) <= 1
    finally:
        source.stop()

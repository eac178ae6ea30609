"""Shared fixtures. Keep each fixture small and documented; others may append theirs below."""

from __future__ import annotations

from typing import Iterator

import pytest
from gpiozero import Device

from hardware.mockpins import TimedMockFactory


@pytest.fixture
def mock_factory() -> Iterator[TimedMockFactory]:
    """A fresh gpiozero mock pin factory with a hand-moved clock, set as gpiozero's default.

    Like gpiozero's own test suite: whatever the test does, the factory is
    reset (pins and reservations cleared) and the previous factory restored.
    """
    saved = Device.pin_factory
    factory = TimedMockFactory()
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = saved

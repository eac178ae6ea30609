"""What a pad box says, as values: one dataclass per kind of box line (firmware/PROTOCOL.md).

:class:`hardware.protocol.PadBoxProtocol` turns bytes into these; the
transport (``hardware/padbox.py``) acts on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Hello:
    """The box introduced itself. ``new_session``: its clock (and seq) restarted."""

    seq: int
    proto: int
    firmware: str
    pads: int
    resolution_us: int
    mode: str
    t: int
    device_us: int
    new_session: bool


@dataclass(frozen=True, slots=True)
class Hit:
    """A hit line: onset ``t`` (raw 32-bit) and ``device_us`` (unwrapped, this session)."""

    seq: int
    t: int
    pad: int
    kind: str
    peak: int
    device_us: int


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """The box's clock now."""

    seq: int
    t: int
    device_us: int


@dataclass(frozen=True, slots=True)
class Levels:
    """Live levels and the peaks since the previous LVL line, pad 1 first."""

    seq: int
    t: int
    levels: tuple[int, ...]
    peaks: tuple[int, ...]
    device_us: int
    raw_levels: str = ""
    raw_peaks: str = ""


@dataclass(frozen=True, slots=True)
class PadConfig:
    """One pad's settings, in answer to ``CFG``."""

    seq: int
    pad: int
    settings: dict[str, int]


@dataclass(frozen=True, slots=True)
class Ok:
    """The box did a command; ``command`` is the body it echoed (``SET 3 slap 250``)."""

    seq: int
    command: str


@dataclass(frozen=True, slots=True)
class Err:
    """The box refused a command: ``code`` from PROTOCOL.md, ``command`` word or ``-``."""

    seq: int
    code: str
    command: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """``count`` lines never arrived (a gap in the sequence numbers before ``seq``)."""

    count: int
    seq: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A line the host did not believe. ``reason`` is one of REFUSAL_REASONS."""

    reason: str
    line: bytes
    detail: str = ""


Event = Union[Hello, Hit, Heartbeat, Levels, PadConfig, Ok, Err, Dropped, Refused]

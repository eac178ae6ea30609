"""Simulated pads: hits injected by code, the keyboard, a script or the web page.

The default source, so that everything runs on a laptop with no hardware.
"""

from __future__ import annotations

import queue
import time
from typing import Any, ClassVar

from core.hits import HitKind, PadHit
from core.checks import whole_number
from hardware.source import PadSource


class SimulatedPads(PadSource):
    """Pads that exist only in software. Its clock is the host's monotonic clock.

    ``inject`` with an explicit ``at_us`` gives deterministic tests; without it
    the hit is stamped now. ``resolution_us`` is the timing uncertainty every
    hit reports (config ``pads.sim.resolution_us``): stamps are not rounded,
    but two hits closer than it are a photo finish, as on a coarser clock.
    """

    name: ClassVar[str] = "sim"

    def __init__(self, pad_count: int = 8, resolution_us: int = 1, sink: "queue.Queue[Any] | None" = None) -> None:
        if isinstance(resolution_us, bool) or not isinstance(resolution_us, int) or resolution_us < 1:
            raise ValueError(f"resolution_us must be a whole number of microseconds from 1, got {resolution_us!r}")
        super().__init__(pad_count, resolution_us, sink)

    def now_us(self) -> int:
        return time.monotonic_ns() // 1000

    def inject(
        self,
        pad: int,
        kind: HitKind | str = HitKind.SLAP,
        strength: float | None = None,
        at_us: int | None = None,
    ) -> PadHit:
        """Make a hit on ``pad`` as if it had been slapped at ``at_us`` (default: now).

        Raises ValueError for a pad outside 1..pad_count or a malformed value.
        """
        whole_number(pad, 1, self.pad_count, "pad", ValueError)
        hit = PadHit(
            pad=pad,
            at_us=self.now_us() if at_us is None else at_us,
            kind=HitKind(kind),
            strength=strength,
            resolution_us=self.resolution_us,
        )
        self.emit(hit)
        return hit

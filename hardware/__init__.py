"""Pad backends: everything that turns a physical (or simulated) slap into a PadHit.

Knows nothing of games or the web. See ``core.hits`` for the value that
leaves this package and ``hardware.source`` for the interface every backend
implements.
"""

from core.hits import HitKind, PadHit
from hardware.source import PadSource

__all__ = ["HitKind", "PadHit", "PadSource"]

"""The one value every pad backend produces: a timestamped hit on a numbered pad."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class HitKind(str, Enum):
    """What kind of contact a pad saw: a real slap, or a light ``touch`` (a feint)."""

    SLAP = "slap"
    TOUCH = "touch"


@dataclass(frozen=True, slots=True, order=False)
class PadHit:
    """A contact on a pad, stamped with its onset time on the source's clock.

    Hits are judged by ``at_us`` and never by the order they arrived in: USB
    latency and thread scheduling may delay a hit but must never reorder two.

    Attributes:
        pad: pad number, 1-based, as printed on the box.
        at_us: onset of the contact in integer microseconds on the source's clock.
        kind: ``slap`` or ``touch``.
        strength: 0.0 to 1.0 where the source measures it (piezo peak), else None.
        resolution_us: the source's timing resolution; two onsets closer than
            this cannot be told apart (a photo finish).
        uncertainty_us: how far ``at_us`` may be off the true onset, either way,
            beyond ``resolution_us``: 0 for a source that stamps on the pad
            clock itself; a phone's sync error plus its touch-latency spread
            for a phone pad (``hardware.phonepad``).
    """

    pad: int
    at_us: int
    kind: HitKind = HitKind.SLAP
    strength: float | None = None
    resolution_us: int = 1
    uncertainty_us: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.pad, bool) or not isinstance(self.pad, int) or self.pad < 1:
            raise ValueError(f"pad must be a whole number from 1, got {self.pad!r}")
        if isinstance(self.at_us, bool) or not isinstance(self.at_us, int):
            raise ValueError(f"at_us must be whole microseconds, got {self.at_us!r}")
        if not isinstance(self.kind, HitKind):
            object.__setattr__(self, "kind", HitKind(self.kind))
        if self.strength is not None and not 0.0 <= float(self.strength) <= 1.0:
            raise ValueError(f"strength must be between 0.0 and 1.0, got {self.strength!r}")
        if isinstance(self.resolution_us, bool) or not isinstance(self.resolution_us, int) or self.resolution_us < 1:
            raise ValueError(f"resolution_us must be a whole number from 1, got {self.resolution_us!r}")
        if isinstance(self.uncertainty_us, bool) or not isinstance(self.uncertainty_us, int) or self.uncertainty_us < 0:
            raise ValueError(f"uncertainty_us must be a whole number from 0, got {self.uncertainty_us!r}")

    def sort_key(self) -> tuple[int, int]:
        """Order by onset time, then pad number so equal times sort the same way every run."""
        return (self.at_us, self.pad)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (used by the event log and the web API); ``uncertainty_us`` only when not 0."""
        out: dict[str, Any] = {
            "pad": self.pad,
            "at_us": self.at_us,
            "kind": self.kind.value,
            "strength": self.strength,
            "resolution_us": self.resolution_us,
        }
        if self.uncertainty_us:
            out["uncertainty_us"] = self.uncertainty_us
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PadHit":
        """Inverse of :meth:`to_dict`."""
        return cls(
            pad=data["pad"],
            at_us=data["at_us"],
            kind=HitKind(data.get("kind", "slap")),
            strength=data.get("strength"),
            resolution_us=data.get("resolution_us", 1),
            uncertainty_us=data.get("uncertainty_us", 0),
        )

"""The interface every pad backend implements, and the queue hits travel through."""

from __future__ import annotations

import logging
import queue
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Protocol, Union, runtime_checkable

from core.hits import PadHit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SourceNotice:
    """Something a person should know about the source itself (not a hit).

    ``kind`` is one of ``connected``, ``disconnected``, ``error``, ``dropped``
    (lines lost, detected by sequence number) or ``info``.
    """

    kind: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


#: What a source puts on its queue.
SourceItem = Union[PadHit, SourceNotice]


#: What a levels listener is handed: ``{"at_us", "levels", "peaks"}``.
LevelsListener = Callable[[dict[str, Any]], None]


@runtime_checkable
class LiveLevels(Protocol):
    """A capability: a source that measures contact levels and keeps per-pad thresholds.

    Only the serial pad box (real or ``tabletop emulate``) has it; calibration
    asks ``isinstance(source, LiveLevels)`` instead of probing for methods.
    """

    @property
    def connected(self) -> bool:
        """Whether the box is there to answer now."""
        ...

    def latest_levels(self) -> dict[str, Any]:
        """The latest frame ``{"at_us", "levels", "peaks"}``, or {}."""
        ...

    def stream_levels(self, on: bool) -> None:
        """Start or stop live level streaming."""
        ...

    def add_levels_listener(self, listener: LevelsListener) -> None:
        """Call ``listener(frame)`` for every frame as it arrives."""
        ...

    def remove_levels_listener(self, listener: LevelsListener) -> None:
        """Stop calling ``listener``."""
        ...

    def read_config(self) -> dict[int, dict[str, int]]:
        """Every pad's settings as the source reports them."""
        ...

    def set_param(self, pad: int, name: str, value: int) -> None:
        """Set one parameter of one pad (not kept over a reset until ``save``)."""
        ...

    def save(self) -> None:
        """Keep the current settings over a reset."""
        ...


class PadSource(ABC):
    """A backend that turns pad contacts into :class:`PadHit` values.

    Hits are put on ``self.queue`` (thread-safe) from whatever thread the
    backend reads on. Every hit of one source is stamped on that source's one
    clock; ``now_us()`` reads the same clock, so a consumer can tell whether a
    deadline on that clock has passed.

    Lifecycle: ``start()`` begins reading, ``stop()`` ends it and is safe to
    call twice. A source is also a context manager.
    """

    #: Short name used in config and on the command line (``sim``, ``gpio``, ``serial``).
    name: ClassVar[str] = "abstract"

    def __init__(self, pad_count: int, resolution_us: int, sink: "queue.Queue[Any] | None" = None) -> None:
        if pad_count < 1:
            raise ValueError(f"pad_count must be at least 1, got {pad_count}")
        self.pad_count = pad_count
        self.resolution_us = resolution_us
        self.queue: "queue.Queue[Any]" = sink if sink is not None else queue.Queue()
        self._lock = threading.Lock()
        self.hits_emitted = 0

    @abstractmethod
    def now_us(self) -> int:
        """The current time on this source's clock, in microseconds."""

    def host_seconds_until(self, at_us: int) -> float:
        """Seconds of host time until this source's clock reads ``at_us`` (negative once past).

        The default assumes the source clock runs at the host's rate; a source
        whose clock runs at its own rate (the serial pad box's crystal) overrides it.
        """
        return (at_us - self.now_us()) / 1e6

    def start(self) -> None:
        """Begin producing hits. The default does nothing (injected sources)."""

    def stop(self) -> None:
        """Stop producing hits and release hardware. Safe to call more than once."""

    def status(self) -> dict[str, Any]:
        """What ``tabletop doctor``, ``/api/health`` and the pads page show about this source."""
        return {
            "source": self.name,
            "pads": self.pad_count,
            "resolution_us": self.resolution_us,
            "hits": self.hits_emitted,
        }

    # Calibration: only sources that measure levels (the serial pad box) override these.
    supports_levels: ClassVar[bool] = False

    def emit(self, hit: PadHit) -> None:
        """Hand one hit to the consumer. Backends call this from their reading thread."""
        if hit.pad > self.pad_count:
            log.warning("%s: dropped hit on pad %d, only %d pads", self.name, hit.pad, self.pad_count)
            return
        with self._lock:
            self.hits_emitted += 1
        self.queue.put(hit)

    def notify(self, kind: str, message: str, **details: Any) -> None:
        """Tell the consumer something about the source (connected, disconnected, ...)."""
        log.info("%s: %s", self.name, message)
        self.queue.put(SourceNotice(kind, message, details))

    def __enter__(self) -> "PadSource":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

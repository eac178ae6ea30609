"""Which of the pad source's notices become events: noise must not grow the log without bound.

A pad source says things about itself (connected, disconnected, lines lost,
errors). Each one used to be stored as its own ``pad_source`` event and sent
to every phone, so a noisy cable (every sequence gap is a ``dropped`` notice:
4,260 of them from 1 MB of noise) grew the log and the live streams as fast
as the noise came. :class:`NoticeGate` lets the first notice of each kind
through at once and holds the rest of that kind for a window (10 s); when the
window ends, one summary stands for all it held: how many, their ``count``
details added up (lines lost, for ``dropped``), and the last one's message.
However much noise arrives, a kind costs at most one event per window.

Pure: no threads, no clock of its own (``now`` is passed in, in seconds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hardware.source import SourceNotice

#: Seconds a kind of notice is held after one of its kind was let through.
NOTICE_WINDOW_S = 10.0


@dataclass
class _Window:
    """One kind's window: when it ends, and what arrived in it after the notice let through."""

    ends: float
    held: int = 0
    total: int | None = None
    last: SourceNotice | None = None
    last_at: float = -math.inf


class NoticeGate:
    """Lets through the first notice of a kind, then at most one summary of that kind per ``window_s``."""

    def __init__(self, window_s: float = NOTICE_WINDOW_S) -> None:
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.window_s = window_s
        self._windows: dict[str, _Window] = {}
        #: Notices that got no event of their own, being folded into a summary (for /api/health).
        self.coalesced = 0

    def offer(self, notice: SourceNotice, now: float) -> SourceNotice | None:
        """``notice`` if it is to be stored now; None when it is held for its kind's summary."""
        window = self._windows.get(notice.kind)
        if window is None or now >= window.ends and window.held == 0:
            self._windows[notice.kind] = _Window(ends=now + self.window_s)
            return notice
        window.held += 1
        count = notice.details.get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            window.total = (window.total or 0) + count
        window.last, window.last_at = notice, now
        return None

    def next_due(self) -> float | None:
        """When the earliest summary is due (None when nothing is held)."""
        ends = [w.ends for w in self._windows.values() if w.held]
        return min(ends) if ends else None

    def due(self, now: float) -> list[SourceNotice]:
        """The summaries whose window has ended by ``now``, the kind heard from last at the end.

        A kind that goes on being noisy gets a new window at once, so it stays
        at one event per window; a kind whose window held nothing is forgotten.
        """
        return self._take(now, reopen=True)

    def flush(self) -> list[SourceNotice]:
        """Every summary still held, due or not, and forget every window (the service is stopping)."""
        return self._take(math.inf, reopen=False)

    def _take(self, now: float, reopen: bool) -> list[SourceNotice]:
        ready = sorted(((k, w) for k, w in self._windows.items() if now >= w.ends), key=lambda kw: kw[1].last_at)
        out: list[SourceNotice] = []
        for kind, window in ready:
            del self._windows[kind]
            if not window.held:
                continue
            out.append(self._summary(kind, window))
            self.coalesced += window.held - 1
            if reopen:
                self._windows[kind] = _Window(ends=now + self.window_s)
        return out

    def _summary(self, kind: str, window: _Window) -> SourceNotice:
        last = window.last
        assert last is not None
        if window.held == 1:
            return last
        seconds = f"{self.window_s:g}"
        message = f"{window.held} '{kind}' notices in {seconds} s"
        details: dict[str, Any] = {**last.details, "notices": window.held, "window_s": self.window_s}
        if window.total is not None:
            details["count"] = window.total
            message += f" ({window.total} in all)"
        return SourceNotice(kind, f"{message}; the last: {last.message}", details)

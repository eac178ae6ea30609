"""Phones as pads: which phone holds which pad, each phone's clock sync and touch latency, and its hits.

The table service owns one :class:`PhonePads` (``service.phone_pads``). The
web layer calls it for the ``/pad`` page's requests; it turns a phone's
touch into a :class:`~core.hits.PadHit` on the pad source's clock and
puts it in the table loop's inbox beside the source's own hits, so a phone
and a hardware pad are judged on one clock (a mixed table).

* A *device* is one phone's browser session (a random token in its cookie).
  It shows a short tag (``K7Q``) so the PIN holder can tell phones apart.
* A device holds at most one pad and a pad at most one device. The PIN
  holder assigns (:meth:`assign`); anyone may claim a pad no phone holds
  with that pad's code, shown on the table screen (:meth:`claim`). A phone
  only ever slaps its own pad: a hit names no pad.
* Calibrations and assignments are kept in ``phone_pads.json`` in the data
  directory, so a phone keeps both across a restart of the service. Every
  new cookie is a new device, so old ones are pruned: a phone holding no
  pad is forgotten after :data:`FORGET_AFTER_S` unseen, and beyond
  :data:`MAX_PHONES` the longest unseen of those holding no pad go first.

Thread-safe: web requests call in from many threads; one lock guards it all.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from core.errors import InputError, NotFoundError, RuleError
from companion.private import create_private_file, restrict
from core.hits import HitKind, PadHit
from hardware.phoneclock import PhoneClock, PhoneFit, SyncRound
from hardware.phonepad import UNCALIBRATED, TouchLatency, pair_with_pad, phone_hit
from hardware.phonepad import calibrate as latency_from_taps

log = logging.getLogger(__name__)

PHONE_PADS_FILE = "phone_pads.json"
#: Round trips a phone makes quickly after it opens the page (20 a second), then every RESYNC_MS.
FAST_ROUNDS = 100
FAST_MS = 50
RESYNC_MS = 100
#: Unanswered sync rounds kept per phone (a lost answer's round is forgotten after this many).
PENDING_ROUNDS = 32
#: Digits of a claim code.
CODE_DIGITS = 4
TAG_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY3479"
#: A phone holding no pad and unseen this long (wall-clock seconds: 90 days) is forgotten, calibration and all.
FORGET_AFTER_S = 90 * 24 * 3600
#: At most this many phones are kept; beyond it the longest unseen of those holding no pad are forgotten.
MAX_PHONES = 64
#: When a phone was last seen is written to the file at most this often per phone (a sync comes 10 times
#: a second; the file needs the day, not the moment).
SEEN_SAVE_S = 3600
#: A phone on /pad keeps calling (its sync rounds); one heard from this recently, holding no pad, is waiting for a code.
WAITING_S = 120.0


@dataclass
class PhoneDevice:
    """One phone: its tag, pad, clock sync and touch latency."""

    token: str
    tag: str
    pad: int | None = None
    latency: TouchLatency = UNCALIBRATED
    clock: PhoneClock = field(default_factory=PhoneClock)
    pending: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    last_seen_us: int | None = None
    #: wall-clock seconds this phone last called the table, and the value of it the file holds.
    seen_s: float = 0.0
    saved_seen_s: float = 0.0

    def public(self) -> dict[str, Any]:
        """What the API shows of this phone (never its token)."""
        fit = self.clock.fit
        return {
            "tag": self.tag,
            "pad": self.pad,
            "latency": self.latency.to_dict(),
            "sync": self.clock.status() | {"error_ms": round(fit.error_us(fit.ref_us) / 1000, 1) if fit else None},
        }


class PhonePads:
    """Every phone pad of one table (see the module docstring).

    Args:
        pad_now_us: the pad source's clock (what hits are stamped on).
        submit_hit: puts a PadHit in the table loop's inbox.
        pad_count: pads the source has; a phone may take any of them.
        data_dir: where ``phone_pads.json`` lives (None: kept in memory only).
        recent_hits: the table's latest hits (``pad``, ``at_us``, ...), for a
            calibration against a hardware pad.
    """

    def __init__(self, pad_now_us: Callable[[], int], submit_hit: Callable[[PadHit], None], pad_count: int,
                 data_dir: Path | None = None,
                 recent_hits: Callable[[], list[dict[str, Any]]] | None = None,
                 wall_s: Callable[[], float] = time.time) -> None:
        self.pad_now_us = pad_now_us
        self.wall_s = wall_s
        self.submit_hit = submit_hit
        self.recent_hits = recent_hits or (lambda: [])
        self.pad_count = pad_count
        self.path = data_dir / PHONE_PADS_FILE if data_dir is not None else None
        self._lock = threading.Lock()
        self._devices: dict[str, PhoneDevice] = {}
        self._codes: dict[int, str] = {}
        self._next_round = 1
        self.stats = {"rounds": 0, "hits": 0, "refused": 0, "forgotten": 0}
        undated = self._load()
        if self._prune() or undated:
            self._save()

    # ------------------------------------------------------------ devices
    def new_device(self) -> str:
        """A token for a phone seen for the first time (the web keeps it in the phone's cookie)."""
        with self._lock:
            token = secrets.token_urlsafe(18)
            used = {d.tag for d in self._devices.values()}
            tag = "".join(secrets.choice(TAG_ALPHABET) for _ in range(3))
            while tag in used:
                tag = "".join(secrets.choice(TAG_ALPHABET) for _ in range(3))
            now = self.wall_s()
            self._devices[token] = PhoneDevice(token, tag, seen_s=now, saved_seen_s=now)
            if self._prune(keep=token):
                self._save()
            return token

    def _prune(self, keep: str | None = None) -> bool:
        """Forget phones holding no pad that were unseen for FORGET_AFTER_S, then the longest unseen of
        them beyond MAX_PHONES (never ``keep``, the phone just made); True when any was forgotten."""
        now = self.wall_s()
        idle = sorted((d for d in self._devices.values() if d.pad is None and d.token != keep),
                      key=lambda d: d.seen_s)
        over = len(self._devices) - MAX_PHONES
        gone = [d for i, d in enumerate(idle) if i < over or now - d.seen_s > FORGET_AFTER_S]
        for device in gone:
            del self._devices[device.token]
        self.stats["forgotten"] += len(gone)
        return bool(gone)

    def status(self) -> dict[str, Any]:
        """What /api/health shows: phones known, the pads they hold, and the counters (rounds, hits, ...)."""
        with self._lock:
            held = sorted(d.pad for d in self._devices.values() if d.pad is not None)
            return {"phones": len(self._devices), "pads_held": held, **self.stats}

    def known(self, token: Any) -> bool:
        """Whether ``token`` names a phone of this table."""
        return isinstance(token, str) and token in self._devices

    def _device(self, token: str) -> PhoneDevice:
        device = self._devices.get(token)
        if device is None:
            raise NotFoundError("this phone is not known to the table; reload the pad page")
        device.seen_s = self.wall_s()
        if device.seen_s - device.saved_seen_s > SEEN_SAVE_S:
            self._save()
        return device

    def _by_tag(self, tag: Any) -> PhoneDevice:
        if not isinstance(tag, str):
            raise InputError(f"'phone' must be the tag a phone's pad page shows (like 'K7Q'), got {tag!r}")
        for device in self._devices.values():
            if device.tag == tag.strip().upper():
                return device
        tags = ", ".join(sorted(d.tag for d in self._devices.values())) or "none yet"
        raise NotFoundError(f"no phone shows the tag {tag!r}; phones with the pad page open: {tags}")

    def me(self, token: str) -> dict[str, Any]:
        """This phone's tag, pad, latency and sync, plus when to sync next."""
        with self._lock:
            device = self._device(token)
            return device.public() | {"next_sync_ms": self._next_ms(device)}

    def fit_of(self, tag: str) -> PhoneFit | None:
        """The clock fit of the phone showing ``tag`` (benchmarks, status pages); None before its first round."""
        with self._lock:
            return self._by_tag(tag).clock.fit

    def latency_of(self, tag: str) -> TouchLatency:
        """The touch latency of the phone showing ``tag``."""
        with self._lock:
            return self._by_tag(tag).latency

    def phones(self) -> list[dict[str, Any]]:
        """Every phone the table knows, by tag."""
        with self._lock:
            return sorted((d.public() for d in self._devices.values()), key=lambda p: p["tag"])

    # ------------------------------------------------------------ pads
    def _check_pad(self, pad: Any) -> int:
        if isinstance(pad, bool) or not isinstance(pad, int) or not 1 <= pad <= self.pad_count:
            raise InputError(f"'pad' must be a pad number from 1 to {self.pad_count}, got {pad!r}")
        return pad

    def _holder(self, pad: int) -> PhoneDevice | None:
        return next((d for d in self._devices.values() if d.pad == pad), None)

    def codes(self) -> dict[int, str]:
        """The claim code of every pad no phone holds (the table screen shows them)."""
        with self._lock:
            for pad in range(1, self.pad_count + 1):
                if self._holder(pad) is not None:
                    self._codes.pop(pad, None)
                elif pad not in self._codes:
                    self._codes[pad] = f"{secrets.randbelow(10 ** CODE_DIGITS):0{CODE_DIGITS}d}"
            return dict(sorted(self._codes.items()))

    def waiting(self, within_s: float = WAITING_S) -> int:
        """Phones that called the table within ``within_s`` seconds and hold no pad: a code is wanted."""
        now = self.wall_s()
        with self._lock:
            return sum(1 for d in self._devices.values() if d.pad is None and now - d.seen_s <= within_s)

    def claim(self, token: str, code: Any) -> int:
        """This phone takes the free pad whose code is ``code``; returns the pad."""
        # (ASCII digits only: compare_digest refuses other characters, and "١٢٣٤" is digits to isdigit())
        if not isinstance(code, str) or not code.strip().isascii() or not code.strip().isdigit():
            raise InputError(f"'code' must be the {CODE_DIGITS} digits shown on the table screen, got {code!r}")
        self.codes()  # every free pad has a code
        with self._lock:
            device = self._device(token)
            pad = next((p for p, c in self._codes.items() if secrets.compare_digest(c, code.strip())), None)
            if pad is None:
                raise RuleError("no free pad has that code; read it again from the table screen")
            self._give(device, pad)
            return pad

    def assign(self, tag: Any, pad: Any) -> dict[str, Any]:
        """(PIN holder) Give the phone showing ``tag`` the pad ``pad`` (None: take its pad away)."""
        with self._lock:
            device = self._by_tag(tag)
            if pad is None:
                device.pad = None
                self._save()
            else:
                self._give(device, self._check_pad(pad), forced=True)  # (it saves)
            return device.public()

    def release(self, token: str) -> None:
        """This phone gives its pad up."""
        with self._lock:
            self._device(token).pad = None
            self._save()

    def _give(self, device: PhoneDevice, pad: int, forced: bool = False) -> None:
        holder = self._holder(pad)
        if holder is not None and holder is not device:
            if not forced:
                raise RuleError(f"pad {pad} is already held by phone {holder.tag}")
            holder.pad = None  # the PIN holder moves the pad to another phone
        device.pad = pad
        self._codes.pop(pad, None)
        self._save()

    # ------------------------------------------------------------ clock sync
    def sync(self, token: str, t1_us: Any, answered: Any = None, received_us: int | None = None) -> dict[str, Any]:
        """One round trip: the phone sent at ``t1_us``; ``answered`` reports earlier rounds, ``[{id, t4_us}, ...]``.

        Returns ``{"id", "t2_us", "t3_us", "next_sync_ms"}``: the phone stamps the
        answer's arrival (t4) and reports it with a later sync. Rounds overlap:
        the phone sends one every ``next_sync_ms`` without waiting for answers.
        ``received_us``: when the request reached the table on the pad clock, if stamped earlier than
        now (web.pad.stamp_sync_arrivals); t2 is the earlier of that and now.
        """
        t2 = self.pad_now_us()
        if received_us is not None:
            t2 = min(t2, received_us)
        t1 = _whole_us("t1_us", t1_us)
        with self._lock:
            device = self._device(token)
            if answered is not None:
                if not isinstance(answered, list) or len(answered) > PENDING_ROUNDS:
                    raise InputError(f"'answered' must be a list of at most {PENDING_ROUNDS} "
                                     "{\"id\", \"t4_us\"} objects")
                reports = [self._answer(one) for one in answered]
                for round_id, t4 in sorted(reports, key=lambda r: r[1]):
                    self._take_answer(device, round_id, t4)
            round_id = self._next_round
            self._next_round += 1
            device.pending[round_id] = (t1, t2, 0)
            while len(device.pending) > PENDING_ROUNDS:
                device.pending.pop(next(iter(device.pending)))
            next_ms = self._next_ms(device)
            t3 = self.pad_now_us()
            device.pending[round_id] = (t1, t2, t3)
        return {"id": round_id, "t2_us": t2, "t3_us": t3, "next_sync_ms": next_ms}

    @staticmethod
    def _answer(one: Any) -> tuple[int, int]:
        """One report of 'answered' as ``(round id, t4)``, or InputError."""
        if not isinstance(one, dict) or set(one) != {"id", "t4_us"} or isinstance(one["id"], bool) \
                or not isinstance(one["id"], int):
            raise InputError("each of 'answered' must be "
                             "{\"id\": <the id of an earlier sync>, \"t4_us\": <when its answer came>}")
        return one["id"], _whole_us("answered[].t4_us", one["t4_us"])

    def _take_answer(self, device: PhoneDevice, round_id: int, t4: int) -> None:
        stamps = device.pending.pop(round_id, None)
        if stamps is None:
            return  # too old, or answered already: nothing to learn, nothing wrong
        t1, t2, t3 = stamps
        try:
            round_ = SyncRound(t1, t2, t3, t4)
        except ValueError as exc:
            raise InputError(f"that sync round is impossible: {exc}") from None
        if device.clock.fit is not None and t4 < device.clock.fit.ref_us - device.clock.window_us:
            return
        device.clock.add(round_)
        device.last_seen_us = t2
        self.stats["rounds"] += 1

    @staticmethod
    def _next_ms(device: PhoneDevice) -> int:
        return FAST_MS if device.clock.counters["rounds"] < FAST_ROUNDS else RESYNC_MS

    def restart_sync(self, token: str) -> None:
        """The page was reloaded: its clock started again, so the old rounds mean nothing."""
        with self._lock:
            device = self._device(token)
            device.clock = PhoneClock()
            device.pending.clear()

    # ------------------------------------------------------------ calibration
    def calibrate(self, token: str, asynchronies_us: Any) -> TouchLatency:
        """Keep this phone's touch latency from a tap-along (each tap's stamp minus its beat, in µs)."""
        if not isinstance(asynchronies_us, list) or len(asynchronies_us) > 200 or not all(
                isinstance(v, int) and not isinstance(v, bool) and abs(v) < 1_000_000 for v in asynchronies_us):
            raise InputError("'asynchronies_us' must be a list of at most 200 whole microseconds, "
                             "each within 1 s of its beat")
        try:
            latency = latency_from_taps(asynchronies_us)
        except ValueError as exc:
            raise RuleError(str(exc)) from None
        with self._lock:
            self._device(token).latency = latency
            self._save()
        return latency

    def calibrate_against_pad(self, token: str, taps_us: Any, pad: Any) -> TouchLatency:
        """Keep this phone's touch latency from slaps of a hardware pad and the phone together.

        ``taps_us``: the phone's stamps of its taps; ``pad``: the hardware pad
        slapped with them. Each tap is mapped onto the pad clock (no latency
        taken off) and paired with that pad's nearest hit among the table's
        latest; the sync's error bound is added to the latency's uncertainty.
        """
        if not isinstance(taps_us, list) or len(taps_us) > 32:
            raise InputError("'taps_us' must be a list of at most 32 of the phone's stamps")
        taps = [_whole_us("taps_us[]", t) for t in taps_us]
        pad = self._check_pad(pad)
        with self._lock:
            device = self._device(token)
            if device.pad == pad:
                raise RuleError(f"pad {pad} is this phone's own; slap a hardware pad of the box with it")
            fit = device.clock.fit
            if fit is None:
                raise RuleError("this phone has not synced its clock with the table yet; keep the pad page open a moment")
            mapped = [fit.to_pad(t) for t in taps]
        hits = [h["at_us"] for h in self.recent_hits()
                if h.get("pad") == pad and isinstance(h.get("at_us"), int)]
        offsets = pair_with_pad([at for at, _ in mapped], hits)
        try:
            latency = latency_from_taps(offsets)
        except ValueError as exc:
            raise RuleError(f"{exc} (taps paired with a hit on pad {pad}: {len(offsets)} of {len(taps)})") from None
        sync_error = max(err for _, err in mapped)
        latency = TouchLatency(latency.latency_us, latency.uncertainty_us + sync_error, latency.spread_us,
                               latency.taps, True)
        with self._lock:
            self._device(token).latency = latency
            self._save()
        return latency

    def forget_calibration(self, token: str) -> None:
        """Back to the uncalibrated latency (a new case, another phone model in the same cookie...)."""
        with self._lock:
            self._device(token).latency = UNCALIBRATED
            self._save()

    # ------------------------------------------------------------ hits
    def hit(self, token: str, at_us: Any, kind: Any = "slap", sent_us: Any = None) -> PadHit:
        """This phone's touch stamped ``at_us`` on its clock: the hit put in the table's inbox.

        Raises RuleError (shown on the phone) when the phone holds no pad or its sync is stale or too uncertain.
        """
        at = _whole_us("at_us", at_us)
        sent = None if sent_us is None else _whole_us("sent_us", sent_us)
        valid = [k.value for k in HitKind]
        if kind not in valid:
            raise InputError(f"'kind' must be one of {', '.join(valid)}, got {kind!r}")
        with self._lock:
            device = self._device(token)
            if device.pad is None:
                raise RuleError("this phone holds no pad yet: enter a pad's code from the table screen, "
                                "or ask the PIN holder")
            try:
                hit = phone_hit(device.pad, at, kind, device.clock.fit, device.latency, sent)
            except ValueError as exc:
                self.stats["refused"] += 1
                raise RuleError(str(exc)) from None
            self.stats["hits"] += 1
        self.submit_hit(hit)
        return hit

    # ------------------------------------------------------------ the file
    def _load(self) -> bool:
        """Read the file; True when a phone in it had no ``seen`` yet (the file wants writing again)."""
        undated = False
        if self.path is None or not self.path.exists():
            return undated
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("%s could not be read (%s); phones start uncalibrated", self.path, exc)
            return undated
        phones = data.get("phones") if isinstance(data, dict) else None
        if not isinstance(phones, dict):
            log.warning("%s holds no {\"phones\": {...}} object; phones start uncalibrated", self.path)
            return undated
        now = self.wall_s()
        for token, entry in phones.items():
            # Each phone on its own: a damaged entry costs that phone only, never the ones after it.
            try:
                pad = entry.get("pad")
                # A file from before "seen" was kept: its phones count as seen now, not as long gone.
                undated = undated or "seen" not in entry
                seen = entry.get("seen", now)
                seen = float(seen) if isinstance(seen, (int, float)) and not isinstance(seen, bool) else now
                self._devices[token] = PhoneDevice(
                    token, str(entry["tag"]), pad if isinstance(pad, int) and 1 <= pad <= self.pad_count else None,
                    TouchLatency.from_dict(entry["latency"]), seen_s=seen, saved_seen_s=seen)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                log.warning("%s: phone entry %.8s… could not be read (%s); that phone starts anew", self.path, token, exc)
        return undated

    def _save(self) -> None:
        if self.path is None:
            return
        data = {"phones": {d.token: {"tag": d.tag, "pad": d.pad, "latency": d.latency.to_dict(),
                                     "seen": round(d.seen_s)}
                           for d in self._devices.values()}}
        tmp = self.path.with_suffix(".tmp")
        try:
            # The tokens are the phones' credentials: the file is 0600 before the first byte, never after.
            tmp.unlink(missing_ok=True)
            create_private_file(tmp)
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            restrict(tmp)  # a guard: a tmp file someone else made in between is not left open
            tmp.replace(self.path)
            for device in self._devices.values():
                device.saved_seen_s = device.seen_s
        except OSError as exc:
            log.warning("could not keep the phone pads in %s: %s", self.path, exc)


def _whole_us(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 2**53:
        raise InputError(f"'{name}' must be microseconds on the phone's clock (a number from 0), got {value!r}")
    return int(round(value))


__all__ = ["PhonePads", "PhoneDevice", "UNCALIBRATED"]

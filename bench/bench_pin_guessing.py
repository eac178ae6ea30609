"""Guessing the table PIN from 1,000 addresses: what the table-wide limit leaves an attacker.

Issue 13, item 3. The real app (``create_app``) and table service under
waitress on loopback; the attacker sends ``POST /api/pin`` from 1,000
loopback addresses in turn (127.0.x.y), never the same PIN twice, and plays
as well as it can (:class:`Attack`): as fast as the server answers, other
addresses while one is limited, exactly ``Retry-After`` when PIN entry is
paused. The PIN limiter's clock is a virtual one (the app's ``PIN_CLOCK``),
moved by the request time measured in this run and by those waits, so hours
of guessing take seconds; every answer is the real server's.

* **Baseline, in the same run**: the same attacker against the limit per
  address alone (the table-wide limit switched off, as before this change):
  guesses a minute, the time to find a random 4-digit PIN, the expected time
  for 4, 5 and 6 digits.
* **With the table-wide limit**: the most guesses in any 60 s (must be at
  most 10), guesses in the first 15 minutes and per hour after, the time to
  find a random 4-digit PIN (every guess sent), the expected time for 4, 5
  and 6 digits at the steady rate, and the ratios to the baseline.
* **The table's own phone after a pause**: the attacker stops at a pause and
  a phone from another address enters the right PIN the moment it ends; and
  the same while the attacker goes on, the phone arriving 1 s, 5 s and 30 s
  after the pause ended (the attacker takes the new window's guesses first:
  reported as it is).

Medians of 3 runs (1 with ``--quick``, and 6 virtual hours instead of 24).
"""

from __future__ import annotations

import logging
import math
import random
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import Report, is_quick, median
from web.json_client import JsonClient

ADDRESSES = 1000
MINUTE = 60.0
HOUR = 3600.0


class VirtualClock:
    """The PIN limiter's clock: moved by the attacker, never by itself."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def address(i: int) -> str:
    """The i-th of the attacker's 1,000 addresses (never 127.0.0.1, the table's phone)."""
    i %= ADDRESSES
    return f"127.0.{1 + i // 250}.{2 + i % 250}"


class Table:
    """The app and a service in a temporary directory, under waitress on loopback."""

    def __init__(self, root: Path, pin: str, table_limit: bool, clock: VirtualClock | None) -> None:
        from waitress.server import create_server

        from companion.config import Config
        from companion.service import TableService
        from companion.store import EventStore
        from hardware.sim import SimulatedPads
        from web import create_app

        data = root / f"data-{random.getrandbits(32):08x}"
        data.mkdir(mode=0o700)
        self.store = EventStore(data / "tabletop.sqlite3")
        self.service = TableService(self.store, SimulatedPads(pad_count=4), Config(data_dir=data))
        self.service.start()
        overrides: dict[str, Any] = {"DATA_DIR": data, "PIN": pin, "PIN_CLOCK": clock}
        if not table_limit:
            overrides["PIN_TABLE_ATTEMPTS"] = 10**9  # the limit per address alone, as before the change
        self.app = create_app(overrides, service=self.service)
        self.server = create_server(self.app, host="127.0.0.1", port=0, threads=8, _start=True)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        self.port = int(self.server.effective_port)

    def close(self) -> None:
        """Drain waitress' threads, close its sockets from inside its loop, then stop the service."""
        from waitress import wasyncore

        self.server.task_dispatcher.shutdown(timeout=10)
        try:
            self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map, ignore_all=True))
        except OSError:  # the loop is already ending on its own: close what is left
            wasyncore.close_all(self.server._map, ignore_all=True)
        self.thread.join(timeout=10)
        self.service.stop()
        self.store.close()


class Attack:
    """The best attacker: every PIN of ``digits`` digits in a random order, each from the next free address.

    It guesses as fast as the server answers (``request_s`` of virtual time a
    request). A ``429`` for one address makes it use the others until that one
    may guess again; "PIN entry paused" (the whole table) makes it wait exactly
    ``Retry-After``. A PIN answered ``429`` was not compared, so it is sent again.
    """

    def __init__(self, table: Table, clock: VirtualClock, digits: int, rng: random.Random, request_s: float) -> None:
        self.client = JsonClient(table.port).start()
        self.clock = clock
        self.start = clock.now
        self.request_s = request_s
        self.pins = iter(sorted(range(10**digits), key=lambda _: rng.random()))
        self.digits = digits
        self.free_at = [0.0] * ADDRESSES  # when each address may guess again
        self.turn = 0
        self.checked: list[float] = []  # virtual seconds (from the start) of guesses the server compared
        self.paused = 0  # "PIN entry paused" answers
        #: Virtual time the attack ends at (see until): no wait runs past it.
        self.deadline = math.inf
        self._next: str | None = None

    def _address(self) -> str:
        for _ in range(ADDRESSES):
            i, self.turn = self.turn, (self.turn + 1) % ADDRESSES
            if self.free_at[i] <= self.clock.now:
                return address(i)
        self.clock.now = min(self.free_at)  # every address is waiting: so does the attacker
        return self._address()

    def guess(self) -> tuple[int, dict[str, str]]:
        """Send one guess; the clock moves by the request, or by the wait the answer asks for."""
        if self._next is None:
            self._next = f"{next(self.pins):0{self.digits}d}"
        source = self._address()
        status, headers, body = self.client.call("POST", "/api/pin", {"pin": self._next}, source=source)
        if status == 429:
            wait = int(headers["Retry-After"])
            if "PIN entry paused" in body["error"]:
                self.paused += 1
                self.clock.now = min(self.clock.now + wait, self.deadline)
            else:
                self.free_at[_index(source)] = self.clock.now + wait
            return status, headers
        self._next = None
        self.checked.append(self.clock.now - self.start)
        self.clock.now += self.request_s
        return status, headers

    def until(self, found: bool = True, seconds: float | None = None) -> float | None:
        """Guess until the PIN is found (its virtual seconds) or ``seconds`` have passed (None)."""
        self.deadline = math.inf if seconds is None else self.start + seconds
        try:
            while self.clock.now < self.deadline:
                if self.guess()[0] == 200 and found:
                    return self.clock.now - self.start
            return None
        finally:
            self.deadline = math.inf


def _index(source: str) -> int:
    _, _, third, fourth = source.split(".")
    return (int(third) - 1) * 250 + int(fourth) - 2


def most_in_any_minute(times: list[float]) -> int:
    """The most of ``times`` that fall within one 60 s window."""
    most, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= MINUTE:
            start += 1
        most = max(most, end - start + 1)
    return most


def request_time(root: Path, rng: random.Random, guesses: int) -> float:
    """Seconds one guess request takes on this machine (real clock, median of ``guesses``)."""
    table = Table(root, "1" * 12, table_limit=False, clock=None)
    try:
        client = JsonClient(table.port).start()
        took = []
        for i in range(guesses):
            t0 = time.perf_counter()
            client.call("POST", "/api/pin", {"pin": f"{rng.randrange(100_000):05d}"}, source=address(i))
            took.append(time.perf_counter() - t0)
    finally:
        table.close()
    return median(took)


def attack(root: Path, rng: random.Random, table_limit: bool, digits: int, pin: str, request_s: float,
           seconds: float | None) -> tuple[Attack, float | None]:
    """One attack on a fresh table: until the PIN is found, or for ``seconds`` of virtual time."""
    clock = VirtualClock()
    table = Table(root, pin, table_limit=table_limit, clock=clock)
    try:
        attacker = Attack(table, clock, digits, rng, request_s)
        return attacker, attacker.until(seconds=seconds)
    finally:
        table.close()


def phone_after_pause(root: Path, rng: random.Random, request_s: float, late_s: float | None, rounds: int) -> int:
    """How often (of ``rounds`` pauses) the table's phone gets in after a pause ends.

    ``late_s`` None: the attacker stops at the pause and the phone comes the
    moment it ends. Otherwise the attacker goes on (guessing the moment the
    pause ends) and the phone comes ``late_s`` seconds after the end.
    """
    clock = VirtualClock()
    pin = f"{rng.randrange(100_000):05d}"
    table = Table(root, pin, table_limit=True, clock=clock)
    got_in = 0
    try:
        attacker = Attack(table, clock, 5, rng, request_s)
        for _ in range(rounds):
            paused = attacker.paused
            while attacker.paused == paused:  # guess until the table pauses PIN entry; the clock is then at its end
                attacker.guess()
            if late_s is not None:
                attacker.until(found=False, seconds=clock.now - attacker.start + late_s)
            phone = JsonClient(table.port).start()
            status, _, _ = phone.call("POST", "/api/pin", {"pin": pin}, source="127.0.0.1")
            got_in += status == 200
    finally:
        table.close()
    return got_in


def main() -> Report:
    """Run the benchmark and write bench/results/pin_guessing.{json,txt}."""
    logging.getLogger("web.security").setLevel(logging.ERROR)  # one warning a pause otherwise
    quick = is_quick()
    runs = 1 if quick else 3
    hours = 6 if quick else 24
    rng = random.Random(2026)
    never = "1" * 12  # a 12-digit PIN that 4- or 5-digit guesses never hit: the attack runs the whole time
    report = Report("pin_guessing", params={"addresses": ADDRESSES, "runs": runs, "virtual_hours": hours,
                                            "per_address": "5 a minute", "per_table": "10 a minute"})
    with tempfile.TemporaryDirectory(prefix="tabletop-pin-") as tmp:
        root = Path(tmp)
        request_s = request_time(root, rng, 300)
        # Baseline: the limit per address alone.
        base_runs = [attack(root, rng, False, 5, never, request_s, 3 * MINUTE)[0] for _ in range(runs)]
        base_finds = [attack(root, rng, False, 4, f"{rng.randrange(10_000):04d}", request_s, None)[1]
                      for _ in range(runs)]
        # With the table-wide limit.
        long_runs = [attack(root, rng, True, 5, never, request_s, hours * HOUR)[0] for _ in range(runs)]
        finds = [attack(root, rng, True, 4, f"{rng.randrange(10_000):04d}", request_s, None)[1] for _ in range(runs)]
        phone_ok = phone_after_pause(root, rng, request_s, None, rounds=5)
        phone_racing = {late: phone_after_pause(root, rng, request_s, late, rounds=5) for late in (1.0, 5.0, 30.0)}

    base_per_min = median([len(a.checked) / 3 for a in base_runs])
    per_minute = [most_in_any_minute(a.checked) for a in long_runs]
    first_15 = [sum(1 for t in a.checked if t < 15 * MINUTE) for a in long_runs]
    hourly = [sum(1 for t in a.checked if h * HOUR <= t < (h + 1) * HOUR) for a in long_runs for h in range(1, hours)]
    steady_per_hour = median(hourly)
    found_base = [s for s in base_finds if s is not None]
    found = [s for s in finds if s is not None]

    report.figure("request_ms", request_s * 1000, "ms", "one guess request, real clock (median of 300)")
    report.figure("baseline_guesses_per_minute", base_per_min, "guesses",
                  "guesses compared a minute over 3 min, limit per address alone, 1,000 addresses (median of runs)")
    report.series("baseline_find_4_digits_s", found_base, "s",
                  "time to find a random 4-digit PIN, limit per address alone, every guess sent")
    for digits in (4, 5, 6):
        report.figure(f"baseline_expected_find_{digits}_digits_min", 10**digits / 2 / base_per_min, "min",
                      f"expected time to find a {digits}-digit PIN, limit per address alone (half the PINs)")
    report.figure("most_guesses_in_any_minute", max(per_minute), "guesses",
                  f"most guesses compared in any 60 s over {hours} h, table-wide limit (must be <= 10)")
    report.figure("guesses_first_15_min", median(first_15), "guesses",
                  "guesses compared in the first 15 minutes (median of runs)")
    report.figure("guesses_per_hour_after_the_first", steady_per_hour, "guesses",
                  f"guesses compared per hour, hours 2 to {hours} (median)")
    report.figure("paused_answers_per_hour", median([a.paused for a in long_runs]) / hours, "answers",
                  "'PIN entry paused' answers per hour to an attacker that waits as told")
    report.series("find_4_digits_h", [s / HOUR for s in found], "h",
                  "time to find a random 4-digit PIN, table-wide limit, every guess sent")
    for digits in (4, 5, 6):
        report.figure(f"expected_find_{digits}_digits_days", 10**digits / 2 / steady_per_hour / 24, "days",
                      f"expected time to find a {digits}-digit PIN at the steady rate (half the PINs)")
    report.figure("phone_after_pause_ok", phone_ok, "of 5",
                  "the table's phone enters the right PIN the moment a pause ends (attacker stopped)")
    for late, ok in phone_racing.items():
        report.figure(f"phone_{late:g}s_after_pause_attacked_ok", ok, "of 5",
                      f"the same, attacker still guessing, phone {late:g} s after the pause ended")
    report.ratio("guesses_per_minute_vs_baseline", steady_per_hour / 60, base_per_min,
                 "steady guesses a minute, table-wide limit / limit per address alone")
    report.ratio("find_4_digits_vs_baseline", median(found), median(found_base),
                 "time to find a 4-digit PIN, table-wide limit / limit per address alone (medians)")
    report.notes.append("virtual clock for the limiter (app config PIN_CLOCK), moved by request time and Retry-After; "
                        "every answer from the real server over loopback")
    report.write()
    return report


if __name__ == "__main__":  # pragma: no cover
    main()

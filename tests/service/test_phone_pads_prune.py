"""Old phones are forgotten: phone_pads.json does not grow with every cookie a table ever saw.

A real PhonePads on a real data directory; its wall clock is a counter the test moves (days pass in a line).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from companion.phonepads import FORGET_AFTER_S, MAX_PHONES, PHONE_PADS_FILE, SEEN_SAVE_S, WAITING_S, PhonePads

DAY_S = 24 * 3600


class WallClock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def pads(data: Path, clock: WallClock) -> PhonePads:
    return PhonePads(lambda: 0, lambda hit: None, 8, data, wall_s=clock)


def tags(phones: PhonePads) -> set[str]:
    return {p["tag"] for p in phones.phones()}


def test_a_phone_unseen_for_90_days_is_forgotten_unless_it_holds_a_pad(tmp_path: Path) -> None:
    clock = WallClock()
    phones = pads(tmp_path, clock)
    gone, holder, regular = phones.new_device(), phones.new_device(), phones.new_device()
    keep = {phones.me(holder)["tag"], phones.me(regular)["tag"]}
    phones.assign(phones.me(holder)["tag"], 3)
    phones.calibrate(gone, [40_000] * 10)  # written to the file
    clock.now += FORGET_AFTER_S - DAY_S
    phones.me(regular)  # seen a day before the limit, kept
    clock.now += 2 * DAY_S
    again = pads(tmp_path, clock)  # the service starts again two days after the limit
    assert tags(again) == keep
    assert again.status()["forgotten"] == 1 and again.status()["pads_held"] == [3]
    stored = json.loads((tmp_path / PHONE_PADS_FILE).read_text())["phones"]
    assert set(stored) == {holder, regular}
    assert not again.known(gone)


def test_when_a_phone_was_seen_reaches_the_file_at_most_once_an_hour(tmp_path: Path) -> None:
    clock = WallClock()
    phones = pads(tmp_path, clock)
    token = phones.new_device()
    phones.calibrate(token, [40_000] * 10)
    first = json.loads((tmp_path / PHONE_PADS_FILE).read_text())["phones"][token]["seen"]
    clock.now += SEEN_SAVE_S / 2
    phones.me(token)
    assert json.loads((tmp_path / PHONE_PADS_FILE).read_text())["phones"][token]["seen"] == first
    clock.now += SEEN_SAVE_S
    phones.me(token)
    assert json.loads((tmp_path / PHONE_PADS_FILE).read_text())["phones"][token]["seen"] == round(clock.now)


def test_beyond_the_cap_the_longest_unseen_phones_without_a_pad_go_first(tmp_path: Path) -> None:
    clock = WallClock()
    phones = pads(tmp_path, clock)
    holder = phones.new_device()
    phones.assign(phones.me(holder)["tag"], 1)
    tokens = []
    for _ in range(MAX_PHONES - 1):
        clock.now += 60
        tokens.append(phones.new_device())
    assert phones.status()["phones"] == MAX_PHONES and phones.status()["forgotten"] == 0
    clock.now += 60
    phones.me(tokens[0])  # the oldest newcomer is seen again: the next oldest goes instead
    clock.now += 60
    newest = phones.new_device()
    assert phones.status()["phones"] == MAX_PHONES and phones.status()["forgotten"] == 1
    assert phones.known(holder) and phones.known(tokens[0]) and phones.known(newest)
    assert not phones.known(tokens[1])


def test_a_file_from_before_seen_was_kept_counts_its_phones_as_seen_at_start(tmp_path: Path) -> None:
    (tmp_path / PHONE_PADS_FILE).write_text(json.dumps({"phones": {"tok": {
        "tag": "K7Q", "pad": None,
        "latency": {"latency_us": 40_000, "uncertainty_us": 9_000, "spread_us": 3_000, "taps": 12,
                    "calibrated": True}}}}))
    clock = WallClock()
    phones = pads(tmp_path, clock)
    assert phones.known("tok") and phones.status()["forgotten"] == 0
    clock.now += FORGET_AFTER_S + DAY_S
    assert not pads(tmp_path, clock).known("tok")


def test_the_file_is_private_from_its_first_byte(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    phones = pads(tmp_path, WallClock())
    with caplog.at_level(logging.WARNING, logger="companion.private"):
        for _ in range(3):
            phones.calibrate(phones.new_device(), [40_000] * 10)
    assert (tmp_path / PHONE_PADS_FILE).stat().st_mode & 0o077 == 0
    assert not [r for r in caplog.records if "open to other users" in r.getMessage()]


def test_a_phone_waits_for_a_code_while_it_calls_the_table_holding_no_pad(tmp_path: Path) -> None:
    """The table screen shows the claim codes only then (padcodes.js reads ``waiting``)."""
    clock = WallClock()
    phones = pads(tmp_path, clock)
    assert phones.waiting() == 0  # a table of hardware pads: no phone, no codes on the screen
    token = phones.new_device()
    assert phones.waiting() == 1
    phones.claim(token, phones.codes()[2])
    assert phones.waiting() == 0  # it holds a pad now
    other = phones.new_device()
    clock.now += WAITING_S + 1
    assert phones.waiting() == 0  # its /pad page closed long ago
    phones.me(other)  # the page calls again
    assert phones.waiting() == 1


def test_a_damaged_phone_entry_costs_that_phone_only(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = WallClock()
    phones = pads(tmp_path, clock)
    first, second = phones.new_device(), phones.new_device()
    phones.calibrate(second, [40_000] * 10)
    path = tmp_path / PHONE_PADS_FILE
    data = json.loads(path.read_text())
    del data["phones"][first]["latency"]  # the first entry damaged; the second still whole
    path.write_text(json.dumps(data))
    with caplog.at_level(logging.WARNING):
        again = pads(tmp_path, clock)
    assert again.known(second) and not again.known(first)
    assert again.me(second)["latency"]["calibrated"] is True
    assert "that phone starts anew" in caplog.text


def test_a_claim_code_of_other_digits_is_refused_as_input(tmp_path: Path) -> None:
    from core.errors import InputError

    phones = pads(tmp_path, WallClock())
    token = phones.new_device()
    with pytest.raises(InputError, match="4 digits shown on the table screen"):
        phones.claim(token, "\u0661\u0662\u0663\u0664")  # Arabic-Indic digits: isdigit() says yes

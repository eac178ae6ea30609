"""The /pad page's API on the Flask test client, over a real table service with simulated pads.

A phone is a test client (its own cookie); its clock is the host's
monotonic clock from an offset of its own, so the sync has real stamps.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.browser import csrf_headers, make_app, running_service, seat, trust, wait_until
from flask.testing import FlaskClient

from companion.phonepads import PHONE_PADS_FILE, PhonePads
from companion.service import TableService

PHONE_OFFSET_US = 3_000_000_000


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[TableService, Any]]:
    with running_service(tmp_path / "data") as service:
        yield service, make_app(service, tmp_path / "data")


def phone_now() -> int:
    return time.monotonic_ns() // 1000 + PHONE_OFFSET_US


class Phone:
    """One phone's session on the test client: the CSRF header and the sync as pad.js makes it."""

    def __init__(self, app: Any) -> None:
        self.client: FlaskClient = app.test_client()
        self.headers = csrf_headers(self.client)
        self.answered: list[dict[str, int]] = []

    def post(self, url: str, body: Any) -> Any:
        return self.client.post(url, json=body, headers=self.headers)

    def sync(self, rounds: int = 20) -> None:
        for _ in range(rounds):
            body: dict[str, Any] = {"t1_us": phone_now()}
            if self.answered:
                body["answered"] = self.answered
            response = self.post("/api/pad/sync", body)
            assert response.status_code == 200, response.get_json()
            self.answered = [{"id": response.get_json()["id"], "t4_us": phone_now()}]

    def me(self) -> dict[str, Any]:
        return self.client.get("/api/pad").get_json()

    def claim_free_pad(self, pad: int) -> None:
        code = self.client.get("/api/pad/codes").get_json()["codes"][str(pad)]
        response = self.post("/api/pad/claim", {"code": code})
        assert response.status_code == 200, response.get_json()


def test_the_pad_page_is_one_slap_area_and_each_phone_gets_a_tag(table: tuple[TableService, Any]) -> None:
    _, app = table
    a, b = Phone(app), Phone(app)
    page = a.client.get("/pad")
    assert page.status_code == 200
    assert b'id="pp-area"' in page.data and b"pad.js" in page.data
    assert a.me()["tag"] != b.me()["tag"]
    assert a.me()["pad"] is None and a.me()["latency"]["calibrated"] is False


def test_a_synced_phone_that_claimed_a_pad_slaps_it_with_its_uncertainty(table: tuple[TableService, Any]) -> None:
    service, app = table
    seat(service, ["Ann", "Bo"])
    service.submit("update_player", {"player": "Bo", "pad": 2})
    phone = Phone(app)
    phone.sync()
    sync = phone.me()["sync"]
    assert sync["rounds"] >= 19 and sync["error_ms"] < 30
    phone.claim_free_pad(2)
    assert phone.me()["player"]["name"] == "Bo"
    felt = time.monotonic_ns() // 1000
    response = phone.post("/api/pad/hit", {"at_us": felt + PHONE_OFFSET_US + 60_000})  # stamped 60 ms late
    assert response.status_code == 202, response.get_json()
    hit = response.get_json()["hit"]
    assert hit["pad"] == 2
    # Uncalibrated: 60 ms is taken off, give or take 48 ms, plus the sync's error.
    assert abs(hit["at_us"] - felt) <= hit["uncertainty_us"]
    assert hit["uncertainty_us"] > 48_000
    wait_until(lambda: any(h["pad"] == 2 for h in service.snapshot()[1]["recent_hits"]), "the phone's hit on the table")


def test_a_phone_cannot_slap_for_another_player(table: tuple[TableService, Any]) -> None:
    service, app = table
    seat(service, ["Ann", "Bo"])
    mine = Phone(app)
    mine.sync()
    code_of_pad_1 = mine.client.get("/api/pad/codes").get_json()["codes"]["1"]
    mine.claim_free_pad(1)
    # A hit names no pad: the phone's own is used, so it cannot name someone else's.
    response = mine.post("/api/pad/hit", {"at_us": phone_now(), "pad": 2})
    assert response.status_code == 400 and "unknown field 'pad'" in response.get_json()["error"]
    other = Phone(app)
    other.sync()
    response = other.post("/api/pad/hit", {"at_us": phone_now()})
    assert response.status_code == 409 and "holds no pad" in response.get_json()["error"]
    # Pad 1's code is gone once claimed: the other phone cannot take it.
    assert "1" not in other.client.get("/api/pad/codes").get_json()["codes"]
    response = other.post("/api/pad/claim", {"code": code_of_pad_1})
    assert response.status_code == 409 and "no free pad has that code" in response.get_json()["error"]
    assert mine.me()["pad"] == 1 and other.me()["pad"] is None


def test_only_the_pin_holder_assigns_pads_and_moves_them(table: tuple[TableService, Any]) -> None:
    _, app = table
    a, b = Phone(app), Phone(app)
    body = {"phone": a.me()["tag"], "pad": 3}
    assert a.post("/api/pad/assign", body).status_code == 403
    assert a.client.get("/api/pad/phones", headers=a.headers).status_code == 403
    holder = app.test_client()
    headers = trust(holder)
    response = holder.post("/api/pad/assign", json=body, headers=headers)
    assert response.status_code == 200 and response.get_json()["pad"] == 3
    response = holder.post("/api/pad/assign", json={"phone": b.me()["tag"], "pad": 3}, headers=headers)
    assert response.status_code == 200
    assert a.me()["pad"] is None and b.me()["pad"] == 3  # moved, never shared
    tags = [p["tag"] for p in holder.get("/api/pad/phones", headers=headers).get_json()["phones"]]
    assert sorted(tags) == sorted([a.me()["tag"], b.me()["tag"]])
    for bad, message in [({"phone": "ZZZ", "pad": 1}, "no phone shows"),
                         ({"phone": b.me()["tag"], "pad": 9}, "from 1 to 4"),
                         ({"phone": 5, "pad": 1}, "tag")]:
        response = holder.post("/api/pad/assign", json=bad, headers=headers)
        assert 400 <= response.status_code < 500 and message in response.get_json()["error"]
    assert b.me()["pad"] == 3


def test_a_phone_not_synced_is_refused_with_the_reason(table: tuple[TableService, Any]) -> None:
    _, app = table
    phone = Phone(app)
    phone.claim_free_pad(1)
    response = phone.post("/api/pad/hit", {"at_us": phone_now()})
    assert response.status_code == 409 and "not synced" in response.get_json()["error"]


@pytest.mark.parametrize("url, body, status, message", [
    ("/api/pad/sync", {}, 400, "'t1_us' is missing"),
    ("/api/pad/sync", {"t1_us": -5}, 400, "microseconds"),
    ("/api/pad/sync", {"t1_us": 5, "restart": "yes"}, 400, "true or false"),
    ("/api/pad/sync", {"t1_us": 5, "answered": {"id": 1}}, 400, "list"),
    ("/api/pad/sync", {"t1_us": 5, "answered": [{"id": "a", "t4_us": 1}]}, 400, "each of 'answered'"),
    ("/api/pad/sync", {"t1_us": 5, "clock": 1}, 400, "unknown field"),
    ("/api/pad/hit", {}, 400, "'at_us' is missing"),
    ("/api/pad/hit", {"at_us": "now"}, 400, "microseconds"),
    ("/api/pad/hit", {"at_us": 5, "kind": "punch"}, 400, "'kind' must be one of"),
    ("/api/pad/claim", {}, 400, "'code' is missing"),
    ("/api/pad/claim", {"code": 1234}, 400, "digits"),
    ("/api/pad/calibration", {}, 400, "missing"),
    ("/api/pad/calibration", {"asynchronies_us": "fast"}, 400, "list"),
    ("/api/pad/calibration", {"asynchronies_us": [1000] * 3}, 409, "at least 8 taps"),
])
def test_bad_input_is_a_clear_4xx_and_changes_nothing(table: tuple[TableService, Any], url: str, body: Any,
                                                       status: int, message: str) -> None:
    _, app = table
    phone = Phone(app)
    before = phone.me()
    response = phone.post(url, body)
    assert response.status_code == status, response.get_json()
    assert message in response.get_json()["error"]
    after = phone.me()
    assert after["latency"] == before["latency"] and after["pad"] == before["pad"]
    assert after["sync"]["rounds"] == before["sync"]["rounds"]


def test_posts_need_the_csrf_token(table: tuple[TableService, Any]) -> None:
    _, app = table
    client = app.test_client()
    client.get("/pad")
    assert client.post("/api/pad/sync", json={"t1_us": 5}).status_code == 403


def test_a_calibration_is_kept_per_phone_across_a_restart(table: tuple[TableService, Any], tmp_path: Path) -> None:
    service, app = table
    a, b = Phone(app), Phone(app)
    taps = [38_000, 41_000, 40_000, 43_000, 39_000, 42_000, 40_000, 37_000, 44_000, 40_000]
    response = a.post("/api/pad/calibration", {"asynchronies_us": taps})
    assert response.status_code == 200
    latency = response.get_json()["latency"]
    assert latency["calibrated"] and latency["latency_us"] == 40_000
    assert a.me()["latency"] == latency and b.me()["latency"]["calibrated"] is False
    # The file outlives the service: a new PhonePads on the same data directory knows the phone.
    again = PhonePads(lambda: 0, lambda hit: None, 4, tmp_path / "data")
    assert (tmp_path / "data" / PHONE_PADS_FILE).stat().st_mode & 0o077 == 0
    tags = {p["tag"]: p for p in again.phones()}
    assert tags[a.me()["tag"]]["latency"] == latency
    response = a.client.delete("/api/pad/calibration", headers=a.headers)
    assert response.status_code == 200 and response.get_json()["latency"]["calibrated"] is False


def test_health_counts_phone_hits_refusals_and_the_pads_phones_hold(table: tuple[TableService, Any]) -> None:
    service, app = table
    seat(service, ["Ann", "Bo"])
    before = app.test_client().get("/api/health").get_json()["phone_pads"]
    assert before == {"phones": 0, "pads_held": [], "rounds": 0, "hits": 0, "refused": 0, "forgotten": 0}
    synced, unsynced = Phone(app), Phone(app)
    synced.sync(rounds=10)
    synced.claim_free_pad(2)
    unsynced.claim_free_pad(1)
    assert synced.post("/api/pad/hit", {"at_us": phone_now()}).status_code == 202
    assert unsynced.post("/api/pad/hit", {"at_us": phone_now()}).status_code == 409
    health = app.test_client().get("/api/health").get_json()
    assert health["phone_pads"] == {"phones": 2, "pads_held": [1, 2], "rounds": 9, "hits": 1, "refused": 1,
                                    "forgotten": 0}
    # The source's own count stays the source's: the phone's hit is not a simulated pad's.
    assert health["pads"]["hits"] == 0


def test_a_sync_round_is_stamped_when_the_request_reached_the_app(table: tuple[TableService, Any]) -> None:
    service, app = table
    phone = Phone(app)
    late = {"by_us": 0}
    real_sync = service.phone_pads.sync

    def slow_sync(*args: Any, **kwargs: Any) -> Any:
        # Work between arrival and the handler (a busy table): t2 must not move with it.
        started = service.source.now_us()
        time.sleep(0.03)
        late["by_us"] = service.source.now_us() - started
        return real_sync(*args, **kwargs)

    service.phone_pads.sync = slow_sync  # type: ignore[method-assign]
    before = service.source.now_us()
    answer = phone.post("/api/pad/sync", {"t1_us": phone_now()}).get_json()
    assert late["by_us"] >= 30_000
    assert before <= answer["t2_us"] < before + 30_000 <= answer["t3_us"]

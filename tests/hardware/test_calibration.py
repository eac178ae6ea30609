"""Pad calibration: the pure guided-check logic (data-driven), and the JSON API on a real
TableService whose source is a real SerialPadBox talking to the PadBoxEmulator over its pty."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.calibration import Calibrator, no_levels_message
from companion.thresholds import CheckSamples, LastPeaks, find_contacts, suggest_thresholds
from core.errors import InputError
from companion.service import TableService
from hardware import protocol as p
from hardware.emulator import PadBoxEmulator
from hardware.padbox import SerialPadBox

from helpers.browser import make_app, trust
from helpers.calibration import WAIT_S, box_service, make_service, rung_down, sim_service, stop_service  # noqa: F401
from helpers.padbox import emu, private_emulator_dir  # noqa: F401


# ---------------------------------------------------------------- pure logic, data-driven

Z = [0, 0, 0, 0]

#: Each case: frames (per-pad peaks of LVL lines) of the two phases and what the check must say.
CASES: list[dict[str, Any]] = [
    {
        "id": "clean slaps and touches, a little crosstalk on the neighbour",
        "pad": 2,
        "slap": [Z, [0, 820, 90, 0], [0, 300, 0, 0], Z, [0, 760, 70, 0], Z, [0, 900, 110, 10], Z],
        "touch": [Z, [0, 110, 0, 0], Z, [0, 95, 0, 0], Z, [0, 130, 0, 0], Z],
        "slaps": [820, 760, 900], "touches": [110, 95, 130], "ignored": [],
        "suggested": {"slap": 314, "touch": 44}, "separable": True,
        "crosstalk": {3: (12, "cancelled", 110), 1: (0, "none", 0), 4: (0, "none", 0)},
        "problems": [],
    },
    {
        "id": "a neighbour picking up most of the slap is a risk",
        "pad": 1,
        "slap": [Z, [700, 560, 0, 0], Z, [800, 600, 0, 0], Z],
        "touch": [[80, 0, 0, 0], Z],
        "slaps": [700, 800], "touches": [80], "ignored": [],
        "suggested": {"slap": 237, "touch": 40}, "separable": True,
        "crosstalk": {2: (80, "risk", 560)},
        "problems": ["pad 2 read 80%", "crosstalk limit of 55%"],
    },
    {
        "id": "touches as hard as slaps cannot be separated",
        "pad": 3,
        "slap": [Z, [0, 0, 500, 0], Z, [0, 0, 600, 0], Z],
        "touch": [[0, 0, 550, 0], Z, [0, 0, 100, 0], Z, [0, 0, 120, 0]],
        "slaps": [500, 600], "touches": [550, 100, 120], "ignored": [],
        # overlap: geometric mean of the median touch (120) and the median slap (550)
        "suggested": {"slap": 257, "touch": 45}, "separable": False,
        "crosstalk": {},
        "problems": ["hardest touch (550) reached the weakest slap (500)"],
    },
    {
        "id": "no touches: the slap threshold from the slaps alone, touch unchanged",
        "pad": 1,
        "slap": [[600, 0], [0, 0], [640, 0]],
        "touch": [[5, 0], [10, 0]],
        "slaps": [600, 640], "touches": [], "ignored": [],
        "suggested": {"slap": 300, "touch": None}, "separable": None,
        "crosstalk": {2: (0, "none", 0)},
        "problems": ["no light touch seen on pad 1"],
    },
    {
        "id": "no slaps: no suggestion, and a hint",
        "pad": 2,
        "slap": [[0, 3], [0, 12]],
        "touch": [[0, 90]],
        "slaps": [], "touches": [90], "ignored": [],
        "suggested": None, "separable": None,
        "crosstalk": {1: (0, "none", 0)},
        "problems": ["no slap seen on pad 2"],
    },
    {
        "id": "a stray light contact in the slap phase is ignored",
        "pad": 1,
        "slap": [[800, 0], [0, 0], [60, 0], [0, 0], [850, 0]],
        "touch": [[100, 0]],
        "slaps": [800, 850], "touches": [100], "ignored": [60],
        "suggested": {"slap": 283, "touch": 45}, "separable": True,
        "crosstalk": {},
        "problems": [],
    },
    {
        "id": "ringing is one slap; a slap landing on the ringing is a second one",
        "pad": 1,
        "slap": [[800, 0], [800, 0], [400, 0], [200, 0], [700, 0], [350, 0], [170, 0], [0, 0]],
        "touch": [[100, 0], [50, 0], [0, 0]],
        "slaps": [800, 700], "touches": [100], "ignored": [],
        "suggested": {"slap": 265, "touch": 45}, "separable": True,
        "crosstalk": {},
        "problems": [],
    },
    {
        "id": "crosstalk in the frame after the onset counts, later ones do not",
        "pad": 1,
        "slap": [[800, 0, 0], [400, 320, 0], [200, 0, 0], [100, 0, 500], [0, 0, 0]],
        "touch": [[90, 0, 0]],
        "slaps": [800], "touches": [90], "ignored": [],
        "suggested": {"slap": 268, "touch": 42}, "separable": True,
        "crosstalk": {2: (40, "cancelled", 320), 3: (0, "none", 0)},
        "problems": [],
    },
    {
        "id": "each pad's own crosstalk limit decides",
        "pad": 2,
        "xtalk": {1: 10, 3: 50},
        "slap": [[96, 800, 96], [0, 0, 0]],
        "touch": [[0, 100, 0]],
        "slaps": [800], "touches": [100], "ignored": [],
        "suggested": {"slap": 283, "touch": 45}, "separable": True,
        "crosstalk": {1: (12, "risk", 96), 3: (12, "cancelled", 96)},
        "problems": ["pad 1 read 12%"],
    },
    {
        "id": "a very quiet pad: the suggestions stay in the box's ranges, touch below slap",
        "pad": 1,
        "slap": [[40, 0], [0, 0], [42, 0]],
        "touch": [[22, 0]],
        "slaps": [40, 42], "touches": [22], "ignored": [],
        "suggested": {"slap": 30, "touch": 21}, "separable": True,
        "crosstalk": {},
        "problems": [],
    },
]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_suggest_thresholds(case: dict[str, Any]) -> None:
    samples = CheckSamples.from_dict(case)
    kwargs = {"xtalk_percent": case["xtalk"]} if "xtalk" in case else {}
    result = suggest_thresholds(samples, **kwargs).to_dict()
    assert result["slaps"] == case["slaps"]
    assert result["touches"] == case["touches"]
    assert result["ignored"] == case["ignored"]
    assert result["suggested"] == case["suggested"]
    assert result["separable"] == case["separable"]
    by_pad = {x["pad"]: (x["percent"], x["verdict"], x["peak"]) for x in result["crosstalk"]}
    for pad, expected in case["crosstalk"].items():
        assert by_pad[pad] == expected, result["crosstalk"]
    assert samples.pad not in by_pad
    for text in case["problems"]:
        assert any(text in problem for problem in result["problems"]), result["problems"]
    if not case["problems"]:
        assert result["problems"] == []
    suggested = result["suggested"]
    if suggested:
        lo, hi, _ = p.PARAMS["slap"]
        assert lo <= suggested["slap"] <= hi
        if suggested["touch"] is not None:
            assert 0 <= suggested["touch"] < suggested["slap"]


def test_crosstalk_report_is_sorted_worst_first() -> None:
    samples = CheckSamples(1, slap=[[800, 80, 400, 0]], touch=[[100, 0, 0, 0]])
    ratios = [x["ratio"] for x in suggest_thresholds(samples).crosstalk]
    assert ratios == sorted(ratios, reverse=True) and ratios[0] == 0.5


def test_a_pad_outside_the_frames_is_refused() -> None:
    with pytest.raises(InputError, match="pad 5"):
        suggest_thresholds(CheckSamples(5, slap=[[1, 2, 3, 4]]))


@pytest.mark.parametrize(
    "peaks, contacts",
    [
        ([0, 0, 0], []),
        ([21, 0, 20, 0], [21]),  # at the floor is noise
        ([800, 800, 400, 200, 100, 50, 25, 12], [800]),  # the emulator's decay: one contact
        ([800, 300, 350, 0], [800]),  # a bump while ringing is not a new contact
        ([800, 100, 700, 0, 0, 600], [800, 700, 600]),
    ],
)
def test_find_contacts(peaks: list[int], contacts: list[int]) -> None:
    assert [c.peak for c in find_contacts(peaks)] == contacts


def test_last_peaks_follow_the_latest_contact_per_pad() -> None:
    last = LastPeaks(2)
    for at, frame in enumerate([[0, 0], [800, 0], [400, 90], [200, 45], [0, 0], [300, 0]]):
        last.feed(frame, at)
    assert last.to_list() == [{"pad": 1, "peak": 300, "at_us": 5}, {"pad": 2, "peak": 90, "at_us": 2}]


def test_no_levels_messages_say_what_to_do() -> None:
    for name in ("sim", "gpio", "script", "other"):
        message = no_levels_message(name)
        assert "no levels" in message or "does not measure levels" in message
        assert "--pads serial" in message and "tabletop emulate" in message


# ---------------------------------------------------------------- the API on a real pad box (emulated)


def trusted_client(app: Flask) -> tuple[FlaskClient, dict[str, str]]:
    """A test client that entered the PIN, and the CSRF header to send."""
    client = app.test_client()
    return client, trust(client)


def wait_for(client: FlaskClient, cond: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    """Poll GET /api/calibration/levels (as the page does) until ``cond`` holds."""
    deadline = time.monotonic() + WAIT_S
    data: dict[str, Any] = {}
    while time.monotonic() < deadline:
        data = client.get("/api/calibration/levels").get_json()
        if cond(data):
            return data
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}; last answer {data!r}")


def test_levels_and_last_peaks_show_the_box(tmp_path: Path, emu: PadBoxEmulator, box_service: TableService) -> None:
    client = make_app(box_service, tmp_path / "data").test_client()
    info = client.get("/api/calibration").get_json()
    assert info["supported"] is True and info["connected"] is True and info["pads"] == 4
    assert info["settings"]["3"]["slap"] == p.PARAMS["slap"][2]
    wait_for(client, lambda d: d["live"], "the box to stream levels")
    assert emu.streaming

    emu.strike(3, 800)
    emu.strike(1, 90)
    data = wait_for(client, lambda d: (d["last_peaks"][2] or {}).get("peak") == 800, "pad 3's peak")
    assert (data["last_peaks"][0] or {}).get("peak") == 90
    assert data["last_peaks"][1] is None and data["last_peaks"][3] is None
    assert len(data["levels"]) == len(data["peaks"]) == 4


def test_streaming_stops_when_nobody_watches(tmp_path: Path, emu: PadBoxEmulator, box_service: TableService) -> None:
    box_service.calibration.idle_s = 0.3
    client = make_app(box_service, tmp_path / "data").test_client()
    wait_for(client, lambda d: d["live"], "the box to stream levels")
    deadline = time.monotonic() + WAIT_S
    while emu.streaming and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not emu.streaming


def test_thresholds_set_reach_the_box_at_once(tmp_path: Path, emu: PadBoxEmulator, box_service: TableService) -> None:
    client, headers = trusted_client(make_app(box_service, tmp_path / "data"))
    response = client.post("/api/calibration/thresholds", json={"pad": 2, "slap": 310, "touch": 75}, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["settings"]["slap"] == 310
    assert emu.settings[2]["slap"] == 310 and emu.settings[2]["touch"] == 75
    assert emu.eeprom[2]["slap"] == p.PARAMS["slap"][2]  # not saved yet
    assert emu.strike(2, 300) == "T"  # the box judges with the new threshold

    response = client.post("/api/calibration/thresholds", json={"pad": 4, "touch": 0, "save": True}, headers=headers)
    assert response.status_code == 200 and response.get_json()["saved"] is True
    assert emu.eeprom[4]["touch"] == 0 and emu.eeprom[2]["slap"] == 310
    assert client.get("/api/calibration").get_json()["settings"]["4"]["touch"] == 0

    assert client.post("/api/calibration/save", json={}, headers=headers).status_code == 200
    assert "SAVE" in " ".join(emu.commands)


BAD_BODIES = [
    ({"slap": 300}, 400, "'pad' is missing"),
    ({"pad": 0, "slap": 300}, 400, "from 1 to 4"),
    ({"pad": 5, "slap": 300}, 400, "from 1 to 4"),
    ({"pad": "1", "slap": 300}, 400, "from 1 to 4"),
    ({"pad": True, "slap": 300}, 400, "from 1 to 4"),
    ({"pad": 1}, 400, "send 'slap' and/or 'touch'"),
    ({"pad": 1, "slap": 0}, 400, "from 1 to 1023"),
    ({"pad": 1, "slap": 1024}, 400, "from 1 to 1023"),
    ({"pad": 1, "slap": 250.5}, 400, "whole number"),
    ({"pad": 1, "slap": 300, "touch": -1}, 400, "'touch'"),  # the valid slap must not be applied either
    ({"pad": 1, "slap": 300, "touch": 5000}, 400, "'touch'"),
    ({"pad": 1, "slap": 300, "save": "yes"}, 400, "'save' must be true or false"),
    ({"pad": 1, "slap": 300, "mask": 10}, 400, "unknown field 'mask'"),
    ([1, 300], 400, "JSON object"),
]


@pytest.mark.parametrize("body, status, message", BAD_BODIES, ids=[str(b[0]) for b in BAD_BODIES])
def test_bad_threshold_input_is_refused_and_changes_nothing(
    tmp_path: Path, emu: PadBoxEmulator, box_service: TableService, body: Any, status: int, message: str
) -> None:
    client, headers = trusted_client(make_app(box_service, tmp_path / "data"))
    before = {pad: dict(s) for pad, s in emu.settings.items()}
    response = client.post("/api/calibration/thresholds", json=body, headers=headers)
    assert response.status_code == status
    assert message in response.get_json()["error"]
    assert emu.settings == before
    assert not any(c.startswith("SET") for c in emu.commands)


def test_not_json_and_no_pin_and_no_csrf(tmp_path: Path, emu: PadBoxEmulator, box_service: TableService) -> None:
    app = make_app(box_service, tmp_path / "data")
    client, headers = trusted_client(app)
    response = client.post("/api/calibration/thresholds", data="pad=1", headers=headers)
    assert response.status_code == 415 and "JSON" in response.get_json()["error"]

    stranger = app.test_client()
    token = stranger.get("/api/session").get_json()["csrf_token"]
    response = stranger.post("/api/calibration/thresholds", json={"pad": 1, "slap": 300}, headers={"X-CSRF-Token": token})
    assert response.status_code == 403 and "PIN" in response.get_json()["error"]
    response = client.post("/api/calibration/thresholds", json={"pad": 1, "slap": 300})
    assert response.status_code == 403 and "CSRF" in response.get_json()["error"]
    assert emu.settings[1]["slap"] == p.PARAMS["slap"][2]


def test_guided_check_with_the_emulator(tmp_path: Path, emu: PadBoxEmulator, box_service: TableService) -> None:
    client, headers = trusted_client(make_app(box_service, tmp_path / "data"))
    wait_for(client, lambda d: d["live"], "the box to stream levels")
    response = client.post("/api/calibration/check", json={"action": "start", "pad": 3}, headers=headers)
    assert response.status_code == 200
    assert response.get_json()["check"] == {"pad": 3, "phase": "slap", "slaps": 0, "touches": 0, "wants": 3}

    for n, peak in enumerate((800, 700, 900), start=1):
        emu.strike(3, peak)
        emu.strike(4, peak // 4)  # the table shakes: pad 4 reads a quarter
        wait_for(client, lambda d, n=n: d["check"]["slaps"] == n, f"slap {n} to be seen")
        wait_for(client, rung_down, "pad 3 to ring down")
    response = client.post("/api/calibration/check", json={"action": "touch"}, headers=headers)
    assert response.get_json()["check"]["phase"] == "touch"
    for n, peak in enumerate((100, 120, 90), start=1):
        emu.strike(3, peak)
        wait_for(client, lambda d, n=n: d["check"]["touches"] == n, f"touch {n} to be seen")
        wait_for(client, rung_down, "pad 3 to ring down")
    response = client.post("/api/calibration/check", json={"action": "finish"}, headers=headers)
    result = response.get_json()["result"]
    assert result["slaps"] == [800, 700, 900] and result["touches"] == [100, 120, 90]
    assert result["suggested"] == {"slap": 290, "touch": 42}
    xtalk = {x["pad"]: x for x in result["crosstalk"]}
    assert xtalk[4]["percent"] == 25 and xtalk[4]["verdict"] == "cancelled"
    assert xtalk[1]["verdict"] == "none"
    assert client.get("/api/calibration/levels").get_json()["check"] is None


def test_the_sampler_takes_every_lvl_line_as_it_arrives(emu: PadBoxEmulator) -> None:
    """SerialPadBox hands each LVL line to the calibrator: a sampler that almost never polls still sees them all."""
    source = SerialPadBox(port=emu.path, hello_timeout_s=3.0, retry_s=0.1)
    source.start()
    calibrator = Calibrator(source, poll_s=60.0)  # polling alone would read one frame a minute

    def wait(cond: Callable[[dict[str, Any]], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if cond(calibrator.levels()):
                return
            time.sleep(0.02)
        pytest.fail(f"timed out waiting for {what}; last answer {calibrator.levels()!r}")

    try:
        assert source.wait_connected(WAIT_S), source.status()
        wait(lambda d: d["live"], "the box to stream levels")
        calibrator.start_check(3)
        for n, peak in enumerate((800, 700, 900), start=1):
            emu.strike(3, peak)
            wait(lambda d, n=n: (d["check"] or {}).get("slaps") == n, f"slap {n} to be seen")
            wait(rung_down, "pad 3 to ring down")
        assert calibrator.finish_check()["slaps"] == [800, 700, 900]
    finally:
        calibrator.close()
        source.stop()
    assert not emu.streaming  # closing the calibrator switched streaming off


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"action": "touch"}, 409, "no guided check is running"),
        ({"action": "finish"}, 409, "no guided check is running"),
        ({"action": "start"}, 400, "'pad' is missing"),
        ({"action": "start", "pad": 9}, 400, "from 1 to 4"),
        ({"action": "dance"}, 400, "start, touch, finish, cancel"),
        ({"action": "touch", "pad": 2}, 400, "start action only"),
    ],
)
def test_guided_check_bad_requests(
    tmp_path: Path, box_service: TableService, body: dict[str, Any], status: int, message: str
) -> None:
    client, headers = trusted_client(make_app(box_service, tmp_path / "data"))
    response = client.post("/api/calibration/check", json=body, headers=headers)
    assert response.status_code == status and message in response.get_json()["error"]


def test_unplugged_box_is_a_clear_error(tmp_path: Path, emu: PadBoxEmulator, box_service: TableService) -> None:
    client, headers = trusted_client(make_app(box_service, tmp_path / "data"))
    emu.unplug()
    deadline = time.monotonic() + WAIT_S
    while box_service.source.connected and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.05)
    response = client.post("/api/calibration/thresholds", json={"pad": 1, "slap": 300}, headers=headers)
    assert response.status_code == 503 and "no pad box connected" in response.get_json()["error"]
    assert client.get("/api/calibration/levels").get_json()["connected"] is False


def test_simulated_pads_have_no_levels(tmp_path: Path, sim_service: TableService) -> None:
    app = make_app(sim_service, tmp_path / "data")
    client, headers = trusted_client(app)
    info = client.get("/api/calibration").get_json()
    assert info["supported"] is False and "simulated" in info["message"] and "--pads serial" in info["message"]
    levels = client.get("/api/calibration/levels").get_json()
    assert levels["supported"] is False and levels["message"] == info["message"]
    page = client.get("/calibrate")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'id="no-levels"' in html and "The pads are simulated, so there are no levels to show" in html
    assert 'id="cal-pads"' not in html  # no meters or sliders
    for url, body in (
        ("/api/calibration/thresholds", {"pad": 1, "slap": 300}),
        ("/api/calibration/check", {"action": "start", "pad": 1}),
        ("/api/calibration/save", {}),
    ):
        response = client.post(url, json=body, headers=headers)
        assert response.status_code == 409, url
        assert "no levels" in response.get_json()["error"]


def test_the_table_page_links_to_calibration(tmp_path: Path, sim_service: TableService) -> None:
    html = make_app(sim_service, tmp_path / "data").test_client().get("/").get_data(as_text=True)
    assert 'href="/calibrate"' in html


def test_a_reset_box_streams_again_and_shows_its_saved_settings(
    tmp_path: Path, emu: PadBoxEmulator, box_service: TableService
) -> None:
    client, headers = trusted_client(make_app(box_service, tmp_path / "data"))
    wait_for(client, lambda d: d["live"], "the box to stream levels")
    assert client.post("/api/calibration/thresholds", json={"pad": 1, "slap": 333}, headers=headers).status_code == 200
    emu.reset()  # streaming is off after a reset, and the unsaved threshold is gone
    assert not emu.streaming and emu.settings[1]["slap"] == p.PARAMS["slap"][2]
    deadline = time.monotonic() + WAIT_S
    while not emu.streaming and time.monotonic() < deadline:
        client.get("/api/calibration/levels")
        time.sleep(0.05)
    assert emu.streaming
    emu.strike(2, 640)
    wait_for(client, lambda d: (d["last_peaks"][1] or {}).get("peak") == 640, "pad 2's peak after the reset")
    assert client.get("/api/calibration").get_json()["settings"]["1"]["slap"] == p.PARAMS["slap"][2]


def test_gpio_buttons_have_no_levels(tmp_path: Path, mock_factory: Any) -> None:
    from hardware.gpio import GpioPads

    service = make_service(tmp_path, GpioPads([17, 27, 22, 23], pin_factory=mock_factory))
    try:
        client, headers = trusted_client(make_app(service, tmp_path / "data"))
        info = client.get("/api/calibration").get_json()
        assert info["supported"] is False and info["source"] == "gpio"
        assert "buttons on the Pi's GPIO" in info["message"] and "--pads serial" in info["message"]
        html = client.get("/calibrate").get_data(as_text=True)
        assert "buttons on the Pi&#39;s GPIO" in html or "buttons on the Pi's GPIO" in html
        response = client.post("/api/calibration/thresholds", json={"pad": 1, "slap": 300}, headers=headers)
        assert response.status_code == 409 and "no levels" in response.get_json()["error"]
    finally:
        stop_service(service)

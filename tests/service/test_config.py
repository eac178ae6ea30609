"""Config: every key optional, bad keys named with their value and what is valid."""

from pathlib import Path

import pytest

from companion.config import Config, load_config, parse_config
from core.errors import ConfigError


def test_no_file_gives_laptop_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("TABLETOP_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    config = load_config()
    assert config.pads_source == "sim"
    assert config == Config()


def test_full_file_is_read(tmp_path: Path):
    path = tmp_path / "c.toml"
    path.write_text(
        """
data_dir = "%s"
[pads]
source = "gpio"
count = 3
[pads.gpio]
pins = [5, 6, 13]
mask_ms = 20
[server]
port = 9000
pin = "4821"
[[players]]
name = "Ann"
pad = 1
[games.taco]
false_start_ms = 120
"""
        % tmp_path
    )
    config = load_config(path)
    assert config.pads_source == "gpio"
    assert config.gpio_pins == (5, 6, 13)
    assert config.gpio_mask_ms == 20.0
    assert config.server_port == 9000 and config.server_pin == "4821"
    assert config.players[0].name == "Ann" and config.players[0].pad == 1
    assert config.games == {"taco": {"false_start_ms": 120}}
    assert config.database_path.parent == tmp_path


@pytest.mark.parametrize(
    "doc, words",
    [
        ({"pads": {"source": "usb"}}, ["pads.source", "'usb'", "'sim'"]),
        ({"pads": {"count": 0}}, ["pads.count", "0", "1 to 16"]),
        ({"pads": {"count": True}}, ["pads.count", "True"]),
        ({"pads": {"gpio": {"pins": [17, 17]}}}, ["pads.gpio.pins", "at most once"]),
        ({"pads": {"gpio": {"pins": [40]}}}, ["pads.gpio.pins", "40", "2 to 27"]),
        ({"server": {"port": 70000}}, ["server.port", "70000"]),
        ({"server": {"pin": "12"}}, ["server.pin", "4 to 12 digits"]),
        ({"server": {"pin_on_screen": "yes"}}, ["server.pin_on_screen", "true or false"]),
        ({"sever": {"port": 1}}, ["'sever'", "not known", "server.port"]),
        ({"players": [{"name": "A", "pad": 1}, {"name": "a", "pad": 2}]}, ["players", "each player name"]),
        ({"players": [{"name": "A", "pad": 1}, {"name": "B", "pad": 1}]}, ["players", "each pad"]),
        ({"players": [{"name": "A", "hat": 1}]}, ["players[1].hat", "not known"]),
    ],
)
def test_bad_values_name_key_value_and_what_is_valid(doc, words):
    with pytest.raises(ConfigError) as info:
        parse_config(doc)
    for word in words:
        assert word in str(info.value)


def test_invalid_toml_and_missing_file_are_clear(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[pads\nsource=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")

"""One TOML configuration file, every key optional, checked key by key.

Defaults run on a laptop with simulated pads. A bad key or value raises
:class:`~core.errors.ConfigError` naming the key, the value and what is
valid. Game settings (``[games.<kind>]``) are passed through as tables and
checked by each game's own ``validate_settings``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from core.errors import ConfigError
from hardware.pins import PAD_SOURCES

DEFAULT_DATA_DIR = "~/.local/share/tabletop"
#: The SQLite event log's file name inside the data directory.
DATABASE_NAME = "tabletop.sqlite3"
#: Environment variable naming the config file when --config is not given.
CONFIG_ENV = "TABLETOP_CONFIG"
#: Where the config file is looked for when neither --config nor the variable is set.
DEFAULT_CONFIG_PATHS = ("~/.config/tabletop/config.toml", "/etc/tabletop/config.toml")

#: The coarsest timing resolution simulated pads may claim (0.1 s: coarser would judge nothing).
MAX_SIM_RESOLUTION_US = 100_000


@dataclass(frozen=True)
class PlayerConfig:
    """A player named in the config file, to seat at a fresh table."""

    name: str
    pad: int | None = None
    colour: str | None = None


@dataclass(frozen=True)
class Config:
    """Every setting of the service, with its default."""

    data_dir: Path = Path(DEFAULT_DATA_DIR).expanduser()
    pads_source: str = "sim"
    pads_count: int = 4
    #: Timing resolution (µs) simulated pads report in every hit; coarser than 1 makes photo finishes reachable.
    sim_resolution_us: int = 1
    gpio_pins: tuple[int, ...] = (17, 27, 22, 23, 5, 6, 13, 19)
    gpio_mask_ms: float = 30.0
    gpio_pin_factory: str | None = None
    serial_port: str | None = None
    serial_baud: int = 250000
    serial_hello_timeout_s: float = 5.0
    server_host: str = "0.0.0.0"
    server_port: int = 8080
    server_pin: str | None = None
    server_threads: int = 48
    server_pin_on_screen: bool = True
    #: Digits of the random PIN made when ``server.pin`` is not set.
    server_pin_digits: int = 4
    #: Live streams open at once (None: a third of the threads kept free, see web.streams).
    server_max_streams: int | None = None
    server_streams_per_client: int = 4
    players: tuple[PlayerConfig, ...] = ()
    games: dict[str, dict[str, Any]] = field(default_factory=dict)
    source_path: Path | None = None

    @property
    def database_path(self) -> Path:
        """The SQLite event log inside the data directory."""
        return self.data_dir / DATABASE_NAME


def _type_error(key: str, value: Any, valid: str) -> ConfigError:
    return ConfigError(f"config key '{key}': {value!r} is not valid; expected {valid}")


def _int(key: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _type_error(key, value, f"a whole number from {lo} to {hi}")
    return value


def _number(key: str, value: Any, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise _type_error(key, value, f"a number from {lo} to {hi}")
    return float(value)


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _type_error(key, value, "true or false")
    return value


def _str(key: str, value: Any, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str) or (choices is not None and value not in choices):
        valid = "one of " + ", ".join(repr(c) for c in choices) if choices else "a string"
        raise _type_error(key, value, valid)
    return value


def _pin(value: Any) -> str:
    text = str(value)
    if not isinstance(value, (str, int)) or isinstance(value, bool) or not text.isdigit() or not text.isascii() or not 4 <= len(text) <= 12:
        raise _type_error("server.pin", value, "4 to 12 digits, as a string such as \"4821\"")
    return str(value)


def _pins(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise _type_error("pads.gpio.pins", value, "a non-empty list of BCM pin numbers such as [17, 27]")
    pins = tuple(_int("pads.gpio.pins", p, 2, 27) for p in value)
    if len(set(pins)) != len(pins):
        raise _type_error("pads.gpio.pins", value, "each pin at most once")
    return pins


def _players(value: Any) -> tuple[PlayerConfig, ...]:
    if not isinstance(value, list):
        raise _type_error("players", value, "an array of tables: [[players]] name = \"Ann\" pad = 1")
    out: list[PlayerConfig] = []
    for i, item in enumerate(value, start=1):
        key = f"players[{i}]"
        if not isinstance(item, dict):
            raise _type_error(key, item, "a table with name, and optionally pad and colour")
        unknown = set(item) - {"name", "pad", "colour"}
        if unknown:
            raise ConfigError(f"config key '{key}.{sorted(unknown)[0]}' is not known; valid keys: name, pad, colour")
        name = _str(f"{key}.name", item.get("name")).strip()
        if not name or len(name) > 24:
            raise _type_error(f"{key}.name", item.get("name"), "a name of 1 to 24 characters")
        pad = _int(f"{key}.pad", item["pad"], 1, 64) if "pad" in item else None
        colour = _str(f"{key}.colour", item["colour"]) if "colour" in item else None
        out.append(PlayerConfig(name, pad, colour))
    names = [p.name.casefold() for p in out]
    if len(set(names)) != len(names):
        raise _type_error("players", [p.name for p in out], "each player name at most once")
    pads = [p.pad for p in out if p.pad is not None]
    if len(set(pads)) != len(pads):
        raise _type_error("players", pads, "each pad given to at most one player")
    return tuple(out)


# key path -> (Config field, parser)
_SCALARS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "data_dir": ("data_dir", lambda v: Path(_str("data_dir", v)).expanduser()),
    "pads.source": ("pads_source", lambda v: _str("pads.source", v, PAD_SOURCES)),
    "pads.count": ("pads_count", lambda v: _int("pads.count", v, 1, 16)),
    "pads.sim.resolution_us": ("sim_resolution_us", lambda v: _int("pads.sim.resolution_us", v, 1, MAX_SIM_RESOLUTION_US)),
    "pads.gpio.pins": ("gpio_pins", _pins),
    "pads.gpio.mask_ms": ("gpio_mask_ms", lambda v: _number("pads.gpio.mask_ms", v, 0, 1000)),
    "pads.gpio.pin_factory": ("gpio_pin_factory",
                              lambda v: _str("pads.gpio.pin_factory", v, ("lgpio", "rpigpio", "pigpio", "native", "mock"))),
    "pads.serial.port": ("serial_port", lambda v: _str("pads.serial.port", v) or None),
    "pads.serial.baud": ("serial_baud", lambda v: _int("pads.serial.baud", v, 9600, 2_000_000)),
    "pads.serial.hello_timeout_s": ("serial_hello_timeout_s", lambda v: _number("pads.serial.hello_timeout_s", v, 0.1, 60)),
    "server.host": ("server_host", lambda v: _str("server.host", v)),
    "server.port": ("server_port", lambda v: _int("server.port", v, 1, 65535)),
    "server.pin": ("server_pin", _pin),
    "server.threads": ("server_threads", lambda v: _int("server.threads", v, 4, 256)),
    "server.pin_on_screen": ("server_pin_on_screen", lambda v: _bool("server.pin_on_screen", v)),
    "server.pin_digits": ("server_pin_digits", lambda v: _int("server.pin_digits", v, 4, 12)),
    "server.max_streams": ("server_max_streams", lambda v: _int("server.max_streams", v, 1, 254)),
    "server.streams_per_client": ("server_streams_per_client", lambda v: _int("server.streams_per_client", v, 1, 64)),
}
_TABLES = {"pads", "pads.sim", "pads.gpio", "pads.serial", "server"}


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if path in ("players", "games"):
            flat[path] = value
        elif isinstance(value, dict) and path in _TABLES:
            flat.update(_flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


def parse_config(data: dict[str, Any], source_path: Path | None = None) -> Config:
    """Check a parsed TOML document and return the Config it describes."""
    values: dict[str, Any] = {"source_path": source_path}
    for path, value in _flatten(data).items():
        if path == "players":
            values["players"] = _players(value)
        elif path == "games":
            if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
                raise _type_error("games", value, "tables such as [games.taco]")
            values["games"] = {k: dict(v) for k, v in value.items()}
        elif path in _SCALARS:
            name, parser = _SCALARS[path]
            values[name] = parser(value)
        else:
            valid = ", ".join(sorted([*_SCALARS, "players", "games.<game>"]))
            raise ConfigError(f"config key '{path}' is not known; valid keys: {valid}")
    config = Config(**values)
    if config.server_max_streams is not None and config.server_max_streams > config.server_threads - 2:
        raise _type_error(
            "server.max_streams", config.server_max_streams,
            f"at most server.threads - 2 = {config.server_threads - 2}: each stream holds a thread, "
            "and commands, pages and /api/health need threads too",
        )
    return config


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file to use: --config, then $TABLETOP_CONFIG, then the default places."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    for candidate in DEFAULT_CONFIG_PATHS:
        path = Path(candidate).expanduser()
        if path.is_file():
            return path
    return None


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read and check the config file (or return defaults where there is none).

    An explicitly named file that does not exist is an error, not a silent default.
    """
    found = find_config_file(path)
    if found is None:
        return Config()
    try:
        with open(found, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {found} does not exist; create it or leave out --config") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {found} is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {found} is not UTF-8 text; TOML files are text") from None
    except OSError as exc:
        raise ConfigError(f"config file {found} cannot be read: {exc.strerror}") from None
    return parse_config(data, found)


def with_overrides(config: Config, **overrides: Any) -> Config:
    """A copy of ``config`` with command-line options (those not None) applied on top."""
    from dataclasses import replace

    return replace(config, **{k: v for k, v in overrides.items() if v is not None})

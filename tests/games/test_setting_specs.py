"""Each game's declared settings (SettingSpec) say what its checks accept: the start form's limits are the game's."""

from __future__ import annotations

import pytest

from companion.games import load_games
from companion.games.base import SettingSpec
from core.errors import InputError

GAMES = load_games()
NUMBERS = [
    pytest.param(kind, spec, id=f"{kind}.{spec.key}")
    for kind, cls in sorted(GAMES.items()) for spec in cls.setting_specs
    if spec.type == "number" and spec.min is not None and spec.max is not None
]


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_the_declared_defaults_are_the_defaults_and_pass_the_checks(kind: str) -> None:
    cls = GAMES[kind]
    assert [spec.key for spec in cls.setting_specs] == list(cls.default_settings())
    assert cls.validate_settings({}) == cls.validate_settings(cls.default_settings())


@pytest.mark.parametrize("kind, spec", NUMBERS)
def test_a_number_setting_is_accepted_exactly_within_its_declared_range(kind: str, spec: SettingSpec) -> None:
    cls = GAMES[kind]
    key, lo, hi = spec.key, spec.min, spec.max
    assert lo is not None and hi is not None
    assert cls.validate_settings({key: lo})[key] == lo
    assert cls.validate_settings({key: hi})[key] == hi
    for outside in (lo - 1, hi + 1):
        with pytest.raises(InputError, match=key):
            cls.validate_settings({key: outside})


def test_games_available_carries_the_specs_in_order() -> None:
    from companion.table import TableState

    available = {g["kind"]: g for g in TableState(GAMES).view()["games_available"]}
    for kind, cls in GAMES.items():
        assert [s["key"] for s in available[kind]["setting_specs"]] == [spec.key for spec in cls.setting_specs]
    tempo = next(s for s in available["taco"]["setting_specs"] if s["key"] == "tempo_ms")
    assert tempo == {"key": "tempo_ms", "label": "Time between flips", "type": "number", "default": 1200,
                     "unit": "ms", "min": 200, "max": 10_000}

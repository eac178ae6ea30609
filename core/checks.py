"""The one check of a whole number in a range, with the one message every layer gives for it."""

from __future__ import annotations

from typing import Any

from core.errors import InputError


def whole_number(value: Any, lo: int, hi: int, what: str, error: type[Exception] = InputError) -> int:
    """``value`` when it is a whole number (not a bool) from ``lo`` to ``hi``.

    Else raises ``error`` saying "<what> must be a whole number from <lo> to <hi>, got <value>":
    ``what`` names the field as the caller's readers know it (``'pad'``, ``setting 'deck': count of 'taco'``).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise error(f"{what} must be a whole number from {lo} to {hi}, got {value!r}")
    return value

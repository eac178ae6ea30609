"""Plain facts about the pad hardware that the config checks against (no backend imported)."""

from __future__ import annotations

#: The pad sources a config may name (``pads.source``); the command line adds ``script``.
PAD_SOURCES = ("sim", "gpio", "serial")
#: BCM numbers usable as inputs on a 40-pin header.
GPIO_PINS = frozenset(range(2, 28))

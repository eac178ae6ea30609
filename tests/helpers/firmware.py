"""Shared setup of the firmware tests (tests/firmware/test_firmware_*.py).

* ``simtools``: firmware/sim/simtools.py, loaded once as ``padbox_simtools``
  (it ships with the firmware, outside any Python package); ``load_script``
  loads any other such file so.
* ``require_tools``: skip when build tools are missing, or fail under
  TABLETOP_REQUIRE_FIRMWARE_TOOLS=1 (CI installs them).
* ``firmware``: the firmware image and simavr harness, built into one directory
  per session (make rebuilds only what changed). Import it into a test module.
* ``decode`` and the onset tolerances the simulator tests judge hits by;
  ``FIRMWARE_TEST_DATA``, the files they read.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hardware import protocol as p

ROOT = Path(__file__).resolve().parents[2]
#: Files the firmware tests read (recorded samples, bench bursts): tests/firmware/data.
FIRMWARE_TEST_DATA = ROOT / "tests" / "firmware" / "data"


def load_script(path: str, name: str) -> ModuleType:
    """A Python file of firmware/ (``path`` from the repository's root; firmware/ is no Python
    package) as the module ``name``, loaded once: one instance for every test module."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (before it runs: its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


simtools = load_script("firmware/sim/simtools.py", "padbox_simtools")


def require_tools(missing: list[str], needs: str) -> None:
    """Skip the test when ``missing`` names tools (``needs`` says what needs them); fail instead when CI requires them."""
    if not missing:
        return
    reason = f"{needs} needs: " + ", ".join(missing)
    if simtools.tools_required():
        pytest.fail(reason + " (TABLETOP_REQUIRE_FIRMWARE_TOOLS=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def firmware(tmp_path_factory: pytest.TempPathFactory):  # -> simtools.Build
    """The firmware image and harness, built once per session into one shared directory."""
    require_tools(simtools.missing_tools(simulator=True), "the firmware simulation")
    return simtools.build(tmp_path_factory.getbasetemp() / "firmware-build")


#: An onset is right within this much of the moment of contact (the bench,
#: bench/bench_padbox_detection.py, measures the spread over random rounds).
ONSET_TOL_US = 150
#: A feint's onset: it never decides an order, and a light touch in heavy
#: noise (hum_noise: 60 mV of noise on a 650 mV touch) is known less well.
TOUCH_ONSET_TOL_US = 300


def decode(uart: bytes) -> list[p.Event]:
    """Everything the box said, through the host's parser; no line may be refused."""
    events = p.PadBoxProtocol().data_received(uart)
    refused = [e for e in events if isinstance(e, (p.Refused, p.Dropped))]
    assert not refused, f"the host refused firmware output: {refused}"
    return events

"""Drive the pad box firmware in simavr from Python: build, run, judge.

Used by the firmware tests (tests/firmware/test_firmware_*.py). Mirrors the scenario
format and waveforms of firmware/sim/scenario.c so the tests can compute the
true onset of every contact themselves.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Sequence

FIRMWARE = Path(__file__).resolve().parents[1]
SCENARIOS = FIRMWARE / "sim" / "scenarios"
F_CPU = 16_000_000
CYCLES_PER_US = 16
#: The ATmega328P's last RAM address: the stack starts here and grows down.
RAMEND = 0x8FF
#: What the tests need, and the Debian package that provides it.
TOOLS = {
    "avr-gcc": "gcc-avr",
    "avr-objcopy": "binutils-avr",
    "gcc": "gcc",
    "make": "make",
}
HEADERS = {
    "/usr/include/simavr/sim_avr.h": "libsimavr-dev",
    "/usr/include/libelf.h": "libelf-dev",
    "/usr/lib/avr/include/avr/io.h": "avr-libc",
}


def firmware_version() -> str:
    """The version the sketch says in HELLO (padbox.ino's FW_VERSION)."""
    text = (FIRMWARE / "padbox" / "padbox.ino").read_text()
    found = re.search(r'^#define FW_VERSION "([^"]+)"', text, re.M)
    if found is None:
        raise RuntimeError("padbox.ino has no FW_VERSION")
    return found[1]


def load_sibling(name: str) -> ModuleType:
    """Another module of firmware/sim (e.g. ``table_model``), loaded once as ``padbox_<name>``
    (the directory is not a Python package)."""
    key = f"padbox_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, FIRMWARE / "sim" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def missing_tools(simulator: bool = True) -> list[str]:
    """What is missing to build (and, with ``simulator``, to simulate) the firmware."""
    missing = [f"{tool} (Debian package {pkg})" for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    if simulator:
        missing += [f"{h} (Debian package {pkg})" for h, pkg in HEADERS.items() if not Path(h).exists()]
    return missing


def tools_required() -> bool:
    """CI sets TABLETOP_REQUIRE_FIRMWARE_TOOLS=1: missing tools fail instead of skipping."""
    return os.environ.get("TABLETOP_REQUIRE_FIRMWARE_TOOLS") == "1"


@dataclass(frozen=True)
class Build:
    """A firmware image and the harness that runs it."""

    elf: Path
    hex: Path
    harness: Path
    size_report: str


def build(out_dir: Path, source: Path | None = None, make_vars: Sequence[str] = ()) -> Build:
    """Build the firmware image and the harness into ``out_dir`` (one `make` each).

    ``source``: another firmware directory to build the image from (an older
    version exported by :func:`firmware_at`, with its own Makefile); the
    harness is always this tree's (its options and report are the newest).
    ``make_vars``: for the image's make, e.g. ``DRAW=2`` (a draw of the
    sample timing, padbox.ino's PADBOX_DRAW_CYCLES).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    harness = out_dir / "harness"
    fw = subprocess.run(
        ["make", "-C", str(source or FIRMWARE), f"BUILD={out_dir.resolve()}", *make_vars, "all"],
        capture_output=True, text=True, check=True,
    )
    subprocess.run(
        ["make", "-C", str(FIRMWARE), f"HARNESS={harness}", str(harness)],
        capture_output=True, text=True, check=True,
    )
    return Build(out_dir / "padbox.elf", out_dir / "padbox.hex", harness, fw.stdout)


def build_hostrun(tmp: Path, make_vars: Sequence[str] = ()) -> Path:
    """``hostrun`` (sim/hostrun.c: the detection core fed scenarios on the host) built from this
    tree's firmware/ into ``tmp``. ``make_vars``: for its make, e.g. ``HOSTCC=gcc
    -DDETECT_SWELL_LOBE_US=0xFFFFu`` (a variant of the core: give each its own ``tmp``)."""
    binary = tmp.resolve() / "hostrun"
    try:
        subprocess.run(["make", "-s", "-C", str(FIRMWARE), f"BUILD={tmp.resolve()}", *make_vars, str(binary)],
                       capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"the detection core does not build:\n{exc.stdout}\n{exc.stderr}") from exc
    return binary


def host_replay(scenario: Path, adclog: Path, tmp: Path, make_vars: Sequence[str] = ()) -> list[tuple[int, int, str, int]]:
    """The detection core on the host (sim/hostrun.c) fed the very samples an
    image took in the simulator (its ``adclog``, see :func:`run`), at the
    times the simulator logged: its hits as (pad, onset us, kind, peak).
    ``make_vars``: as :func:`build_hostrun`'s."""
    binary = build_hostrun(tmp, make_vars)
    out = subprocess.run([str(binary), "--adclog", str(adclog), str(scenario)], capture_output=True, text=True,
                         check=True).stdout
    return hostrun_hits(out).get(scenario.stem, [])


def hostrun_hits(out: str) -> dict[str, list[tuple[int, int, str, int]]]:
    """sim/hostrun.c's output ("FILE <path>", then "HIT <pad> <onset us> <S|T> <peak>"
    lines): each scenario's hits, by the file's stem, as (pad, onset us, kind, peak)."""
    per: dict[str, list[tuple[int, int, str, int]]] = {}
    current: list[tuple[int, int, str, int]] = []
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "FILE":
            current = per.setdefault(Path(parts[1]).stem, [])
        elif parts[0] == "HIT":
            current.append((int(parts[1]), int(parts[2]), parts[3], int(parts[4])))
    return per


def firmware_at(commit: str, dest: Path) -> Path:
    """Export the firmware/ directory as of git ``commit`` into ``dest``; the exported firmware directory."""
    dest.mkdir(parents=True, exist_ok=True)
    repo = FIRMWARE.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "firmware"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "firmware"


def build_variant(out_dir: Path, make_vars: list[str]) -> Path:
    """The image built with other make variables (e.g. ``SAMPLER_REGS=`` for the
    Arduino IDE's handler, ``OPT=-O2 -DFIFO_SLOW=4u``) into ``out_dir``; its ELF."""
    out_dir.mkdir(parents=True, exist_ok=True)
    elf = out_dir.resolve() / "padbox.elf"
    subprocess.run(["make", "-s", "-C", str(FIRMWARE), f"BUILD={out_dir.resolve()}", *make_vars, str(elf)],
                   capture_output=True, text=True, check=True)
    return elf


#: The registers the sampling interrupt owns (padbox.ino, "Sampling"), and
#: what other code may do with them: read the FIFO's head (r7), clear it.
SAMPLER_REGS = ("r2", "r3", "r4", "r5", "r6", "r7")
SAMPLER_HANDLER = "__vector_7"


#: The FIFO's head, the address of the entry the handler writes next (r5:r7), and
#: the one function that may set it (to the FIFO's start).
HEAD_REGS = ("r5", "r7")
HEAD_SETTER = "sampler_start"


def sampler_register_uses(elf: Path) -> list[str]:
    """Instructions outside the sampling handler that touch r2..r7, other than
    reading the FIFO's head r5:r7 (mov, cp) or sampler_start() setting it
    (mov r7/r5, interrupts off): none may, in any
    translation unit or library the image links. Flash before __ctors_start
    (the vectors and the constants in flash) is data, not code."""
    nm = subprocess.run(["avr-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    code_from = next(int(line.split()[0], 16) for line in nm.splitlines() if line.endswith(" __ctors_start"))
    dis = subprocess.run(["avr-objdump", "-d", str(elf)], capture_output=True, text=True, check=True).stdout
    pattern = re.compile(r"\b(" + "|".join(SAMPLER_REGS) + r")\b")
    function, found = "", []
    for line in dis.splitlines():
        label = re.match(r"^[0-9a-f]+ <(.*)>:", line)
        if label:
            function = label.group(1)
            continue
        insn = re.match(r"\s+([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*\t(\S+)\s*([^;]*)", line)
        if not insn or int(insn.group(1), 16) < code_from or function == SAMPLER_HANDLER:
            continue
        op, args = insn.group(2), insn.group(3).replace(" ", "")
        regs = pattern.findall(args)
        if not regs:
            continue
        if len(regs) == 1 and regs[0] in HEAD_REGS and (
                op in ("cp", "cpc", "cpse") or (op == "mov" and args.endswith("," + regs[0]))):
            continue  # (the head read)
        if op == "mov" and len(regs) == 1 and args.startswith(regs[0] + ",") and regs[0] in HEAD_REGS \
                and HEAD_SETTER in function:
            continue  # (the head set to the FIFO's start, interrupts off: sampler_start)
        found.append(f"{function} {insn.group(1)}: {op} {args}")
    return found


def avr_size(elf: Path) -> dict[str, int]:
    """Flash (text + data) and static RAM (data + bss) of an image, from avr-size."""
    out = subprocess.run(["avr-size", str(elf)], capture_output=True, text=True, check=True).stdout
    text, data, bss = (int(x) for x in out.splitlines()[1].split()[:3])
    return {"flash": text + data, "ram": data + bss, "text": text, "data": data, "bss": bss}


def bss_end(elf: Path) -> int:
    """The first RAM address above .data and .bss (symbol _end): the stack must stay above it."""
    out = subprocess.run(["avr-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "_end":
            return int(parts[0], 16) & 0xFFFF
    raise RuntimeError(f"no _end symbol in {elf}")


def build_arduino(out_dir: Path) -> Path:
    """Build the sketch the Arduino IDE's way (Arduino core, arduino-mk); the ELF."""
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["make", "-C", str(FIRMWARE), "-f", "Makefile.arduino", f"OBJDIR={out_dir}"],
        capture_output=True, text=True, check=True,
    )
    elfs = sorted(out_dir.glob("*.elf"))
    if not elfs:
        raise RuntimeError(f"arduino-mk built no ELF in {out_dir}")
    return elfs[0]


def arduino_mk_missing() -> list[str]:
    """What is missing for the Arduino core build."""
    needs = {"/usr/share/arduino/Arduino.mk": "arduino-mk",
             "/usr/share/arduino/hardware/arduino/avr/cores/arduino/main.cpp": "arduino-core-avr"}
    return [f"{path} (Debian package {pkg})" for path, pkg in needs.items() if not Path(path).exists()]


# ----------------------------------------------------------------- scenarios


@dataclass
class Event:
    """A contact (``hit``) or a button press in a scenario."""

    pad: int  # 1-based
    t_us: int
    expect: str  # slap | touch | press | none
    peak_mv: float = 0.0
    rise_us: float = 700.0
    ring: float = 0.5
    hz: float = 1500.0
    tau_us: float = 5000.0
    button: bool = False
    spike: bool = False
    hold_us: int = 0
    pol: float = 1.0  # -1: a disc wired the other way round

    def mv(self, t_us: float) -> float:
        """The noiseless voltage of this contact at t_us (as scenario.c)."""
        if self.button:
            return 0.0
        if self.spike:
            return self.peak_mv if self.t_us <= t_us < self.t_us + self.hold_us else 0.0
        tt = t_us - self.t_us
        if tt < 0:
            return 0.0
        width = 2.0 * self.rise_us
        if tt < width:
            return self.pol * self.peak_mv * math.sin(math.pi * tt / width)
        u = tt - width
        if u > 10.0 * self.tau_us:
            return 0.0
        # The plate swings back: the ringing starts the other way (as scenario.c).
        return -self.pol * self.peak_mv * self.ring * math.sin(2.0 * math.pi * self.hz * u / 1e6) * math.exp(-u / self.tau_us)


@dataclass
class Scenario:
    """A parsed scenario file (format: firmware/sim/scenario.h)."""

    path: Path
    duration_us: int = 300_000
    hum_mv: float = 0.0
    hum_hz: float = 50.0
    button_mode: bool = False
    seed: int = 1
    noise_mv: float = 0.0
    drift_mv: float = 0.0
    drift_period_us: float = 2e6
    frontend: str = "biased"
    bias_mv: float = 2500.0
    events: list[Event] = field(default_factory=list)
    sends: list[tuple[int, str]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> "Scenario":
        """Parse the directives the tests need (the harness checks the rest)."""
        scn = cls(path)
        for raw in path.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            word, *rest = line.split()
            if word == "duration_us":
                scn.duration_us = int(rest[0])
            elif word == "hum_mv":
                scn.hum_mv = float(rest[0])
                scn.hum_hz = float(rest[1]) if len(rest) > 1 else 50.0
            elif word == "mode":
                scn.button_mode = rest[0] == "button"
            elif word == "seed":
                scn.seed = int(rest[0])
            elif word == "noise_mv":
                scn.noise_mv = float(rest[0])
            elif word == "drift_mv":
                scn.drift_mv = float(rest[0])
                scn.drift_period_us = float(rest[1]) if len(rest) > 1 else 2e6
            elif word == "frontend":
                scn.frontend = rest[0]
            elif word == "bias_mv":
                scn.bias_mv = float(rest[0])
            elif word == "hit":
                ev = Event(int(rest[0]), int(rest[1]), rest[3], peak_mv=float(rest[2]))
                for opt in rest[4:]:
                    key, value = opt.split("=")
                    if key == "pol":
                        ev.pol = -1.0 if float(value) < 0 else 1.0
                        continue
                    setattr(ev, {"rise": "rise_us", "ring": "ring", "hz": "hz", "tau": "tau_us"}[key], float(value))
                scn.events.append(ev)
            elif word == "spike":
                scn.events.append(Event(int(rest[0]), int(rest[1]), "none", peak_mv=float(rest[2]), spike=True, hold_us=int(rest[3])))
            elif word == "button":
                scn.events.append(Event(int(rest[0]), int(rest[1]), rest[3], button=True, hold_us=int(rest[2])))
            elif word == "send":
                scn.sends.append((int(rest[0]), " ".join(rest[1:])))
        return scn

    def hum(self, pad: int, t_us: float) -> float:
        """The mains hum on a pad (1-based), as scenario.c."""
        if self.hum_mv <= 0:
            return 0.0
        return self.hum_mv * math.sin(2.0 * math.pi * self.hum_hz * t_us / 1e6 + (pad - 1) * 0.7)

    def truth_onset(self, ev: Event, thr_counts: int) -> float:
        """When the event's own waveform plus hum first reaches the threshold (either way, as scenario.c)."""
        if ev.button:
            return float(ev.t_us)
        thr_mv = thr_counts * 5000.0 / 1023.0
        t = float(ev.t_us)
        while t < ev.t_us + 20_000:
            if abs(ev.mv(t) + self.hum(ev.pad, t)) >= thr_mv:
                return t
            t += 1.0
        return -1.0


def scenario_paths() -> list[Path]:
    """Every scenario shipped with the firmware."""
    return sorted(SCENARIOS.glob("*.scn"))


# ------------------------------------------------------------------ running


@dataclass
class Run:
    """What one harness run produced."""

    uart: bytes
    report: dict[str, int]

    @property
    def scan_us_median(self) -> float:
        """Median time between samples of one pad, in microseconds."""
        return self.report["scan_cycles_median"] / CYCLES_PER_US

    @property
    def scan_us_p99(self) -> float:
        """99th percentile of the same."""
        return self.report["scan_cycles_p99"] / CYCLES_PER_US


def run(b: Build, scenario: Path, tmp: Path, eeprom: Path | None = None, frontend: str | None = None,
        timeout: float = 120, adclog: Path | None = None) -> Run:
    """Run one scenario through the real firmware image in simavr.

    ``frontend`` (biased or halfwave) overrides the scenario's input circuit:
    halfwave runs a firmware made for the old wiring on the same waveforms.
    ``adclog``: the harness logs every conversion's pad and time there
    (HARNESS_ADCLOG), for :func:`host_replay`.
    """
    out = tmp / (scenario.stem + ".uart")
    report = tmp / (scenario.stem + ".report")
    cmd = [str(b.harness), "--out", str(out), "--report", str(report)]
    if eeprom is not None:
        cmd += ["--eeprom", str(eeprom)]
    if frontend is not None:
        cmd += ["--frontend", frontend]
    env = {**os.environ, "HARNESS_ADCLOG": str(adclog)} if adclog is not None else None
    proc = subprocess.run(cmd + [str(b.elf), str(scenario)], capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"harness failed ({proc.returncode}): {proc.stderr}")
    values: dict[str, int] = {}
    for line in report.read_text().splitlines():
        key, _, value = line.partition("=")
        values[key] = int(float(value))
    return Run(out.read_bytes(), values)

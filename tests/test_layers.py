"""The house's layers, checked by reading every import (ast), so they stay as DESIGN.md draws them.

core (errors, PadHit) at the bottom, then hardware/, then companion/ (the
table, games, service), then web/, then the command line (companion.cli and
companion.commands) that wires them. Every import goes down, never up, and
the modules' own import-time imports form no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "companion", "hardware", "web")
#: Bottom first: a module may import only from its own layer or the ones before it.
LAYERS = ("core", "hardware", "companion", "web", "cli")
#: What pure game rules must never import (DESIGN.md: no I/O, no threads, no clock, no Flask, no gpiozero).
IMPURE = ("hardware", "web", "flask", "gpiozero", "serial", "sqlite3", "threading", "socket", "time", "queue")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))}


def _imports(path: Path, top_level_only: bool = False) -> set[str]:
    """Every module ``path`` imports (absolute names), anywhere in it or only at import time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            # ``from pkg import sub`` imports the submodule pkg.sub too
            found |= {f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in MODULES}
    return found


def _layer(module: str) -> str:
    if module == "companion.cli" or module.startswith("companion.commands"):
        return "cli"
    return module.split(".")[0]


def _is_under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_every_package_is_found() -> None:
    assert {"core.errors", "core.hits", "hardware.source", "companion.table", "web.api", "companion.cli"} <= set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down_the_layers(module: str) -> None:
    own = LAYERS.index(_layer(module))
    above = [
        name for name in sorted(_imports(MODULES[module]))
        if name.split(".")[0] in PACKAGES and LAYERS.index(_layer(name)) > own
    ]
    assert above == [], f"{module} ({_layer(module)}) imports from a layer above it: {above}"


def test_hardware_imports_nothing_of_companion_or_web() -> None:
    bad = {m: sorted(n for n in _imports(p) if n.split(".")[0] in ("companion", "web"))
           for m, p in MODULES.items() if _is_under(m, "hardware")}
    assert {m: names for m, names in bad.items() if names} == {}


def test_web_imports_nothing_of_hardware() -> None:
    bad = {m: sorted(n for n in _imports(p) if _is_under(n, "hardware"))
           for m, p in MODULES.items() if _is_under(m, "web")}
    assert {m: names for m, names in bad.items() if names} == {}


def test_game_rules_are_pure() -> None:
    bad = {m: sorted(n for n in _imports(p) if any(_is_under(n, impure) for impure in IMPURE))
           for m, p in MODULES.items() if _is_under(m, "companion.games")}
    assert {m: names for m, names in bad.items() if names} == {}


def test_no_import_circle() -> None:
    graph = {m: {n for n in _imports(p, top_level_only=True) if n in MODULES and n != m} for m, p in MODULES.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for nxt in sorted(graph[module]):
            if state.get(nxt) == 1:
                circles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert circles == []


def test_the_checks_would_see_a_bad_import(tmp_path: Path) -> None:
    """The checks can fail: an upward import written into a file is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from companion.config import Config\n    return Config\n", encoding="utf-8")
    assert "companion.config" in _imports(bad)
    assert "companion.config" not in _imports(bad, top_level_only=True)
    assert LAYERS.index(_layer("companion.config")) > LAYERS.index(_layer("hardware.sim"))

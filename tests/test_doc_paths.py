"""No document of the project cites a path outside the repository, and every path it cites exists.

A reader has the repository, nothing else: a link or a `path` into it must
lead somewhere, and nothing may point at the machine the docs were written
on (another checkout, a notes folder, the rulebooks' own location).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Top-level folders of the repository: a `code` span starting with one of them is a path into it.
REPO_DIRS = ("companion", "docs", "tests", "web", "hardware", "firmware", "bench", ".ci")
#: What only a path outside the repository looks like: another checkout or a folder beside it.
OUTSIDE = re.compile(r"/work/|shared/rules|\.\./\.\./\.\.|DESIGN\.md")


def markdown_files() -> list[Path]:
    """Every Markdown file git tracks (the docs a reader gets with the repository)."""
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in out.split()]


DOCS = markdown_files()


def test_the_docs_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in DOCS}
    assert {"README.md", "docs/api.md", "docs/games/tactile.md"} <= names


@pytest.mark.parametrize("path", DOCS, ids=[p.relative_to(ROOT).as_posix() for p in DOCS])
def test_no_doc_cites_a_path_outside_the_repository(path: Path) -> None:
    text = path.read_text()
    assert not [m.group(0) for m in OUTSIDE.finditer(text)], f"{path.name} cites a path outside the repository"
    for link in re.findall(r"\]\(([^)#\s]+)", text):
        if re.match(r"[a-z]+:", link):
            continue  # a web address
        target = (path.parent / link).resolve()
        assert target.is_relative_to(ROOT), f"{path.name}: the link {link} leaves the repository"
        assert target.exists(), f"{path.name}: the link {link} leads nowhere"


@pytest.mark.parametrize("path", DOCS, ids=[p.relative_to(ROOT).as_posix() for p in DOCS])
def test_every_repository_path_a_doc_names_exists(path: Path) -> None:
    missing = []
    for match in re.finditer(rf"`((?:{'|'.join(map(re.escape, REPO_DIRS))})/[^`\s]*)`", path.read_text()):
        cited = re.sub(r"[#:].*$", "", match.group(1)).rstrip(".,;")
        if not re.search(r"[<*{]", cited) and not (ROOT / cited).exists():
            missing.append(cited)
    assert not missing, f"{path.name} names paths the repository does not have: {missing}"

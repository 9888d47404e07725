"""Folder READMEs stay maps, and every decision record is in the index (issue 46, item 5).

A folder README (every ``README.md`` below the repository root but the root's, the user manual) holds at most
``MAX_LINES`` lines: what is where, the rules, how to run and how to extend. Measurements and the options weighed go to
``docs/decisions/NNN-*.md``, and each record has its line in ``docs/decisions/README.md``'s table.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

MAX_LINES = 250
SKIPPED_FOLDERS = {".venv", "node_modules", ".cache", ".git", "cdk.out", "__pycache__"}
DECISIONS = REPO_ROOT / "docs" / "decisions"
RECORD = re.compile(r"^(\d{3})-[a-z0-9-]+\.md$")
INDEX_ROW = re.compile(r"^\|\s*\[(\d{3})\]\((\d{3}-[a-z0-9-]+\.md)\)\s*\|")


def _git_files() -> list[str] | None:
    """Tracked and untracked, not ignored files, or None where git cannot answer."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return listed.stdout.splitlines()


def folder_readmes() -> list[str]:
    """Every README.md below the repository root (paths relative to it), the root's excluded."""
    files = _git_files()
    if files is None:
        files = []
        for folder, subfolders, names in os.walk(REPO_ROOT):
            subfolders[:] = [name for name in subfolders if name not in SKIPPED_FOLDERS]
            files += [str((Path(folder) / name).relative_to(REPO_ROOT)) for name in names]
    return sorted(
        path
        for path in files
        if Path(path).name == "README.md"
        and path != "README.md"
        and not SKIPPED_FOLDERS & set(Path(path).parts)
        and (REPO_ROOT / path).is_file()
    )


def line_count(path: str) -> int:
    return len((REPO_ROOT / path).read_text(encoding="utf-8").splitlines())


def test_the_folder_readmes_are_found() -> None:
    found = folder_readmes()
    assert "etl/README.md" in found
    assert "docs/decisions/README.md" in found


@pytest.mark.parametrize("path", folder_readmes())
def test_a_folder_readme_is_a_map_of_at_most_250_lines(path: str) -> None:
    lines = line_count(path)
    assert lines <= MAX_LINES, (
        f"{path} has {lines} lines, more than {MAX_LINES}: keep it a map (what is where, the rules, how to run, how "
        "to extend) and move measurements and the options weighed to a record in docs/decisions/"
    )


def index_rows() -> dict[str, str]:
    """Record number -> file name, from the table of docs/decisions/README.md."""
    rows: dict[str, str] = {}
    for line in (DECISIONS / "README.md").read_text(encoding="utf-8").splitlines():
        match = INDEX_ROW.match(line)
        if match:
            assert match.group(1) not in rows, f"record {match.group(1)} is listed twice in docs/decisions/README.md"
            rows[match.group(1)] = match.group(2)
    return rows


def test_every_decision_record_is_in_the_index() -> None:
    records = sorted(path.name for path in DECISIONS.iterdir() if RECORD.match(path.name))
    assert records, "no record found in docs/decisions/"
    listed = index_rows()
    missing = [name for name in records if listed.get(RECORD.match(name).group(1)) != name]
    assert not missing, (
        f"records missing from docs/decisions/README.md's table (or listed under another name): {missing}"
    )


def test_every_indexed_record_exists_and_numbers_are_unique() -> None:
    listed = index_rows()
    assert all(name.startswith(number) for number, name in listed.items())
    gone = [name for name in listed.values() if not (DECISIONS / name).is_file()]
    assert not gone, f"docs/decisions/README.md lists records that do not exist: {gone}"
    numbers = [RECORD.match(path.name).group(1) for path in DECISIONS.iterdir() if RECORD.match(path.name)]
    assert len(numbers) == len(set(numbers)), f"two records share a number: {sorted(numbers)}"

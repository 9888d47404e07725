"""What code imports, read from the code (``ast``; nothing is imported): the import boundaries test and the EMR
image's install list test (tests/infra/test_emr_image.py) read imports this way."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

from tests.support.paths import REPO_ROOT


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (a function's lazy import too): ``import a.b`` gives
    ``a.b``, ``from a.b import c`` gives ``a.b`` and ``a.b.c`` (``c`` may be a module or a name in ``a.b``).
    ODP's packages use absolute imports only; a relative import is not followed."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def module_file(module: str, root: Path = REPO_ROOT) -> Path | None:
    """The file of a module of this repository (a package's ``__init__.py``), None when it is not one."""
    path = root.joinpath(*module.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def third_party_imports(roots: Iterable[str], own: tuple[str, ...], root: Path = REPO_ROOT) -> dict[str, set[str]]:
    """The top-level names outside the standard library and ``own`` that ``roots`` import, transitively through the
    modules of ``own`` (every package on a module's dotted path is imported too): name -> the modules importing it."""
    found: dict[str, set[str]] = {}
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        module = pending.pop()
        path = module_file(module, root)
        if module in seen or path is None:
            continue
        seen.add(module)
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] in own:
                pending += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            elif parts[0] not in sys.stdlib_module_names:
                found.setdefault(parts[0], set()).add(module)
    return found

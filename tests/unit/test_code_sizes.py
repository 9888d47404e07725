"""The runtime code stays in small pieces (issue 46): no class over 200 lines and no function over 60 in ``odp/``,
``etl/`` and ``lambdas/``, the code the jobs and Lambdas run. A piece that grows past them is split, not waived."""

from __future__ import annotations

import ast

from tests.support.paths import REPO_ROOT

RUNTIME_PACKAGES = ("odp", "etl", "lambdas")
MAX_CLASS_LINES = 200
MAX_FUNCTION_LINES = 60


def oversized(source: str, where: str) -> list[str]:
    """Every class and function of ``source`` longer than its limit, as ``where:line name (n lines)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            limit = MAX_FUNCTION_LINES
        else:
            continue
        lines = node.end_lineno - node.lineno + 1
        if lines > limit:
            found.append(f"{where}:{node.lineno} {node.name} ({lines} lines, at most {limit})")
    return found


def test_the_check_counts_a_class_and_a_function_from_its_first_to_its_last_line() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(60))
    assert oversized(f"def f():\n{body}\n", "a.py") == ["a.py:1 f (61 lines, at most 60)"]
    assert oversized(f"def f():\n{body[: body.rindex(chr(10))]}\n", "a.py") == []
    methods = "\n".join(f"    def m{n}(self):\n        return {n}\n" for n in range(67))
    assert oversized(f"class C:\n{methods}", "b.py") == ["b.py:1 C (201 lines, at most 200)"]


def test_no_runtime_class_over_200_lines_and_no_function_over_60() -> None:
    found = [
        problem
        for package in RUNTIME_PACKAGES
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        for problem in oversized(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    ]
    assert found == []

"""One name per concept: no two classes of the same name in the source packages, so a reader who meets a
name in a traceback or a review knows which one it is (a Lambda's ``FileManager`` and the construct that
deploys it are ``FileManager`` and ``FileManagerFunction``)."""

from __future__ import annotations

import ast
from collections import defaultdict

from tests.support.paths import REPO_ROOT

SOURCE_PACKAGES = ("odp", "etl", "lambdas", "infrastructure", "sandbox")


def _classes() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for package in SOURCE_PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    where[node.name].append(path.relative_to(REPO_ROOT).as_posix())
    return where


def test_no_two_classes_share_a_name() -> None:
    shared = {name: paths for name, paths in _classes().items() if len(paths) > 1}
    assert shared == {}

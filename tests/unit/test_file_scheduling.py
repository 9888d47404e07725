"""The order `make test`'s workers take the test files in (tests/support/scheduling.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scheduling import FILE_SECONDS, FileSecondsRecorder, longest_file, recorded_seconds


def test_the_longest_recorded_file_goes_first_and_an_unrecorded_one_weighs_its_test_count() -> None:
    queue = {
        "tests/a.py": {"tests/a.py::t1": False, "tests/a.py::t2": False},
        "tests/b.py": {"tests/b.py::t": False},
        "tests/new.py": {f"tests/new.py::t{n}": False for n in range(5)},
    }

    assert longest_file(queue, {"tests/a.py": 3.0, "tests/b.py": 90.0}) == "tests/b.py"
    assert longest_file(queue, {"tests/a.py": 3.0, "tests/b.py": 4.5}) == "tests/new.py"  # 5 tests: 5 s
    assert longest_file(queue, {}) == "tests/new.py"


def test_the_recorder_sums_setup_call_and_teardown_per_file(tmp_path: Path) -> None:
    out = tmp_path / "seconds.json"
    recorder = FileSecondsRecorder(out)
    for nodeid, seconds in (("tests/a.py::t1", 1.25), ("tests/a.py::t1", 2.0), ("tests/b.py::t[x]", 7.0)):
        recorder.pytest_runtest_logreport(
            pytest.TestReport(nodeid, ("a", 1, "t"), {}, "passed", None, "call", [], seconds)
        )

    recorder.pytest_sessionfinish()

    assert list(json.loads(out.read_text()).items()) == [("tests/b.py", 7.0), ("tests/a.py", 3.2)]


def test_the_recorded_seconds_name_only_files_that_exist() -> None:
    missing = [name for name in recorded_seconds() if not (FILE_SECONDS.parent.parent / name).is_file()]

    assert missing == [], "refresh tests/file_seconds.json: pytest --file-seconds-out tests/file_seconds.json"

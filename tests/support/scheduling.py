"""The order in which `make test`'s two pytest-xdist workers take the test files: the longest first.

``--dist loadfile`` hands out whole files (a module's fixtures, such as a sandbox flow or a synth, run once). xdist
hands them out in collection order, or with the most tests first, so a file of one long test (a benchmark smoke run,
a demo) could start last and keep one worker busy while the other had nothing left. Here a worker that needs work
takes the file with the largest recorded time (``tests/file_seconds.json``); files not recorded weigh a second per test.
That is the longest-processing-time-first rule, which keeps the two workers' ends close.

``pytest --file-seconds-out PATH`` records the times of a run (setup, call and teardown of each test, summed per
file) for the next: refresh ``tests/file_seconds.json`` from a `make test` run when files grow or move.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from xdist.scheduler import LoadFileScheduling

FILE_SECONDS = Path(__file__).resolve().parents[1] / "file_seconds.json"
SECONDS_PER_UNRECORDED_TEST = 1.0


def file_of(nodeid: str) -> str:
    """Pure: the test file of a test id (``tests/x/test_y.py::test_z[a]`` -> ``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def file_weight(tests: list[str], recorded: dict[str, float]) -> float:
    """Pure: the seconds a file's ``tests`` are expected to take: as recorded, else a second per test."""
    return recorded.get(file_of(tests[0]), SECONDS_PER_UNRECORDED_TEST * len(tests)) if tests else 0.0


def longest_file(files: dict[str, dict[str, bool]], recorded: dict[str, float]) -> str:
    """Pure: of xdist's work queue (file -> its test ids), the file expected to take longest."""
    return max(files, key=lambda name: file_weight(list(files[name]), recorded))


def recorded_seconds(path: Path = FILE_SECONDS) -> dict[str, float]:
    """The recorded seconds per file; empty when the file is missing (every file then weighs its test count)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


class LongestFileFirst(LoadFileScheduling):
    """``--dist loadfile``, the file with the most recorded seconds handed out first."""

    def __init__(self, config: pytest.Config, log: object | None = None) -> None:
        super().__init__(config, log)
        self.recorded = recorded_seconds()

    def _assign_work_unit(self, node: object) -> None:
        self.workqueue.move_to_end(longest_file(self.workqueue, self.recorded), last=False)
        super()._assign_work_unit(node)


class FileSecondsRecorder:
    """Sums each report's duration per file and writes them, largest first, when the session ends."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seconds: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        rounded = {name: round(seconds, 1) for name, seconds in self.seconds.most_common()}
        self.out.write_text(json.dumps(rounded, indent=1) + "\n", encoding="utf-8")

"""Work done once per test run, shared by the pytest-xdist workers: the first worker to ask builds it into a folder of
the run's temporary root, the others wait for it and read what it left there.

Each worker is a process of its own, so a session fixture runs once per worker; the app's synth (about 17 s of CPU)
ran on both workers of ``make test``. Without xdist (one process) the folder is the session's own.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

Built = TypeVar("Built")
DONE = ".done"  # written last, so a folder a failed build left behind is built again


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], None],
    load: Callable[[Path], Built],
) -> Built:
    """``load(folder)`` of the folder ``build(folder)`` filled, built by one worker of the run (under a file lock)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return load(folder)
    run_root = tmp_path_factory.getbasetemp().parent  # pytest-N/: the workers' popen-gwN folders are in it
    folder = run_root / name
    with (run_root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (folder / DONE).is_file():
            folder.mkdir(exist_ok=True)
            build(folder)
            (folder / DONE).write_text("built\n", encoding="utf-8")
    return load(folder)

"""A job for bench.warm_jvm's tests, without a JVM: each wave's spec file holds the exit status it answers."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.warm_jvm import serve


def answer(spec_path: Path) -> int:
    print("a line the job prints on its own")  # the bench passes over anything but "done <status>"
    return int(spec_path.read_text())


if __name__ == "__main__":
    sys.exit(serve(answer))

"""Time a full synth of every environment and pipeline (``make bench-synth``); target: under 60 s.

python -m bench.synth [--runs N] [--keep DIR]

Runs the CDK CLI exactly as ``make synth`` does (``npx cdk synth --quiet``), into a temporary
output folder, and prints the wall-clock seconds of each run and the best. The asset folders under
.cache/assets are built on the first synth after a code change and reused after that, so the
first run after an edit can be slower than the ones that follow.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 60.0


def time_synth(outdir: Path) -> float:
    """Seconds of one ``npx cdk synth --quiet -o outdir``.

    Raises:
        subprocess.CalledProcessError: the synth failed (its output is printed first).
    """
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    started = time.perf_counter()
    result = subprocess.run(
        ["npx", "cdk", "synth", "--quiet", "-o", str(outdir)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        result.check_returncode()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.synth", description="time a full cdk synth")
    parser.add_argument("--runs", type=int, default=1, help="number of synths (default 1)")
    parser.add_argument("--keep", type=Path, default=None, help="write the assembly here instead of a temp folder")
    args = parser.parse_args(argv)
    timings = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="odp-bench-synth-") as scratch:
            outdir = args.keep or Path(scratch) / "cdk.out"
            seconds = time_synth(outdir)
        timings.append(seconds)
        print(f"synth run {run}: {seconds:.1f} s")
    best = min(timings)
    verdict = "within" if best < TARGET_SECONDS else "OVER"
    print(f"full synth (all environments and pipelines): {best:.1f} s, {verdict} the {TARGET_SECONDS:.0f} s target")
    return 0 if best < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())

"""Post-deploy canary: run each deployed File Processor job once in its harmless mode (boto3 only).

python -m infrastructure.canary --env ENV [--config-dir DIR] [--timeout-minutes N]

Starts every cadence's Glue job with ``--odp_table_ids []`` and ``--odp_batch_id canary``: the job
installs its offline dependencies (the zip of wheels), starts Spark with Hudi's configuration in the
VPC, imports etl/ and odp/, checks that every tracker table answers (VPC endpoint and IAM), and ends
without touching a table (etl/jobs/file_processor.py, harmless mode). Waits for every run; exit 0 when
all SUCCEEDED, 1 naming each run that did not, with Glue's error message. A packaging or permission
error then stops the promotion instead of failing the first schedule.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import boto3

from infrastructure.smoke import config_and_environment
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import file_processor_job_name

CANARY_BATCH_ID = "canary"
CANARY_ARGUMENTS = FileProcessorJobArgs.run_arguments([], CANARY_BATCH_ID)
TERMINAL_STATES = {"SUCCEEDED", "FAILED", "STOPPED", "TIMEOUT", "ERROR", "EXPIRED"}
POLL_SECONDS = 20


def run_canary(
    glue: Any,
    job_names: Iterable[str],
    *,
    timeout_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[str]:
    """Start each job in harmless mode and wait; every run that did not succeed, as a sentence."""
    pending = {name: glue.start_job_run(JobName=name, Arguments=CANARY_ARGUMENTS)["JobRunId"] for name in job_names}
    failures: list[str] = []
    deadline = clock() + timeout_seconds
    while pending:
        for name, run_id in list(pending.items()):
            run = glue.get_job_run(JobName=name, RunId=run_id)["JobRun"]
            state = run["JobRunState"]
            if state in TERMINAL_STATES:
                del pending[name]
                if state != "SUCCEEDED":
                    failures.append(f"{name} run {run_id} ended {state}: {run.get('ErrorMessage', 'no message')}")
        if pending and clock() >= deadline:
            failures.extend(
                f"{name} run {run_id} still running after {timeout_seconds:.0f} s" for name, run_id in pending.items()
            )
            break
        if pending:
            sleep(POLL_SECONDS)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infrastructure.canary", description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True)
    parser.add_argument("--config-dir", type=Path, default=Path("config"))
    parser.add_argument("--timeout-minutes", type=float, default=30)
    args = parser.parse_args(argv)
    loaded = config_and_environment(args.config_dir, args.env)
    if isinstance(loaded, int):
        return loaded
    config, environment = loaded
    glue = boto3.session.Session(region_name=environment.region).client("glue")
    jobs = [file_processor_job_name(args.env, cadence) for cadence in config.cadences.cadences]
    failures = run_canary(glue, jobs, timeout_seconds=args.timeout_minutes * 60)
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    print(f"canary of {args.env}: {'ok' if not failures else f'{len(failures)} failure(s)'} ({len(jobs)} job(s))")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

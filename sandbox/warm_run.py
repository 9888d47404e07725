"""A warm cadence in the sandbox: one warm run in the local JVM for N ticks, in place of the state machine.

``python -m sandbox run --warm-ticks N [--warm-tick-seconds S]`` runs each cadence whose ``mode`` is ``warm`` as the
deployed warm job would (etl/file_processor/warm.py: plan each tick from the trackers, write through the File
Processor), with the local JVM kept across ticks. Between ticks it waits S seconds, then announces the staging files
that landed meanwhile (the File Manager, as the S3 events would): copy files into the staging folder during the wait
and the next tick applies them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import file_processor_job_name
from odp.tracker import JobRunRef, TableRun
from sandbox import aws_calls
from sandbox.account import ENVIRONMENT, RAW_BUCKET, LocalAccount
from sandbox.report import CadenceReport
from sandbox.staging import BucketMap

LOG = logging.getLogger("sandbox")


@dataclass(frozen=True)
class WarmTicks:
    """How long a warm cadence's run lasts in the sandbox (``--warm-ticks``, ``--warm-tick-seconds``)."""

    ticks: int = 1
    tick_seconds: float = 5.0


def run_warm_cadence(
    spark: Any,
    account: LocalAccount,
    bucket_map: BucketMap,
    *,
    cadence: str,
    outcomes: dict[str, TableRun],
    warm: WarmTicks | None,
    between_ticks: Callable[[], Any],
) -> CadenceReport:
    """Run ``cadence``'s warm writer for ``warm.ticks`` ticks ``warm.tick_seconds`` apart (default :class:`WarmTicks`);
    ``between_ticks`` announces what landed during the wait. The report's ``glue_runs`` counts the File Processor
    runs of every tick."""
    from etl.file_processor.warm import WarmSettingsError, run_warm

    arguments = account.static_job_arguments(cadence) | FileProcessorJobArgs.warm_arguments()
    job_run = JobRunRef(file_processor_job_name(ENVIRONMENT, cadence), f"warm-{int(time.time())}")

    warm = warm or WarmTicks()

    def wait(seconds: float) -> None:
        time.sleep(min(seconds, warm.tick_seconds))
        between_ticks()

    LOG.info("cadence %s: warm run for %d tick(s), %g s apart", cadence, warm.ticks, warm.tick_seconds)
    raw_folder = aws_calls.observing_folder(RAW_BUCKET, account.layout.raw_dir)
    try:
        with aws_calls.acting_as(aws_calls.FILE_PROCESSOR_JOB), raw_folder:
            outcome = run_warm(
                spark,
                FileProcessorJobArgs.from_arguments(arguments),
                dynamodb=account.dynamodb(),
                resolve_uri=aws_calls.reporting_reads(bucket_map.resolve),
                job_run=job_run,
                sleep=wait,
                max_ticks=warm.ticks,
                tick_seconds=warm.tick_seconds,
                keep_ticks=None,  # a bounded run: the report lists every table of every tick
            )
    except WarmSettingsError as error:
        return CadenceReport(
            cadence=cadence, execution_arn="", status="FAILED", error="WarmSettingsError", cause=str(error)
        )
    for table in outcome.tables:
        outcomes[table.table_id] = table
    failed = outcome.failed
    LOG.info(
        "cadence %s: warm run ended after %d tick(s), %d failed table run(s)", cadence, outcome.end.ticks, len(failed)
    )
    return CadenceReport(
        cadence=cadence,
        execution_arn=f"warm:{job_run.run_id}",
        status="FAILED" if failed else "SUCCEEDED",
        error="TablesFailed" if failed else None,
        cause="; ".join(f"{t.table_id}: {t.error}" for t in failed) or None,
        glue_runs=sum(len(tick) for tick in outcome.ticks),
    )

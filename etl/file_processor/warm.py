"""The warm writer: one long-lived run of a cadence's File Processor that runs every tick in its warm JVM.

Each tick reads the trackers as the Batch Manager does and plans with the same function (odp.cadence_plan
.plan_cadence: pending files of the cadence's active tables, leased and held tables left out, runs packed by work),
then writes each planned run through the same processor path (:func:`etl.file_processor.processor
.run_file_processor`: leases, exactly-once reconciliation, quarantine, history), one run after another in this one
Spark application. The tick loop and its stop rules are odp.warm's (pure). docs/decisions/032 says why and what it
costs.

What differs from a scheduled run: a planned run's worker count is not applied (the warm run has the job's workers; a
table larger than the target still gets a run of its own), and no Step Functions execution summarises a tick: each
table's outcome is in processing_tracker and its history as always, the run logs each tick's totals, and it publishes
the cadence's metrics the Batch Manager publishes for a scheduled execution (odp.cadence_metrics: pending files and
the oldest one's age, which the freshness alarm reads, failed tables, quarantined files). A tick that planned runs
puts the event that starts the datasets downstream of its tables, as a scheduled execution's end does
(odp.contracts.datasets_trigger).
"""

from __future__ import annotations

import hashlib
import json
import logging
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError
from pyspark.sql import SparkSession

from etl.file_processor.cost import send_metric_data
from etl.file_processor.processor import JobOutcome, run_file_processor
from odp.cadence_metrics import metric_data, outcome_metrics, plan_metrics
from odp.cadence_plan import plan_cadence
from odp.config.items import BatchConfigRecord
from odp.config.models import CadenceMode, schedule_interval_minutes
from odp.config.store import BatchConfigStore, TableConfigStore
from odp.contracts.datasets_trigger import warm_tick_event
from odp.contracts.file_processor import WARM_BATCH_ID, FileProcessorJobArgs
from odp.tracker import JobRunRef, TableRun, Trackers, utc_now
from odp.warm import StopReason, WarmEnd, Watch, run_ticks, warm_lifetime_seconds

logger = logging.getLogger(__name__)


class WarmSettingsError(Exception):
    """The cadence cannot run warm as stored in batch_config (absent, switched off, not warm, no fixed interval)."""


class DatasetsNotTriggeredError(Exception):
    """A tick's event to the datasets state machine was refused: the run stops (its job run fails, the failure alarm
    fires) so that a person starts the datasets of the tables it names."""


# The ticks a run keeps whole: a warm run lives for hours (up to its job timeout), and every tick's outcomes of a
# fleet's tables would pile up on the driver. Failures are kept apart, all of them.
RECENT_TICKS = 10


@dataclass
class WarmOutcome:
    """The recent ticks' job outcomes (at most ``keep_ticks``), every failed table run, and how the run ended."""

    keep_ticks: int | None = RECENT_TICKS
    ticks: deque[list[JobOutcome]] = field(init=False)
    failed: list[TableRun] = field(default_factory=list)
    end: WarmEnd | None = None

    def __post_init__(self) -> None:
        self.ticks = deque(maxlen=self.keep_ticks)

    def add(self, results: list[JobOutcome]) -> None:
        self.ticks.append(results)
        self.failed.extend(table for result in results for table in result.tables if table.status.failed)

    @property
    def tables(self) -> list[TableRun]:
        """The table runs of the ticks kept."""
        return [table for tick in self.ticks for outcome in tick for table in outcome.tables]


def settings_version(settings: BatchConfigRecord | None, job_modified: str | None) -> str:
    """The deployment a warm run watches: the cadence's batch_config item (rewritten at each deploy by the
    Configuration Manager) and the Glue job's ``LastModifiedOn`` (changed by every update of the job definition:
    script, arguments, workers). A digest, so the log line stays short."""
    stored = settings.to_item() if settings is not None else None
    text = json.dumps({"cadence": stored, "job": job_modified}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def warm_settings(settings: BatchConfigRecord | None, cadence: str) -> tuple[float, float]:
    """(tick seconds, lifetime seconds) of a warm cadence's stored settings.

    Raises:
        WarmSettingsError: the cadence is absent, switched off, not warm, or its schedule has no fixed interval.
    """
    if settings is None or not settings.is_active or settings.mode is not CadenceMode.WARM:
        state = "absent" if settings is None else ("switched off" if not settings.is_active else settings.mode.value)
        raise WarmSettingsError(
            f"cadence {cadence!r} is {state} in batch_config, not an active warm cadence: a warm run starts only for "
            "mode warm (config/cadences.yaml, then python -m odp.config load)"
        )
    interval = schedule_interval_minutes(settings.schedule)
    if interval is None:
        raise WarmSettingsError(
            f"cadence {cadence!r}: a warm cadence needs a rate(...) schedule, not {settings.schedule}"
        )
    tick = interval * 60.0
    try:
        return tick, warm_lifetime_seconds(settings.job_timeout_minutes, tick)
    except ValueError as error:
        raise WarmSettingsError(f"cadence {cadence!r}: {error}") from error


class _WarmCadence:
    """One warm run's reads and ticks: the cadence's stored settings (re-read before each tick), its plan, its runs."""

    def __init__(
        self,
        spark: SparkSession,
        args: FileProcessorJobArgs,
        dynamodb: Any,
        services: dict[str, Any],
        keep_ticks: int | None,
        *,
        events: Any = None,
    ):
        self.spark, self.args, self.dynamodb, self.services = spark, args, dynamodb, services
        self.events = events
        names = args.tracker_tables
        self.cadences = BatchConfigStore(dynamodb.Table(names.batch_config))
        self.tables = TableConfigStore(dynamodb.Table(names.table_config))
        self.trackers = Trackers.build(dynamodb, names, job_runs=services.get("job_runs"))
        self.settings = self.cadences.find(args.cadence)
        self.outcome = WarmOutcome(keep_ticks=keep_ticks)

    def _client(self, service: str) -> Any:
        """A boto3 client in the trackers' region (the job's own)."""
        return boto3.client(service, region_name=self.dynamodb.meta.client.meta.region_name)

    def trigger_datasets(self, number: int, table_ids: list[str]) -> None:
        """The event that starts the datasets downstream of ``table_ids`` (odp.contracts.datasets_trigger).

        Raises:
            DatasetsNotTriggeredError: EventBridge refused it (names the tables and what to run instead).
        """
        job_run = self.services.get("job_run")
        tick = f"warm:{job_run.run_id if job_run else 'local'}:tick-{number}"
        self.events = self.events or self._client("events")
        try:
            answer = self.events.put_events(Entries=[warm_tick_event(self.args.environment, tick, table_ids)])
            refused = answer.get("FailedEntryCount", 0) and answer["Entries"][0].get("ErrorMessage", "refused")
        except (ClientError, BotoCoreError) as error:
            refused = str(error)
        if refused:
            raise DatasetsNotTriggeredError(
                f"{tick}: the event that starts the datasets downstream of {len(table_ids)} table(s) was not put "
                f"({refused}); run the dataset job with --odp_changed_tables '{json.dumps(table_ids)}'"
            )

    def cloudwatch(self) -> Any:
        """The CloudWatch client the tick's metrics go to: the caller's (``services``), else one in the trackers'
        region (the job's own), as the File Processor's cost metrics do."""
        if self.services.get("cloudwatch") is None:
            self.services["cloudwatch"] = self._client("cloudwatch")
        return self.services["cloudwatch"]

    def watch(self, job_modified: Callable[[], str | None], stop: threading.Event) -> Watch:
        self.settings = self.cadences.find(self.args.cadence)
        return Watch(settings_version(self.settings, job_modified()), stop_requested=stop.is_set())

    def tick(self, number: int) -> None:
        """Plan as the Batch Manager plans (odp.cadence_plan), then each planned run through the File Processor."""
        settings, cadence = self.settings, self.args.cadence
        targets = settings.plan_targets if settings is not None and settings.is_active else None
        active = self.tables.active_ids(cadence) if targets is not None else []
        planned = plan_cadence(self.trackers.files, self.trackers.processing, active, targets, utc_now())
        results = []
        for index, run in enumerate(planned.runs, start=1):
            batch = replace(self.args, table_ids=run.table_ids, batch_id=f"{WARM_BATCH_ID}-{number}-{index}")
            results.append(run_file_processor(self.spark, batch, dynamodb=self.dynamodb, **self.services))
        self.outcome.add(results)
        tables = [table for result in results for table in result.tables]
        metrics = plan_metrics(planned.totals, leased=len(planned.leased), runs=len(planned.runs)) + outcome_metrics(
            failed_tables=sum(1 for table in tables if table.status.failed),
            failed_runs=0,
            quarantined_files=sum(len(table.quarantined_files) for table in tables),
        )
        send_metric_data(self.cloudwatch(), metric_data(cadence, metrics), what=f"warm tick {number}")
        if planned.runs:
            self.trigger_datasets(number, [table_id for run in planned.runs for table_id in run.table_ids])
        logger.info(
            "warm tick %d: %d runs, %d tables, %d failed; pending %s; leased %d, held %d",
            number,
            len(planned.runs),
            sum(len(result.tables) for result in results),
            sum(len(result.failed) for result in results),
            planned.totals.to_payload(),
            len(planned.leased),
            len(planned.held),
        )


def run_warm(
    spark: SparkSession,
    args: FileProcessorJobArgs,
    *,
    dynamodb: Any,
    job_modified: Callable[[], str | None] = lambda: None,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
    max_ticks: int | None = None,
    tick_seconds: float | None = None,
    keep_ticks: int | None = RECENT_TICKS,
    events: Any = None,
    **services: Any,
) -> WarmOutcome:
    """Run the cadence ``args.cadence``'s ticks until odp.warm says stop; never raises for a table.

    ``job_modified`` answers the Glue job's ``LastModifiedOn`` (the deploy signal; locally nothing); ``stop`` is set
    by SIGTERM (or a test) and ends the wait for the next tick (``sleep``: how the run waits, default ``stop.wait``);
    ``max_ticks`` / ``tick_seconds`` bound a local run (the sandbox's, a test's); ``keep_ticks``: how many recent
    ticks the outcome keeps whole (None: all, for a bounded local run; failures are all kept); ``events``: the
    EventBridge client the ticks' datasets events go to (default boto3's); ``services`` go to
    :func:`run_file_processor` (``resolve_uri``, ``job_run``, ``job_runs``, ``cloudwatch``, ``row_budget``).

    Raises:
        WarmSettingsError: the cadence is not an active warm cadence in batch_config.
        DatasetsNotTriggeredError: a tick's datasets event was refused (the run stops after that tick).
    """
    stop = stop or threading.Event()
    warm = _WarmCadence(spark, args, dynamodb, services, keep_ticks, events=events)
    tick, lifetime = warm_settings(warm.settings, args.cadence)
    outcome = warm.outcome
    outcome.end = run_ticks(
        warm.tick,
        lambda: warm.watch(job_modified, stop),
        tick_seconds=tick_seconds if tick_seconds is not None else tick,
        lifetime_seconds=lifetime,
        clock=clock,
        sleep=sleep or stop.wait,
        max_ticks=max_ticks,
    )
    logger.info("warm run ended after %d ticks: %s", outcome.end.ticks, outcome.end.reason.value)
    return outcome


def run_warm_job(spark: Any, args: FileProcessorJobArgs, *, job_run: JobRunRef | None) -> int:
    """Warm mode: the cadence's ticks in this JVM until a deploy, the run's lifetime or a stop (SIGTERM, which
    ``glue:BatchStopJobRun`` sends) ends it after its tick (:func:`run_warm`); 0, or 1 when any table
    failed in any tick (each failure is recorded on its table as in a scheduled run).

    Raises:
        WarmSettingsError: the cadence is not an active warm cadence in batch_config.
    """
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    glue = boto3.client("glue")

    def job_modified() -> str | None:  # glue:GetJob of its own job: every update of the definition changes it
        return str(glue.get_job(JobName=job_run.job_name)["Job"].get("LastModifiedOn")) if job_run else None

    outcome = run_warm(
        spark, args, dynamodb=boto3.resource("dynamodb"), job_modified=job_modified, stop=stop, job_run=job_run
    )
    for result in outcome.failed:
        logger.info("%s %s error=%s", result.table_id, result.status, result.error)
    return 1 if outcome.failed else 0


__all__ = [
    "RECENT_TICKS",
    "DatasetsNotTriggeredError",
    "StopReason",
    "WarmOutcome",
    "WarmSettingsError",
    "run_warm",
    "run_warm_job",
    "settings_version",
    "warm_settings",
]

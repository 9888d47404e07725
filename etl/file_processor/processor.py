"""The File Processor: for each table of a batch, landed files -> one Hudi commit -> trackers.

Each table runs in its own error boundary: its failure is recorded (refresh_error, error and stack
trace on processing_tracker, a history row), its files stay landed, and the next table runs.

A bad file never stalls its table: a file whose content fails (etl.file_processor.poison) is quarantined at
its first failure and the same run commits the table's other files; the run names it (quarantined_files).

Exactly once: the Hudi commit records the ids of the files it consumed (commit extra metadata). A
run first moves landed files that a completed commit already consumed to file_tracker_history
(reconciliation: a previous run crashed between its commit and its tracker update), and only then
reads the rest.
"""

from __future__ import annotations

import logging
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import boto3
from botocore.exceptions import ClientError
from pyspark.sql import DataFrame, SparkSession

from etl.change_counts import ChangeCounts, count_changes
from etl.errors import UnstorableChangeError
from etl.file_processor.concurrency import effective_concurrency, run_tables
from etl.file_processor.cost import dpu_seconds_share, publish_costs
from etl.file_processor.lease import LeaseKeeper
from etl.file_processor.poison import (
    FileProbe,
    deterministic_failure,
    files_named_by,
    trace_failure,
    traceable_failure,
)
from etl.file_processor.shards import with_shard
from etl.file_processor.table_plan import TablePlan, plan_table_run, source_files
from etl.file_processor.transform import transform_changes
from etl.file_processor.write_budget import RowBudget, input_storage_level, job_row_budget
from etl.hudi.commit import CommitResult, CommitTag, commit_once
from etl.hudi.kept_values import check_kept_columns, stored_data_columns
from etl.hudi.timeline import TableState, discard_uncommitted_table, read_table_state
from etl.hudi.writer import ChangeBatch, WriteResult, WriteSettings, job_write_profile, write_changes
from etl.readers import SourceFile, read_changes
from etl.readers.common import java_cause
from etl.readers.one_scan import bound_listing_tasks
from odp.config.models import DEFAULT_MAX_TABLE_ATTEMPTS, TableConfig, TableMode
from odp.config.store import TableConfigStore
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.faults import fault_point
from odp.naming import table_base_path, tombstone_path
from odp.tracker import (
    FileStatus,
    JobRunRef,
    JobRuns,
    JobRunsByEngine,
    LeaseLostError,
    RunStatus,
    TableRun,
    TrackedFile,
    Trackers,
    iso,
    utc_now,
)

logger = logging.getLogger(__name__)
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class JobOutcome:
    run_id: str
    tables: list[TableRun] = field(default_factory=list)

    @property
    def failed(self) -> list[TableRun]:
        """Tables whose run failed (refresh_error)."""
        return [result for result in self.tables if result.status.failed]


@dataclass(frozen=True)
class ReadChanges:
    """A table run's checked input: the files read (numbered in key order), their changes (persisted), counts."""

    sources: list[SourceFile]
    changes: DataFrame
    counts: ChangeCounts
    one_task: bool = False  # the changes were read into one Spark partition (TablePlan.one_task)


@dataclass(frozen=True)
class AppliedCommit:
    """What a table run's own commit applied; no commit when every landed file was done already."""

    files: int = 0
    rows: int = 0
    commit: CommitResult[WriteResult] | None = None
    ignored_columns: tuple[str, ...] = ()  # new_columns: ignore: what the read dropped
    ignored_values: int = 0

    @property
    def instant(self) -> str | None:
        return self.commit.instant if self.commit is not None else None

    def outcome(self) -> dict[str, Any]:
        """The TableRun fields of the commit (none when there was no commit)."""
        if self.commit is None:
            return {}
        written = self.commit.written
        choice = written.choice if written is not None else None  # None also for a replayed commit
        # a rewrite's write statistics count every row as an insert: the rewrite counted what it applied
        counts = written.counts if written is not None and written.counts is not None else self.commit
        return {
            "write_strategy": choice.strategy if choice is not None else None,
            "write_reason": choice.reason if choice is not None else None,
            "files": self.files,
            "rows": self.rows,
            "inserts": counts.inserts,
            "updates": counts.updates,
            "deletes": counts.deletes,
            "commit_instant": self.commit.instant,
            "stale_dropped": written.stale_dropped if written is not None else 0,
            "ignored_columns": self.ignored_columns,
            "ignored_values": self.ignored_values,
        }


def _log_dropped(table_id: str, dropped: Sequence[tuple[str, str]]) -> None:
    """One WARNING per file whose columns ``new_columns: ignore`` dropped, naming them."""
    by_file: dict[str, list[str]] = {}
    for file, name in dropped:
        by_file.setdefault(file, []).append(name)
    for file, names in by_file.items():
        logger.warning(
            "%s: %s: dropped column(s) outside the table's columns (new_columns: ignore): %s",
            table_id,
            file,
            ", ".join(names),
        )


def identity(uri: str) -> str:
    return uri


class _TableRunner:
    """One table's run: lease, reconcile, read, write, record. Private; used by run_file_processor."""

    def __init__(
        self,
        spark: SparkSession,
        args: FileProcessorJobArgs,
        *,
        dynamodb: Any,
        resolve_uri: Callable[[str], str],
        clock: Clock,
        run_id: str,
        row_budget: RowBudget,
        job_run: JobRunRef | None = None,
        job_runs: JobRuns | None = None,
    ) -> None:
        names = args.tracker_tables
        self.spark = spark
        self.args = args
        trackers = Trackers.build(dynamodb, names, clock=clock)
        self.files = trackers.files
        self.processing = trackers.processing
        self.table_configs = TableConfigStore(dynamodb.Table(names.table_config))
        self.resolve_uri = resolve_uri
        self.clock = clock
        self.run_start = clock()  # the event-time horizon of every table of the run starts here
        self.run_id = run_id
        self.job_run = job_run
        self.job_runs = job_runs
        self.row_budget = row_budget
        self.retention = timedelta(days=args.history_retention_days)
        self.write_settings = WriteSettings(job_write_profile(spark, args), args.catalog_sync, args.raw_root)
        self.concurrency = effective_concurrency(args.table_concurrency, len(args.table_ids))

    def _dpu_seconds(self, seconds: float) -> float | None:
        return dpu_seconds_share(seconds, job_dpus=self.args.job_dpus, concurrency=self.concurrency)

    def run(self, table_id: str) -> TableRun:
        """One table, inside its error boundary: any failure becomes a refresh_error result."""
        started = time.monotonic()
        started_at = iso(self.clock())
        base_path: str | None = None
        config: TableConfig | None = None
        set_aside: list[str] = []  # files this run quarantined, kept for its record even if it fails later
        try:
            config = self.table_configs.get(table_id)
            if not config.is_active:
                return self._skipped(table_id, started_at, "inactive in table_config: its files stay landed")
            refused = self._acquire(table_id)
            if refused is not None:
                return self._skipped(table_id, started_at, refused)
            with LeaseKeeper(self.processing, table_id, self.run_id, lease_seconds=self.args.lease_seconds) as keeper:
                base_path = table_base_path(self.args.raw_root, config.database, config.target_table)
                result = self._process(
                    table_id, config, base_path, keeper, started, started_at=started_at, set_aside=set_aside
                )
            run = result.model_copy(
                update={"finished_at": iso(self.clock()), "dpu_seconds": self._dpu_seconds(result.seconds)}
            )
            self.processing.finish(run, self.run_id, history_retention=self.retention)
            return run
        except Exception as error:  # noqa: BLE001 - the per-table error boundary: record, report, move on
            return self._failed(table_id, started_at, started, error, base_path, config=config, set_aside=set_aside)

    def _acquire(self, table_id: str) -> str | None:
        """Take the table's lease (or take it over from an ended job run: ProcessingTracker.take); None when
        taken, else why not (names the holder and its expiry)."""
        answer = self.processing.take(
            table_id,
            self.run_id,
            lease_seconds=self.args.lease_seconds,
            job_runs=self.job_runs,
            run_id=self.run_id,
            batch_id=self.args.batch_id,
            job_run=self.job_run,
        )
        if answer.took_over is not None:
            logger.warning("%s: %s", table_id, answer.took_over)
        return answer.refused

    def _skipped(self, table_id: str, started_at: str, message: str) -> TableRun:
        run = self._run(table_id, started_at, RunStatus.SKIPPED, finished_at=iso(self.clock()), error=message)
        self.processing.append_history(run, history_retention=self.retention)
        logger.warning("%s skipped: %s", table_id, message)
        return run

    def _process(
        self,
        table_id: str,
        config: TableConfig,
        base_path: str,
        keeper: LeaseKeeper,
        started: float,
        *,
        started_at: str,
        set_aside: list[str],
    ) -> TableRun:
        """Plan the table's run from its landed files and timeline (table_plan), then apply the plan.

        A file that fails deterministically is quarantined and the plan goes on without it (``set_aside``
        collects the keys); the commit names exactly the files applied.

        The table's state is read once (:func:`etl.hudi.timeline.read_table_state`, under the lease) and passed
        down: the plan, the read's column check, the write and the commit take it from there.
        """
        state, discarded = self._table_state(config, base_path)
        landed = self.files.landed_files(table_id)
        commits = list(state.commits)
        historical = config.mode is TableMode.HISTORICAL and bool(landed)
        plan = plan_table_run(config, landed, commits, self.files.applied_content(table_id) if historical else {})
        self._reconcile(plan, keeper)
        plan, applied = self._read_and_apply(config, plan, keeper, state=state, set_aside=set_aside)
        keeper.check()
        if plan.apply:
            self.files.mark_processed(
                plan.apply, commit_instant=applied.instant, run_id=self.run_id, retention=self.retention
            )
            fault_point("etl.after_mark_processed")
        self._skip_duplicates(table_id, plan.duplicates, applied.instant)
        return self._completed(
            table_id,
            started_at,
            **applied.outcome(),
            seconds=time.monotonic() - started,
            base_path=base_path,
            reconciled=plan.reconciled,
            discarded=discarded,
            duplicate_files=len(plan.duplicates),
            quarantined_files=tuple(set_aside),
        )

    def _reconcile(self, plan: TablePlan, keeper: LeaseKeeper) -> None:
        """Move the landed files a completed commit already consumed to history, one commit at a time."""
        for instant, files in plan.reconcile:
            keeper.check()
            self.files.mark_processed(files, commit_instant=instant, run_id=self.run_id, retention=self.retention)

    def _read_and_apply(
        self,
        config: TableConfig,
        plan: TablePlan,
        keeper: LeaseKeeper,
        *,
        state: TableState,
        set_aside: list[str],
    ) -> tuple[TablePlan, AppliedCommit]:
        """Read, check and commit the plan's files; a file the write refuses before writing anything
        (:class:`etl.errors.UnstorableChangeError`) is quarantined like a bad read, and the rest read and
        applied again in this run. Returns the plan of the files applied and what the commit applied."""
        while True:
            plan, read = self._read(config, plan, state, keeper, set_aside)
            if read is None:
                return plan, AppliedCommit()
            try:
                return plan, self._apply(config, read, state, keeper)
            except UnstorableChangeError as error:
                plan = self._set_aside(config.table_id, plan, error, keeper, set_aside)

    def _read(
        self, config: TableConfig, plan: TablePlan, state: TableState, keeper: LeaseKeeper, set_aside: list[str]
    ) -> tuple[TablePlan, ReadChanges | None]:
        """Read and check the plan's files in one pass; a file failing deterministically is quarantined at once
        (etl.file_processor.poison) and the rest is read again without it, until a pass holds no bad change. A
        failure that names no file, whatever its type, is first traced to its file by reading the files apart
        (:func:`etl.file_processor.poison.trace_failure`).

        Returns the plan of the files that remain and their checked changes (None: every file was set aside).
        Raises the table's errors, a failure traced to no file (``UntracedReadError``) and a failure that may pass
        on the next try: the table's run fails (its failed runs counted, max_table_attempts).
        """
        stored = stored_data_columns(config, state)  # what files must carry without `columns`
        while plan.apply:
            sources = source_files(plan.apply, self.resolve_uri)
            changes: DataFrame | None = None
            try:
                read = self._read_files(config, sources, stored)
                changes = (read.coalesce(1) if plan.one_task else read).persist(input_storage_level(plan.one_task))
                counts = count_changes(changes, tuple(config.primary_key), sources)
            except Exception as error:  # noqa: BLE001 - _set_aside raises it again unless it convicts one file
                if changes is not None:
                    changes.unpersist()
                probe = self._probe(config, stored)
                plan = self._set_aside(config.table_id, plan, error, keeper, set_aside, probe=probe)
                continue
            return plan, ReadChanges(sources, changes, counts, one_task=plan.one_task)
        return plan, None

    def _read_files(self, config: TableConfig, sources: Sequence[SourceFile], stored: Sequence[str]) -> DataFrame:
        """The change frame of ``sources`` (a merged table's shard added), not yet checked."""
        read = read_changes(self.spark, sources, config.as_read(), run_start=self.run_start, stored_columns=stored)
        return read.transform(with_shard(config))

    def _probe(self, config: TableConfig, stored: Sequence[str]) -> FileProbe:
        """A read and check of some of the plan's files, as :meth:`_read` does it: the error it raises, else None."""

        def probe(files: list[TrackedFile]) -> BaseException | None:
            sources = source_files(files, self.resolve_uri)
            try:
                count_changes(self._read_files(config, sources, stored), tuple(config.primary_key), sources)
            except Exception as error:  # noqa: BLE001 - a probe reports whatever the read raises
                return error
            return None

        return probe

    def _set_aside(
        self,
        table_id: str,
        plan: TablePlan,
        error: Exception,
        keeper: LeaseKeeper,
        set_aside: list[str],
        *,
        probe: FileProbe | None = None,
    ) -> TablePlan:
        """The plan without the one file ``error`` convicts (etl.file_processor.poison), that file quarantined.
        With ``probe``, a failure that names no file is first traced to one (poison.trace_failure).

        Raises:
            error: again, when it convicts no single file (it may pass on the next try, or is the table's);
            UntracedReadError: reading the files apart traced the failure to no file.
        """
        bad = deterministic_failure(error, plan.apply)
        if bad is None and probe is not None and traceable_failure(error, plan.apply):
            error = self._traced(table_id, plan, error, probe, keeper)
            bad = deterministic_failure(error, plan.apply)
        if bad is None:
            raise error
        after = plan.set_aside(bad, f"{type(error).__name__}: {error}")
        keeper.check()
        self._quarantine(table_id, after.quarantine[len(plan.quarantine) :], set_aside)
        return after

    def _traced(
        self, table_id: str, plan: TablePlan, error: Exception, probe: FileProbe, keeper: LeaseKeeper
    ) -> BaseException:
        """``error`` traced to the file it belongs to (its error), or an UntracedReadError; logged with the reads."""
        traced, trace = trace_failure(error, plan.apply, probe, table_id=table_id)
        keeper.check()
        logger.warning(
            "%s: a read of %d file(s) failed (%s: %s); reading them apart took %d reads: %s",
            table_id,
            len(plan.apply),
            type(error).__name__,
            java_cause(error),
            trace.reads,
            f"traced to {trace.culprit.item.key}" if trace.culprit is not None else "no file is the difference",
        )
        return traced

    def _quarantine(self, table_id: str, held: Sequence[tuple[TrackedFile, str]], set_aside: list[str]) -> None:
        """file_tracker: each held file landed -> quarantined, its reason kept; its key joins ``set_aside``.

        A file no longer landed (an operator moved it meanwhile) is left as it is, and not applied either.
        """
        for tracked, reason in held:
            moved = self.files.quarantine(tracked, f"quarantined at its first failure, by run {self.run_id}: {reason}")
            if moved:
                set_aside.append(tracked.key)
            logger.error(
                "%s: %s %s; the run goes on without it (python -m odp file release %s %s, after a fix, applies "
                "it in its order): %s",
                table_id,
                tracked.key,
                "quarantined" if moved else "not landed any more, not applied",
                table_id,
                tracked.key,
                reason,
            )

    def _apply(
        self,
        config: TableConfig,
        read: ReadChanges,
        state: TableState,
        keeper: LeaseKeeper,
    ) -> AppliedCommit:
        """Commit the checked changes of the plan's files once (etl.hudi.commit), within the job's row budget."""
        sources, changes, counts = read.sources, read.changes, read.counts
        try:
            _log_dropped(config.table_id, counts.dropped)
            transformed = transform_changes(self.spark, changes, config)
            check_kept_columns(config, counts.kept_columns, changes.columns, transformed.columns)
            batch = ChangeBatch(
                transformed,
                rows=counts.rows,
                has_full_load=any(s.is_full_load for s in sources),
                has_deletes=counts.deletes > 0,
                kept_columns=counts.kept_columns,
                one_task=read.one_task,
            )
            with self.row_budget.reserve(counts.rows, config.table_id):
                keeper.check()
                commit = commit_once(
                    self.spark,
                    state.base_path,
                    CommitTag(self.run_id, tuple(s.file_id for s in sources)),
                    lambda tag: write_changes(
                        self.spark, batch, config, state.base_path, tag, settings=self.write_settings, state=state
                    ),
                    job="etl",
                    label=config.table_id,
                    seen=state.commits,
                )
        finally:
            changes.unpersist()
        return AppliedCommit(len(sources), counts.rows, commit, counts.dropped_columns, counts.dropped_values)

    def _completed(self, table_id: str, started_at: str, **outcome: Any) -> TableRun:
        return self._run(table_id, started_at, RunStatus.COMPLETED, **outcome)

    def _run(self, table_id: str, started_at: str, status: RunStatus, **outcome: Any) -> TableRun:
        """This job run's record of one table (its cadence and batch), with ``outcome``'s fields."""
        return TableRun(
            table_id=table_id,
            run_id=self.run_id,
            started_at=started_at,
            status=status,
            cadence=self.args.cadence,
            batch_id=self.args.batch_id,
            **outcome,
        )

    def _skip_duplicates(
        self, table_id: str, duplicates: Sequence[tuple[TrackedFile, TrackedFile]], this_commit: str | None
    ) -> None:
        """Move files whose content the table already holds to history, unapplied, each with its reason."""
        for duplicate, original in duplicates:
            instant = original.commit_instant or this_commit or ""
            reason = (
                f"same content (ETag {duplicate.content_tag}) as {original.key}, already applied to this historical "
                f"table by commit {instant}; set replay=true on its file_tracker item to apply it anyway"
            )
            logger.warning("%s: %s not applied: %s", table_id, duplicate.key, reason)
            self.files.mark_processed(
                [duplicate],
                commit_instant=instant,
                run_id=self.run_id,
                retention=self.retention,
                status=FileStatus.DUPLICATE_CONTENT,
                skip_reason=reason,
            )

    def _table_state(self, config: TableConfig, base_path: str) -> tuple[TableState, tuple[str, ...]]:
        """The table's state, read once, after recovering from a run killed during a first commit (of the table, or
        of its tombstone table): returns the state and the paths discarded.

        Runs under the table's lease, before anything reads either table.
        """
        state = read_table_state(self.spark, base_path)
        discarded = []
        if state.uncommitted and discard_uncommitted_table(self.spark, base_path):
            discarded.append(base_path)
            state = TableState(base_path)
        if config.mode is TableMode.CURRENT:
            tombstones = tombstone_path(self.args.raw_root, config.database, config.target_table)
            if discard_uncommitted_table(self.spark, tombstones):
                discarded.append(tombstones)
        return state, tuple(discarded)

    def _quarantine_named_files(
        self, table_id: str, error: Exception, config: TableConfig | None
    ) -> tuple[tuple[str, ...], str]:
        """Count this failure against the landed file the error names; quarantine it at its limit.

        A deterministic failure (etl.file_processor.poison) not caught while reading quarantines its file at
        once; any other failure naming one file counts against it (``max_file_attempts``). Runs while the failed
        run still holds the lease (before :meth:`ProcessingTracker.finish`). Returns the keys quarantined now
        and when (for the run's error). A tracker error here never hides the table's own error.
        """
        if config is None or isinstance(error, LeaseLostError):
            return (), ""
        text = f"{type(error).__name__}: {error}"
        try:
            landed = self.files.landed_files(table_id)
            bad = deterministic_failure(error, landed)
            if bad is not None:
                held: list[str] = []
                self._quarantine(table_id, [(bad, text)], held)
                return tuple(held), "at its first failure"
            quarantined = tuple(
                f.key
                for f in files_named_by(error, landed)
                if self.files.record_failure(f, text, max_attempts=config.max_file_attempts)
            )
        except ClientError as failure:
            logger.error("%s: could not count the failure against its files: %s", table_id, failure)
            return (), ""
        for key in quarantined:
            logger.error(
                "%s: quarantined %s after %d failed runs; the table goes on without it "
                "(python -m odp file release %s %s, after a fix, applies it in its order)",
                table_id,
                key,
                config.max_file_attempts,
                table_id,
                key,
            )
        return quarantined, f"after {config.max_file_attempts} failed runs"

    def _failed_runs(self, table_id: str, config: TableConfig | None) -> tuple[int, int]:
        """The table's failed runs in a row with this one, and its ``max_table_attempts`` (reached: the table is
        held). A tracker error here counts this run alone: it never hides the table's own error."""
        bound = config.max_table_attempts if config is not None else DEFAULT_MAX_TABLE_ATTEMPTS
        try:
            failed = (self.processing.state(table_id).failed_runs or 0) + 1
        except ClientError as failure:
            logger.error("%s: could not read its failed runs: %s", table_id, failure)
            failed = 1
        return failed, bound

    def _failed(
        self,
        table_id: str,
        started_at: str,
        started: float,
        error: Exception,
        base_path: str | None,
        *,
        config: TableConfig | None = None,
        set_aside: Sequence[str] = (),
    ) -> TableRun:
        """The failed run's record; ``set_aside``: files this run quarantined before it failed."""
        message = f"{type(error).__name__}: {error}"
        trace = traceback.format_exc()
        quarantined, when = self._quarantine_named_files(table_id, error, config)
        if quarantined:
            message += f" [quarantined {when}: {', '.join(quarantined)}; the next run goes on without them]"
        if set_aside:
            message += f" [quarantined earlier in this run: {', '.join(set_aside)}]"
        quarantined = (*set_aside, *quarantined)
        failed_runs, bound = self._failed_runs(table_id, config)
        held = failed_runs >= bound
        if held:
            message += (
                f" [failed {failed_runs} runs in a row (max_table_attempts {bound}): held, the Batch Manager "
                f"plans it no more; after a fix, python -m odp retry {table_id}]"
            )
        seconds = time.monotonic() - started
        logger.error("%s failed: %s", table_id, message)
        run = self._run(
            table_id,
            started_at,
            RunStatus.REFRESH_ERROR,
            finished_at=iso(self.clock()),
            seconds=seconds,
            error=message[:4000],
            error_trace=trace[-30000:],
            quarantined_files=quarantined,
            dpu_seconds=self._dpu_seconds(seconds),
            failed_runs=failed_runs,
            held=held or None,
        )
        try:
            self.processing.finish(run, self.run_id, history_retention=self.retention)
        except (LeaseLostError, ClientError) as lost:
            # The run failed and its outcome cannot be stored: the lease expires, the files stay landed.
            logger.error("%s: could not record the failure: %s", table_id, lost)
        return run.model_copy(update={"error": message, "base_path": base_path})


def run_file_processor(
    spark: SparkSession,
    args: FileProcessorJobArgs,
    *,
    dynamodb: Any = None,
    resolve_uri: Callable[[str], str] | None = None,
    clock: Clock | None = None,
    job_run: JobRunRef | None = None,
    job_runs: JobRuns | None = None,
    cloudwatch: Any = None,
    row_budget: RowBudget | None = None,
) -> JobOutcome:
    """Process every table of ``args.table_ids``, ``args.table_concurrency`` at once (concurrency.py), each
    in its own error boundary. Never raises for a table.

    ``dynamodb`` is a boto3 DynamoDB resource; ``resolve_uri`` maps ``s3://bucket/key`` to what Spark
    reads (identity on Glue; the sandbox maps buckets to folders). ``job_run`` (the job run this is,
    etl.engine) is recorded with each lease; ``job_runs`` answers whether another lease holder's job run
    has ended (default: odp.tracker.JobRunsByEngine, GetJobRun of Glue or of EMR Serverless);
    ``cloudwatch`` (a boto3 client) receives each table run's seconds and DPU-seconds
    (etl.file_processor.cost); ``row_budget`` bounds the input rows of the tables' writes at once
    (default: sized from the Spark configuration, etl.file_processor.write_budget).
    """
    run_id = f"{args.batch_id}-{uuid.uuid4().hex[:12]}"
    dynamodb = dynamodb if dynamodb is not None else boto3.resource("dynamodb")
    job_runs = job_runs if job_runs is not None else JobRunsByEngine(region_name=dynamodb.meta.client.meta.region_name)
    if row_budget is None:
        row_budget = job_row_budget(dict(spark.sparkContext.getConf().getAll()))
    bound_listing_tasks(spark)

    def run_table(table_id: str) -> TableRun:
        # One runner per table: boto3 resources are not shared across threads.
        runner = _TableRunner(
            spark,
            args,
            dynamodb=dynamodb,
            resolve_uri=resolve_uri or identity,
            clock=clock or utc_now,
            run_id=run_id,
            row_budget=row_budget,
            job_run=job_run,
            job_runs=job_runs,
        )
        result = runner.run(table_id)
        logger.info("%s: %s", table_id, result)
        return result

    outcome = JobOutcome(run_id=run_id)
    outcome.tables.extend(run_tables(spark, args.table_ids, run_table, concurrency=args.table_concurrency))
    costs = [(r.table_id, r.seconds, r.dpu_seconds) for r in outcome.tables if r.status is not RunStatus.SKIPPED]
    if cloudwatch is None:  # the trackers' region: the job's own
        cloudwatch = boto3.client("cloudwatch", region_name=dynamodb.meta.client.meta.region_name)
    ignored = [(r.table_id, r.ignored_values) for r in outcome.tables if r.ignored_values]
    publish_costs(cloudwatch, args.cadence, costs, ignored=ignored)
    return outcome

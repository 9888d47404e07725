"""What a File Processor run knows: the job's scope, built once from its arguments, and one table run's context,
which the steps of the table run (etl.file_processor.steps) fill in order.

The job's arguments are read here and nowhere below: a step reads the scope and the context, never the contract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any

from etl.change_counts import ChangeCounts
from etl.file_processor.concurrency import effective_concurrency
from etl.file_processor.cost import dpu_seconds_share
from etl.file_processor.write_budget import RowBudget
from etl.hudi.commit import CommitResult
from etl.hudi.options import HudiProfile, WriteProfile
from etl.raw_table.batch import WriteResult, WriteSettings
from etl.raw_table.writer import RawTableWriter
from odp.config.models import TableConfig
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames
from odp.tracker import FileTracker, JobRunRef, JobRuns, ProcessingTracker, RunStatus, TableRun

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from etl.file_processor.lease import LeaseKeeper
    from etl.file_processor.quarantine import QuarantinePolicy
    from etl.file_processor.table_plan import TablePlan
    from etl.hudi.timeline import HudiTableState
    from etl.readers import SourceFile

Clock = Callable[[], datetime]


class StepOrderError(RuntimeError):
    """A table run step asked for what an earlier step sets before that step ran: a defect of the step list."""


class Then(Enum):
    """What a table run step answers (etl.file_processor.steps)."""

    NEXT = "next"  # go on with the next step
    READ_AGAIN = "read_again"  # a file was set aside after the read: read the plan's files again


def job_write_profile(spark: SparkSession, args: FileProcessorJobArgs) -> WriteProfile:
    """The write profile of a run: the job's ``hudi_profile`` and the cores Spark has (local sizing)."""
    return WriteProfile(profile=HudiProfile(args.hudi_profile), cores=spark.sparkContext.defaultParallelism)


@dataclass(frozen=True)
class JobScope:
    """One File Processor job run: what every table run of it shares, read once from the job's arguments."""

    spark: SparkSession
    run_id: str
    cadence: str
    batch_id: str
    raw_root: str
    lease_seconds: int
    retention: timedelta
    job_dpus: float | None
    concurrency: int
    writer: RawTableWriter  # built once, writes every table of the job
    tracker_tables: TrackerTableNames
    dynamodb: Any
    resolve_uri: Callable[[str], str]
    clock: Clock
    run_start: datetime  # the event-time horizon of every table of the run starts here
    row_budget: RowBudget
    job_run: JobRunRef | None = None
    job_runs: JobRuns | None = None

    @classmethod
    def from_args(
        cls,
        spark: SparkSession,
        args: FileProcessorJobArgs,
        *,
        run_id: str,
        **services: Any,
    ) -> JobScope:
        """``services``: ``dynamodb``, ``resolve_uri``, ``clock``, ``row_budget``, ``job_run``, ``job_runs``."""
        clock = services["clock"]
        return cls(
            spark=spark,
            run_id=run_id,
            cadence=args.cadence,
            batch_id=args.batch_id,
            raw_root=args.raw_root,
            lease_seconds=args.lease_seconds,
            retention=timedelta(days=args.history_retention_days),
            job_dpus=args.job_dpus,
            concurrency=effective_concurrency(args.table_concurrency, len(args.table_ids)),
            writer=RawTableWriter(WriteSettings(job_write_profile(spark, args), args.catalog_sync, args.raw_root)),
            tracker_tables=args.tracker_tables,
            run_start=clock(),
            **services,
        )

    def dpu_seconds(self, seconds: float) -> float | None:
        """A table run's share of the job's DPU-seconds (etl.file_processor.cost)."""
        return dpu_seconds_share(seconds, job_dpus=self.job_dpus, concurrency=self.concurrency)

    def table_run(self, table_id: str, started_at: str, status: RunStatus, **outcome: Any) -> TableRun:
        """This job run's record of one table (its cadence and batch), with ``outcome``'s fields."""
        return TableRun(
            table_id=table_id,
            run_id=self.run_id,
            started_at=started_at,
            status=status,
            cadence=self.cadence,
            batch_id=self.batch_id,
            **outcome,
        )


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
            "write_reason": choice.reason if choice is not None else written.index_reason if written else None,
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


@dataclass
class TableRunContext:
    """One table run under its lease: who runs it, and what each step found for the next.

    Set when the run starts: ``scope``, ``config``, ``base_path``, ``files`` / ``processing`` (this thread's
    trackers), ``keeper`` (the lease), ``quarantine`` (the run's quarantine policy), ``started`` (monotonic)
    and ``started_at``. Filled by the steps: ``state`` and ``discarded`` and ``plan`` (plan), ``read`` (read),
    ``applied`` (apply), ``run`` (record); ``step_seconds`` by the step list (each step's seconds, summed when the
    run reads again) and by apply (the write's phases).
    """

    scope: JobScope
    config: TableConfig
    base_path: str
    files: FileTracker
    processing: ProcessingTracker
    keeper: LeaseKeeper
    quarantine: QuarantinePolicy
    started: float
    started_at: str
    state: HudiTableState | None = None
    discarded: tuple[str, ...] = ()
    plan: TablePlan | None = None
    read: ReadChanges | None = None
    applied: AppliedCommit = field(default_factory=AppliedCommit)
    run: TableRun | None = None
    step_seconds: dict[str, float] = field(default_factory=dict)

    def add_seconds(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to what ``name`` (a step, or a write phase) took in this run."""
        self.step_seconds[name] = self.step_seconds.get(name, 0.0) + seconds

    @property
    def table_id(self) -> str:
        return self.config.table_id

    def planned(self) -> TablePlan:
        """The plan step's plan.

        Raises:
            StepOrderError: a step before the plan step asked for it (a defect of TABLE_RUN_STEPS).
        """
        if self.plan is None:
            raise StepOrderError(f"{self.table_id}: the plan step has not run")
        return self.plan

    def stored_state(self) -> HudiTableState:
        """The table's state as the plan step read it (raises :class:`StepOrderError` before it ran)."""
        if self.state is None:
            raise StepOrderError(f"{self.table_id}: the plan step has not run")
        return self.state

    @property
    def set_aside(self) -> Sequence[str]:
        """The keys of the files this run quarantined."""
        return self.quarantine.set_aside

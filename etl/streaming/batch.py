"""One micro-batch of a stream -> one Hudi commit per table it touches, exactly once; bad records set aside.

``process_micro_batch`` is what ``forEachBatch`` calls, on Glue (Kinesis) and locally (a file source):

1. every record is routed to its configured table and parsed (:mod:`etl.streaming.records`, on the
   executors); a record Kinesis delivered twice in the batch (same DynamoDB ``eventID``) is kept once;
2. bad records (not JSON, unknown table, no image, a null key, a value that does not fit its column's
   type) are written to ``<error_root>/<stream>/bad_records/checkpoint=<id>/batch=<n>/`` with the reason, and counted;
3. per table, in its own error boundary, committed once by :func:`etl.hudi.commit.commit_once`: if a
   completed Hudi commit already carries this batch's tag (a crash between that commit and the
   checkpoint), the table is skipped; otherwise its changes are written by :class:`etl.raw_table.writer.RawTableWriter`
   (last change per key, deletes, late records, COW / MOR, current / historical) with the batch tag as the
   commit's run id and the shard positions it covers as the commit's consumed ids (``_odp_run_id`` /
   ``_odp_file_ids`` in the commit's extra metadata); fault points ``streaming.before_commit`` and
   ``streaming.after_commit`` (odp.faults) sit on either side of the commit;
4. a table whose write fails has its records written to
   ``<error_root>/<stream>/failed_tables/checkpoint=<id>/batch=<n>/table=<table_id>/`` with the error: the other tables
   and the following batches go on, and the records can be replayed (event-time ordering keeps a
   replayed old change from overwriting a newer row).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import OP, ORDERING
from etl.hudi.commit import CommitTag, commit_once
from etl.hudi.options import WriteProfile
from etl.jvm import gateway_without_delay
from etl.raw_table.batch import ChangeBatch, WriteResult, WriteSettings
from etl.raw_table.writer import RawTableWriter
from etl.readers.event_horizon import table_horizon
from etl.readers.new_columns import record_columns
from etl.readers.typed_values import TYPES, VALUES
from etl.streaming.records import DATA, SEQUENCE_NUMBER, SHARD, Route, StreamRecord, route_records
from etl.streaming.typed_rows import cast_error, change_frame
from odp.config.models import NewColumns, TableConfig
from odp.naming import table_base_path
from odp.tracker import RunLedger, TableRun, iso, utc_now
from odp.tracker.statuses import RunStatus

logger = logging.getLogger(__name__)

TABLE_ID, ERROR, EVENT_ID, REASON = "_odp_table_id", "_odp_error", "_odp_event_id", "reason"
ROUTED_SCHEMA = T.StructType(
    [
        T.StructField(TABLE_ID, T.StringType()),
        T.StructField(SEQUENCE_NUMBER, T.StringType()),
        T.StructField(SHARD, T.StringType()),
        T.StructField(EVENT_ID, T.StringType()),
        T.StructField(OP, T.StringType()),
        T.StructField(ORDERING, T.StringType()),
        T.StructField(ERROR, T.StringType()),
        T.StructField(VALUES, T.MapType(T.StringType(), T.StringType())),
        T.StructField(TYPES, T.MapType(T.StringType(), T.StringType())),
        T.StructField(DATA, T.StringType()),
    ]
)
# What a bad record looks like in the error location (JSON lines).
ERROR_COLUMNS = ("batch", TABLE_ID, REASON, SHARD, SEQUENCE_NUMBER, DATA)


@dataclass(frozen=True)
class StreamTarget:
    """What one stream writes and where: its tables, the lake, the error location."""

    stream: str
    tables: tuple[TableConfig, ...]
    raw_root: str  # s3://raw-bucket or file:///...: tables at <raw_root>/<database>/<table>
    error_root: str  # s3://bucket/prefix or file:///...: bad records at <error_root>/<stream>/...
    catalog_sync: bool = False
    # Hudi write settings: production (glue) unless a local run says otherwise (etl.hudi.options.WriteProfile).
    profile: WriteProfile = field(default_factory=WriteProfile)
    # Where each table's commit of a batch is recorded as its run (odp.tracker.ledger); None: not recorded.
    ledger: RunLedger | None = None

    def routes(self, processed_at: datetime) -> dict[str, Route]:
        """DynamoDB table name (the config's ``table``) -> route; event times checked against each table's
        horizon from the batch's processing time ``processed_at``."""
        return {
            table.table: Route(table.table_id, tuple(table.primary_key), table_horizon(table, processed_at))
            for table in self.tables
        }

    def base_path(self, table: TableConfig) -> str:
        return table_base_path(self.raw_root, table.database, table.target_table)

    def writer(self) -> RawTableWriter:
        """The stream's table writer: its profile and catalog sync, fault points ``streaming.*``."""
        return RawTableWriter(WriteSettings(self.profile, self.catalog_sync, self.raw_root, job="streaming"))

    def error_path(self, *parts: str) -> str:
        return "/".join([self.error_root.rstrip("/"), self.stream, *parts])


@dataclass(frozen=True)
class BatchOutcome:
    """One micro-batch: its tag, the records seen, the bad ones set aside, each table's result."""

    batch_tag: str
    records: int
    bad_records: int
    duplicates: int
    seconds: float
    tables: list[TableRun] = field(default_factory=list)  # each table's commit of the batch, as its run

    @property
    def failed(self) -> list[TableRun]:
        return [t for t in self.tables if t.status.failed]

    @property
    def ignored_values(self) -> int:
        """Values of attributes outside their table's columns dropped (``new_columns: ignore``), every table."""
        return sum(t.ignored_values for t in self.tables)


def batch_tag(stream: str, checkpoint_id: str, batch_id: int) -> str:
    """The micro-batch's identity in commit metadata: stream, checkpoint (query) id and Spark batch id.

    The checkpoint id keeps a new checkpoint's batch 0 from being mistaken for an old checkpoint's.
    """
    return f"stream:{stream}:{checkpoint_id}:{batch_id}"


def batch_folder(tag: str) -> str:
    """Where a batch's set-aside records go below the stream's error folder: one folder per checkpoint and batch."""
    _, _, checkpoint, batch = tag.rsplit(":", 3)
    return f"checkpoint={checkpoint}/batch={batch}"


def _route(routes: dict[str, Route]) -> Callable[[Iterable[Any]], Iterator[tuple]]:
    def parse(rows: Iterable[Any]) -> Iterator[tuple]:
        for row in rows:
            record = StreamRecord(row[DATA], row[SEQUENCE_NUMBER] or "", row[SHARD] or "")
            for change in route_records([record], routes):
                yield (
                    change.table_id,
                    change.sequence_number,
                    change.shard,
                    change.event_id,
                    change.op,
                    change.ordering,
                    change.error,
                    change.values,
                    change.types,
                    record.data,
                )

    return parse


def route_batch(spark: SparkSession, records: DataFrame, target: StreamTarget, processed_at: datetime) -> DataFrame:
    """Every record routed and parsed (one row each, ``_odp_error`` set on bad ones), duplicates removed.
    ``processed_at``: the batch's processing time, where the event-time horizon starts.

    A duplicate is a second record of the same table with the same DynamoDB ``eventID`` in this batch
    (Kinesis delivers at least once); the one with the lowest sequence number stays.
    """
    routed = spark.createDataFrame(
        records.select(DATA, SEQUENCE_NUMBER, SHARD).rdd.mapPartitions(_route(target.routes(processed_at))),
        ROUTED_SCHEMA,
    )
    first = Window.partitionBy(TABLE_ID, EVENT_ID).orderBy(
        F.lpad(F.col(SEQUENCE_NUMBER), 128, "0"), F.col(SHARD), F.col(DATA)
    )
    rank = F.when(F.col(EVENT_ID).isNull() | F.col(ERROR).isNotNull(), F.lit(1)).otherwise(F.row_number().over(first))
    return routed.withColumn("_odp_rank", rank).where("_odp_rank = 1").drop("_odp_rank")


def shard_positions(rows: DataFrame) -> list[str]:
    """``<shard>:<first sequence number>-<last sequence number>`` for each shard a table's rows cover."""
    padded = F.lpad(F.col(SEQUENCE_NUMBER), 128, "0")
    found = rows.groupBy(SHARD).agg(F.min(padded).alias("first"), F.max(padded).alias("last")).collect()
    return sorted(f"{row[SHARD]}:{row['first'].lstrip('0') or '0'}-{row['last'].lstrip('0') or '0'}" for row in found)


def _error_rows(frame: DataFrame, tag: str, reason: Column) -> DataFrame:
    return frame.select(F.lit(tag).alias("batch"), TABLE_ID, reason.alias(REASON), SHARD, SEQUENCE_NUMBER, DATA)


def write_errors(frame: DataFrame, path: str) -> None:
    """Bad records as JSON lines; overwrite, so a replayed batch writes the same files again."""
    frame.coalesce(1).write.mode("overwrite").json(path)


@dataclass(frozen=True)
class TableChanges:
    """One table's valid records in a batch, the column types they are cast to, and what ``new_columns: ignore``
    dropped of them (the attribute names, the values)."""

    config: TableConfig
    rows: DataFrame
    columns: dict[str, str]
    ignored: tuple[tuple[str, ...], int] = ((), 0)


def _ignored(rows: DataFrame, dropped: Column) -> tuple[tuple[str, ...], int]:
    """(names, values) the valid ``rows`` drop (``dropped``: :attr:`RecordColumns.dropped`), in one Spark job."""
    found = rows.select(
        F.array_distinct(F.flatten(F.collect_set(dropped))).alias("names"),
        F.sum(F.coalesce(F.size(dropped), F.lit(0))).alias("values"),
    ).first()
    return tuple(sorted(found["names"] or [])), int(found["values"] or 0)


def stream_run(table_id: str, tag: str, started_at: str, status: RunStatus, **outcome: Any) -> TableRun:
    """Pure: a table's commit of a micro-batch as its run in the ledger (the batch's tag is its run and batch id)."""
    return TableRun(table_id=table_id, run_id=tag, batch_id=tag, started_at=started_at, status=status, **outcome)


def _write_table(spark: SparkSession, changes: TableChanges, target: StreamTarget, *, tag: str) -> TableRun:
    """Commit one table's changes of the batch once (etl.hudi.commit): a batch its timeline holds is skipped."""
    config, rows = changes.config, changes.rows
    started, started_at = time.monotonic(), iso(utc_now())
    base_path = target.base_path(config)
    count = rows.count()  # with the shard positions: one pass each, also when the batch turns out replayed

    def write(commit_tag: CommitTag) -> WriteResult:
        batch = ChangeBatch(change_frame(rows, changes.columns), rows=count)
        return target.writer().write(spark, batch, config, base_path, commit_tag)

    commit = commit_once(
        spark, base_path, CommitTag(tag, tuple(shard_positions(rows))), write, job="streaming", label=config.table_id
    )
    if commit.replayed:
        logger.warning("%s: batch %s is already committed (replayed after a restart): skipped", config.table_id, tag)
        return stream_run(config.table_id, tag, started_at, RunStatus.REPLAYED, finished_at=iso(utc_now()))
    names, values = changes.ignored
    return stream_run(
        config.table_id,
        tag,
        started_at,
        RunStatus.COMPLETED,
        finished_at=iso(utc_now()),
        seconds=round(time.monotonic() - started, 3),
        rows=count,
        inserts=commit.inserts,
        updates=commit.updates,
        deletes=commit.deletes,
        commit_instant=commit.instant,
        stale_dropped=commit.written.stale_dropped if commit.written is not None else 0,
        ignored_columns=names,
        ignored_values=values,
    )


def process_micro_batch(
    spark: SparkSession,
    records: DataFrame,
    tag: str,
    target: StreamTarget,
    processed_at: datetime | None = None,
) -> BatchOutcome:
    """Apply one micro-batch (columns ``data``, ``sequence_number``, ``shard``) to every table it touches.

    Never raises for a record or a table: bad records go to the error location, a failed table's
    records too (with the error), and the outcome lists both. Raises only when the error location
    itself cannot be written (then nothing is safe to checkpoint and the stream must stop).
    ``processed_at``: the batch's processing time (None: now); an event time past it plus a table's
    ``event_time_tolerance`` (or before its ``event_time_floor``) makes its record a bad record.
    """
    started = time.monotonic()
    gateway_without_delay(spark)  # the callback's own gateway connection (etl.jvm), once per thread
    if records.isEmpty():  # a window without records (Glue calls the batch function anyway)
        return BatchOutcome(tag, 0, 0, 0, time.monotonic() - started)
    routed = route_batch(spark, records, target, processed_at or datetime.now(UTC)).persist()
    try:
        total = records.count()
        kept = routed.count()
        bad = _error_rows(routed.where(F.col(ERROR).isNotNull()), tag, F.col(ERROR))
        plans: list[TableChanges] = []
        present = {row[TABLE_ID] for row in routed.where(F.col(ERROR).isNull()).select(TABLE_ID).distinct().collect()}
        for config in target.tables:
            if config.table_id not in present:
                continue
            mine = routed.where((F.col(TABLE_ID) == config.table_id) & F.col(ERROR).isNull())
            rule = record_columns(mine, config)  # new_columns: the same rule as the files'
            checked = mine.withColumn(REASON, cast_error(rule.columns, rule.error))
            bad = bad.unionByName(_error_rows(checked.where(F.col(REASON).isNotNull()), tag, F.col(REASON)))
            valid = checked.where(F.col(REASON).isNull()).drop(REASON)
            ignored = _ignored(valid, rule.dropped) if config.new_columns is NewColumns.IGNORE else ((), 0)
            if ignored[1]:
                logger.warning(
                    "%s: batch %s: dropped %d value(s) of attribute(s) outside the table's columns "
                    "(new_columns: ignore): %s",
                    config.table_id,
                    tag,
                    ignored[1],
                    ", ".join(ignored[0]),
                )
            plans.append(TableChanges(config, valid, rule.columns, ignored))
        bad = bad.persist()
        bad_count = bad.count()
        if bad_count:
            # Before any table commit: a replay after a crash rewrites the same files, and nothing is lost.
            write_errors(bad, target.error_path("bad_records", batch_folder(tag)))
            logger.warning("%s: %d bad record(s) set aside in %s", tag, bad_count, target.error_path("bad_records"))
        bad.unpersist()
        results = [_table_boundary(spark, changes, target, tag=tag) for changes in plans]
        if target.ledger is not None:
            for run in results:  # after the commits and the error files: a crash before this replays the batch
                target.ledger.record(run)
    finally:
        routed.unpersist()
    return BatchOutcome(tag, total, bad_count, total - kept, time.monotonic() - started, results)


def _table_boundary(spark: SparkSession, changes: TableChanges, target: StreamTarget, *, tag: str) -> TableRun:
    """One table's write in its own error boundary: a failure sets the table's records aside with the error."""
    config, rows = changes.config, changes.rows
    try:
        return _write_table(spark, changes, target, tag=tag)
    except Exception as error:  # noqa: BLE001 - the per-table error boundary: set aside, report, move on
        message = f"{type(error).__name__}: {error}"
        logger.error("%s: batch %s failed, its records are set aside: %s", config.table_id, tag, message)
        path = target.error_path("failed_tables", batch_folder(tag), f"table={config.table_id}")
        write_errors(_error_rows(rows, tag, F.lit(message[:2000])), path)
        now = iso(utc_now())
        return stream_run(config.table_id, tag, now, RunStatus.FAILED, finished_at=now, error=message)

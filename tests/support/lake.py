"""A small lake for the File Processor tests: staging folders, moto trackers, table config, runs, readers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import etl.file_processor.run_context
from etl.file_processor.processor import JobOutcome, run_file_processor
from etl.file_processor.write_budget import RowBudget
from odp.config.items import table_config_item
from odp.config.models import IndexKind, SourceFormat, TableConfig, TableMode, TableType
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames
from odp.table_reader import read_hudi_snapshot
from odp.tracker import FileStatus, FileTracker, TrackedFile, file_kind, make_file_id

STAGING = "staging"


def table_config(
    table: str,
    *,
    source_format: SourceFormat = SourceFormat.DMS,
    primary_key: tuple[str, ...] = ("id",),
    ordering_column: str | None = "seq",
    partition_by: tuple[str, ...] = (),
    table_type: TableType = TableType.COPY_ON_WRITE,
    mode: TableMode = TableMode.CURRENT,
    columns: dict[str, str] | None = None,
    source: str = "src",
    **settings: Any,
) -> TableConfig:
    return TableConfig(
        source=source,
        schema_name="app",
        table=table,
        format=source_format,
        primary_key=primary_key,
        ordering_column=ordering_column,
        partition_by=partition_by,
        table_type=table_type,
        mode=mode,
        cadence="hourly",
        database="lake_db",
        columns=columns,
        **settings,
    )


def small_table_config(table: str, *, mode: TableMode = TableMode.CURRENT, **settings: Any) -> TableConfig:
    """:func:`table_config` as production creates a small configured table: a current table without an index setting
    whose first write brings fewer than ``small_table_rows`` rows takes the simple index and no metadata table
    (odp.config.models.DEFAULT_SMALL_TABLE_ROWS). For the tests whose guarantee does not depend on the index (reading,
    validation, quarantine, kept values): a commit without the metadata table is about a third cheaper
    (docs/decisions/004). ``table_config``'s default, the record level index, is what every other test writes with:
    the index of a large table, the tombstones, recovery and crash tests."""
    if mode is TableMode.CURRENT and not {"index", "index_buckets"} & settings.keys():
        settings["index"] = IndexKind.SIMPLE
    return table_config(table, mode=mode, **settings)


@dataclass
class Lake:
    """Staging folder + raw folder on disk, trackers in moto, and the job's arguments."""

    root: Path
    tables: dict[str, Any]
    names: TrackerTableNames
    dynamodb: Any
    etags: dict[str, int] = field(default_factory=dict)

    @property
    def raw_root(self) -> str:
        return (self.root / "raw").as_uri()

    def resolve(self, uri: str) -> str:
        bucket, key = uri.removeprefix("s3://").split("/", 1)
        # Not Path.as_uri(): Hadoop does not decode percent escapes, and Kafka Connect names hold '+'.
        return f"file://{self.root / bucket / key}"

    def configure(self, config: TableConfig) -> TableConfig:
        self.tables["table_config"].put_item(Item=table_config_item(config))
        return config

    def _land(
        self, config: TableConfig, name: str, body: bytes, *, replay: bool | None = None, prefix: str | None = None
    ) -> TrackedFile:
        """``prefix``: the staging folder when it is not the table's own (a merged table's shard)."""
        key = f"{prefix or config.staging_prefix}{name}"
        path = self.root / STAGING / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        # The ETag is the MD5 of the content, as S3 reports it for a single-part upload; a file landed
        # twice (same key, new upload) gets a new one, so a new file id.
        count = self.etags.get(key, 0) + 1
        self.etags[key] = count
        etag = hashlib.md5(body, usedforsecurity=False).hexdigest() + (f"-{count}" if count > 1 else "")
        tracked = TrackedFile(
            table_id=config.table_id,
            file_id=make_file_id(STAGING, key, etag),
            bucket=STAGING,
            key=key,
            size=len(body),
            etag=etag,
            landed_at=f"2026-01-01T00:00:{len(self.etags):02d}.000Z",
            file_kind=file_kind(name, config.format),
            replay=replay,
        )
        # Put directly: the File Manager's registration is tested with the Lambdas.
        self.tables["file_tracker"].put_item(Item=tracked.to_item())
        return tracked

    def land_parquet(
        self, config: TableConfig, name: str, rows: list[dict[str, Any]], schema: pa.Schema
    ) -> TrackedFile:
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
        return self._land(config, name, sink.getvalue().to_pybytes())

    def land_bytes(self, config: TableConfig, name: str, body: bytes, *, replay: bool | None = None) -> TrackedFile:
        return self._land(config, name, body, replay=replay)

    def land_text(self, config: TableConfig, name: str, text: str) -> TrackedFile:
        return self._land(config, name, text.encode("utf-8"))

    def land_json_lines(
        self, config: TableConfig, name: str, records: list[Any], *, prefix: str | None = None
    ) -> TrackedFile:
        body = ("\n".join(json.dumps(r) for r in records) + "\n").encode("utf-8")
        return self._land(config, name, body, prefix=prefix)

    def args(self, *table_ids: str, table_concurrency: int = 4, job_dpus: float = 0.0) -> FileProcessorJobArgs:
        return FileProcessorJobArgs(
            environment="test",
            cadence="hourly",
            table_ids=tuple(table_ids),
            raw_root=self.raw_root,
            tracker_tables=self.names,
            batch_id="test",
            catalog_sync=False,
            lease_seconds=60,
            table_concurrency=table_concurrency,
            hudi_profile="local",
            job_dpus=job_dpus,
        )

    def run(
        self,
        spark: Any,
        *table_ids: str,
        table_concurrency: int = 4,
        job_dpus: float = 0.0,
        row_budget: RowBudget | None = None,
    ) -> JobOutcome:
        return run_file_processor(
            spark,
            self.args(*table_ids, table_concurrency=table_concurrency, job_dpus=job_dpus),
            dynamodb=self.dynamodb,
            resolve_uri=self.resolve,
            row_budget=row_budget,
        )

    def landed(self, table_id: str) -> list[TrackedFile]:
        return FileTracker(self.tables["file_tracker"], self.tables["file_tracker_history"]).landed_files(table_id)

    def quarantined(self, table_id: str) -> list[TrackedFile]:
        """The table's quarantined files (file_tracker), in key order: each with its reason in ``last_error``."""
        tracker = FileTracker(self.tables["file_tracker"], self.tables["file_tracker_history"])
        return tracker.files(table_id, FileStatus.QUARANTINED)

    def processed(self, table_id: str) -> list[dict[str, Any]]:
        items = self.tables["file_tracker_history"].scan()["Items"]
        return [item for item in items if item["table_id"] == table_id]


def patch_write_profile(monkeypatch: pytest.MonkeyPatch, **settings: Any) -> None:
    """The File Processor's runs write with the job's profile changed by ``settings`` (``WriteProfile`` fields), e.g.
    ``merge_on_read_small_file_bytes=1``: every MERGE_ON_READ base file then logs its updates and deletes, as a real
    table's file groups above 4 MiB do."""
    job_profile = etl.file_processor.run_context.job_write_profile
    monkeypatch.setattr(
        etl.file_processor.run_context,
        "job_write_profile",
        lambda spark, args: replace(job_profile(spark, args), **settings),
    )


def rows_of(spark: Any, base_path: str, columns: list[str], order_by: list[str] | None = None) -> list[tuple]:
    """The table as Spark reads it (snapshot), as sorted tuples of the given columns."""
    frame = spark.read.format("hudi").load(base_path).select(*columns)
    return (
        sorted(tuple(row) for row in frame.collect())
        if order_by is None
        else [tuple(r) for r in frame.orderBy(*order_by).collect()]
    )


def hudi_rs_rows(base_path: str, columns: list[str]) -> list[tuple]:
    """The table as the independent hudi-rs reader sees it (snapshot of the latest commit)."""
    frame = read_hudi_snapshot(base_path)
    if frame is None:
        return []
    return sorted(zip(*(frame.column(name).to_pylist() for name in columns), strict=True))


class CrashAfterCommit:
    """The action at the fault point ``etl.after_commit`` (odp.faults.on_fault): fails the run between the Hudi
    commit and the tracker update, once."""

    POINT = "etl.after_commit"

    def __init__(self) -> None:
        self.fired = 0

    def __call__(self, *, table_id: str, instant: str) -> None:
        if self.fired == 0:
            self.fired += 1
            raise RuntimeError(f"simulated crash after commit {instant} of {table_id}")


class CrashBeforeCommit:
    """The action at the fault point ``etl.before_commit``: fails the run between the tombstone write and the
    table's Hudi commit, once."""

    POINT = "etl.before_commit"

    def __init__(self) -> None:
        self.fired = 0

    def __call__(self, *, table_id: str) -> None:
        if self.fired == 0:
            self.fired += 1
            raise RuntimeError(f"simulated crash before the commit of {table_id}")

"""ODP's File Processor over one wave of every table: one Spark application, as one Glue job run.

The trackers live in moto (``mock_aws``), fresh for each run, with transactions whose rollback copies the items
they name, not whole tables (``bench.dynamodb_emulator``: moto's copy grew with the table, DynamoDB's cost does
not): the table configs are loaded, the wave's files are registered as the File Manager would register them, then
``etl.file_processor.processor.run_file_processor`` processes every table in one call. Run as
``python -m bench.contenders.odp_job SPEC.json``; it writes the job outcome to ``SPEC.outcome.json``
and exits non-zero if any table failed. ``--serve`` (``python -m bench fleet --warm-jvm``): every wave in one process,
one spec path a line on stdin (bench.warm_jvm).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from bench import fs_stats
from bench.contenders.common import driver_memory
from bench.dynamodb_emulator import install_item_level_rollback
from bench.fs_stats import hadoop_statistics
from bench.warm_jvm import job_arguments, serve
from odp.config.items import table_config_item
from odp.config.models import IndexKind, SourceFormat, TableConfig, TableType
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY, FileProcessorJobArgs
from odp.naming import TrackerTableNames
from odp.tracker import FileKind, TrackedFile, Trackers, file_kind, make_file_id
from odp.tracker.schema import create_tables

ENVIRONMENT = "bench"
BUCKET = "bench-staging"
REGION = "us-east-1"
DATABASE = "taxi_trips_raw"


def table_config(
    source: str,
    schema_name: str,
    table: str,
    table_type: TableType = TableType.COPY_ON_WRITE,
    *,
    index_buckets: int | None = None,
    index: IndexKind = IndexKind.RECORD,
    partition_by: tuple[str, ...] = ("vendorid",),
) -> TableConfig:
    """The benchmark's table settings: the same key, ordering and partitioning as the other contenders."""
    return TableConfig(
        source=source,
        schema_name=schema_name,
        table=table,
        format=SourceFormat.DMS,
        primary_key=("pk_id",),
        ordering_column="cdc_timestamp_seq",
        partition_by=partition_by,
        table_type=table_type,
        cadence="every_10_minutes",
        database=DATABASE,
        target_table=table,
        index_buckets=index_buckets,
        index=index,
    )


def tracked_file(table_id: str, key: str, size: int, landed_at: datetime) -> TrackedFile:
    etag = f"{size:x}-{abs(hash(key)) % 10**8:08d}"
    kind: FileKind = file_kind(key.rsplit("/", 1)[-1], SourceFormat.DMS)
    stamp = landed_at.isoformat()
    return TrackedFile(
        table_id=table_id,
        file_id=make_file_id(BUCKET, key, etag),
        bucket=BUCKET,
        key=key,
        size=size,
        etag=etag,
        landed_at=stamp,
        file_kind=kind,
        registered_at=stamp,
    )


def resolver(staging_root: Path):
    """``s3://bench-staging/<key>`` -> ``file://<staging_root>/<key>``."""
    prefix = f"s3://{BUCKET}/"

    def resolve(uri: str) -> str:
        if not uri.startswith(prefix):
            raise ValueError(f"{uri} is not in the benchmark's staging bucket")
        return (staging_root / uri.removeprefix(prefix)).as_uri()

    return resolve


def table_configs(spec: dict) -> list[TableConfig]:
    """The table settings of a wave's spec (OdpFileProcessor.wave_spec), one per table, in its order."""
    configs = []
    for table in spec["tables"]:
        source, schema_name, name = table["table_id"].split(".")
        table_type = TableType(table.get("table_type") or spec.get("table_type", TableType.COPY_ON_WRITE.value))
        partition = table.get("partition", "vendorid")
        configs.append(
            table_config(
                source,
                schema_name,
                name,
                table_type,
                index_buckets=spec.get("index_buckets"),
                index=IndexKind(table.get("index") or IndexKind.RECORD.value),
                partition_by=(partition,) if partition else (),
            )
        )
    return configs


def run(spec: dict, spark: Any = None) -> dict:
    """Register the wave's files and run the File Processor once over every table; ``spark``: the warm session of
    ``--serve`` (kept, its trackers kept), else a session of this wave (stopped) over fresh trackers."""
    from etl.file_processor.processor import run_file_processor

    staging_root = Path(spec["staging_root"])
    names = TrackerTableNames.for_environment(ENVIRONMENT)
    dynamodb = boto3.resource("dynamodb", region_name=REGION)
    if names.file_tracker not in dynamodb.meta.client.list_tables()["TableNames"]:
        create_tables(dynamodb.meta.client, names)
    configs = dynamodb.Table(names.table_config)
    files = Trackers.build(dynamodb, names).files
    landed = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=spec["wave"])
    table_ids = []
    for table, config in zip(spec["tables"], table_configs(spec), strict=True):
        configs.put_item(Item=table_config_item(config))
        for order, key in enumerate(table["keys"]):
            size = (staging_root / key).stat().st_size
            files.register(tracked_file(table["table_id"], key, size, landed + timedelta(seconds=order)))
        table_ids.append(table["table_id"])
    args = FileProcessorJobArgs(
        environment=ENVIRONMENT,
        cadence="every_10_minutes",
        table_ids=tuple(table_ids),
        raw_root=Path(spec["raw_root"]).as_uri(),
        tracker_tables=names,
        batch_id=f"wave-{spec['wave']}",
        catalog_sync=False,
        hudi_profile="local",
        table_concurrency=int(spec.get("table_concurrency", DEFAULT_TABLE_CONCURRENCY)),
    )
    session = spark or wave_session(spec)
    before = hadoop_statistics(session) if spark is not None else {}
    try:
        outcome = run_file_processor(session, args, dynamodb=dynamodb, resolve_uri=resolver(staging_root))
        hadoop = fs_stats.since(hadoop_statistics(session), before)
    finally:
        if spark is None:
            session.stop()
    return {
        "run_id": outcome.run_id,
        "hadoop": hadoop,
        "tables": [
            {
                "table_id": result.table_id,
                "status": str(getattr(result.status, "value", result.status)),
                "files": result.files,
                "rows": result.rows,
                "seconds": result.seconds,
                "error": result.error,
                # upsert or rewrite and why, the MERGE_ON_READ advice included (the run history's line)
                "write_reason": result.write_reason,
                "step_seconds": result.step_seconds,  # where the run's time went (TableRun.step_seconds)
            }
            for result in outcome.tables
        ],
        "failed": [result.table_id for result in outcome.failed],
    }


def wave_session(spec: dict) -> Any:
    from etl.spark_session import local_spark_session

    return local_spark_session("bench-odp", spec["warehouse"], driver_memory=driver_memory())


def run_spec(spec_path: Path, spark: Any = None) -> int:
    """One wave from its spec file; the outcome beside it; 1 if any table failed."""
    outcome = run(json.loads(spec_path.read_text()), spark)
    spec_path.with_suffix(".outcome.json").write_text(json.dumps(outcome, indent=1))
    return 1 if outcome["failed"] else 0


def serve_waves() -> int:
    """``--serve``: every wave in this one JVM (bench.warm_jvm), the trackers kept across waves as a warm writer's."""
    spark: Any = None

    def run_wave(spec_path: Path) -> int:
        nonlocal spark
        spark = spark or wave_session(json.loads(spec_path.read_text()))
        return run_spec(spec_path, spark)

    try:
        return serve(run_wave)
    finally:
        if spark is not None:
            spark.stop()


def main(argv: list[str] | None = None) -> int:
    options = job_arguments(__doc__.splitlines()[0], argv)
    for name, value in {
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        os.environ.setdefault(name, value)
    install_item_level_rollback()  # the emulator's transactions cost what DynamoDB's do: not the table's size
    with mock_aws():
        return serve_waves() if options.serve else run_spec(options.spec)


if __name__ == "__main__":
    raise SystemExit(main())

"""The naive rewrite, one Spark application per wave: read the whole table, merge the changes, overwrite.

What a team without a table format writes first (the "old way"): for every table, union the current
Parquet table with the wave's DMS files, keep the last change per key by ``cdc_timestamp_seq`` (then
file order, then row), drop deletes, and write the whole table again, partitioned by ``vendorid``.

Run as ``python -m bench.contenders.naive_job SPEC.json``; the spec lists, per table, the wave's
files (in landing order) and the table folder. ``--serve``: every wave in one process (bench.warm_jvm).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from bench import fs_stats
from bench.contenders.common import PARQUET_CODEC, contender_spark_conf, driver_memory
from bench.fs_stats import hadoop_statistics
from bench.warm_jvm import job_arguments, serve
from bench.workload import KEY, OP, ORDERING, PARTITION, SCHEMA_ARROW

FILE_ORDER, ROW = "_file_order", "_row"


def session() -> SparkSession:
    """local[2] with the same sizing as the other contenders (no Hudi: plain Parquet)."""
    builder = SparkSession.builder.appName("bench-naive").master("local[2]")
    for key, value in {**naive_spark_conf(), "spark.driver.memory": driver_memory()}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def naive_spark_conf() -> dict[str, str]:
    """The contenders' settings (``contender_spark_conf``) without Hudi's, and the shared Parquet codec."""
    hudi = ("spark.serializer", "spark.kryo.registrator", "spark.sql.extensions", "spark.sql.catalog.spark_catalog")
    settings = {key: value for key, value in contender_spark_conf().items() if key not in hudi}
    return {**settings, "spark.sql.parquet.compression.codec": PARQUET_CODEC}


def changes(spark: SparkSession, files: list[str]) -> DataFrame:
    """The wave's files as one frame with ``Op`` (full-load rows have none: inserts) and file order."""
    frames = []
    for order, path in enumerate(files):
        frame = spark.read.parquet(path)
        if OP not in frame.columns:
            frame = frame.withColumn(OP, F.lit("I"))
        frames.append(frame.withColumn(FILE_ORDER, F.lit(order)).withColumn(ROW, F.monotonically_increasing_id()))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def merged(
    current: DataFrame | None,
    incoming: DataFrame,
    partition: str | None = PARTITION,
    columns: tuple[str, ...] = tuple(SCHEMA_ARROW.names),
) -> DataFrame:
    """Last change per key wins; a delete removes the key."""
    if current is not None:
        if partition is not None:  # read back from the folder names: as the column's type again
            current = current.withColumn(partition, F.col(partition).cast("bigint"))
        current = current.withColumn(OP, F.lit("I")).withColumn(FILE_ORDER, F.lit(-1)).withColumn(ROW, F.lit(0))
        incoming = current.unionByName(incoming)
    window = Window.partitionBy(KEY).orderBy(F.col(ORDERING).desc(), F.col(FILE_ORDER).desc(), F.col(ROW).desc())
    latest = incoming.withColumn("_rank", F.row_number().over(window)).where("_rank = 1")
    return latest.where(F.col(OP) != "D").select(*columns)


def rewrite(
    spark: SparkSession,
    files: list[str],
    target: Path,
    partition: str | None = PARTITION,
    columns: tuple[str, ...] = tuple(SCHEMA_ARROW.names),
) -> None:
    """Write the merged table next to the old one, then swap them (Spark cannot overwrite what it reads)."""
    current = spark.read.parquet(str(target)) if target.is_dir() else None
    staging = target.with_name(target.name + ".next")
    shutil.rmtree(staging, ignore_errors=True)
    writer = merged(current, changes(spark, files), partition, columns).write
    if partition is not None:
        writer = writer.partitionBy(partition)
    writer.mode("overwrite").parquet(str(staging))
    if target.is_dir():
        shutil.rmtree(target)
    staging.rename(target)


def run_spec(spec_path: Path, spark: SparkSession) -> int:
    """Every table of one wave's spec; the outcome (seconds per table, the wave's Hadoop statistics) beside it."""
    spec = json.loads(spec_path.read_text())
    before = hadoop_statistics(spark)
    seconds: dict[str, float] = {}
    for table in spec["tables"]:
        started = time.perf_counter()
        partition = table.get("partition", PARTITION)
        rewrite(
            spark, table["files"], Path(table["target"]), partition, tuple(table.get("columns", SCHEMA_ARROW.names))
        )
        seconds[table.get("table", Path(table["target"]).name)] = round(time.perf_counter() - started, 3)
    outcome = {"table_seconds": seconds, "hadoop": fs_stats.since(hadoop_statistics(spark), before)}
    spec_path.with_suffix(".outcome.json").write_text(json.dumps(outcome, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    options = job_arguments(__doc__.splitlines()[0], argv)
    spark = session()
    try:
        return serve(lambda path: run_spec(path, spark)) if options.serve else run_spec(options.spec, spark)
    finally:
        spark.stop()


if __name__ == "__main__":
    raise SystemExit(main())

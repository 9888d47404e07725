"""Read ODP's tables as the consumers' engines do: Hudi 0.15.0's Spark reader, in a JVM of its own.

Athena documents Hudi 0.14.0 and 0.15.0 readers (table version 6), so ODP's tables must read there exactly as they
read with the writer's Hudi 1.0.2. :func:`consumer_mismatches` reads every given table twice, snapshot (and
read-optimized for MERGE_ON_READ) each time: once in this process's session (Hudi 1.0.2) and once in a child
process (``python -m sandbox.consumer_reader``) whose session has only the 0.15.0 bundle on its class path, then
compares the two row for row, every column (Hudi's meta columns included) and the schema. Rows are compared in one
text form, made by the same function in both JVMs (:func:`table_rows`): Spark's JSON of the row, timestamps in UTC.

The bundle is ``org.apache.hudi:hudi-spark3.5-bundle_2.12:0.15.0`` from Maven Central (``make setup`` fetches and
checks it); ``ODP_HUDI_CONSUMER_BUNDLE_JAR`` points at it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from etl.hudi.table_version import TABLE_VERSION
from etl.jvm import java_class
from etl.spark_session import local_jvm_options_without_odp_classes, required_jar
from odp.contracts.spark import HUDI_SESSION_CONF

REPO_ROOT = Path(__file__).resolve().parents[1]
CONSUMER_BUNDLE_ENV = "ODP_HUDI_CONSUMER_BUNDLE_JAR"
CONSUMER_HUDI_VERSION = "0.15.0"
DEFAULT_CONSUMER_BUNDLE = REPO_ROOT / ".cache" / "jars" / f"hudi-spark3.5-bundle_2.12-{CONSUMER_HUDI_VERSION}.jar"
CHILD_TIMEOUT_SECONDS = 900
SHOWN_ROWS = 3  # rows of a difference quoted in its message


class QueryType(StrEnum):
    """Hudi's query types that Athena offers: a snapshot (MERGE_ON_READ logs merged: the ``_rt`` table, or the
    table itself for COPY_ON_WRITE) and read-optimized (base files only: the ``_ro`` table)."""

    SNAPSHOT = "snapshot"
    READ_OPTIMIZED = "read_optimized"


@dataclass(frozen=True)
class ConsumerRead:
    """One read to compare: a table (``label`` names it in messages) at ``base_path`` with a query type."""

    label: str
    base_path: str
    query: QueryType = QueryType.SNAPSHOT


@dataclass(frozen=True)
class TableRows:
    """What one reader returned: the schema as ``name type`` lines and the rows in one text form."""

    schema: tuple[str, ...]
    rows: tuple[str, ...]


@dataclass(frozen=True)
class ConsumerMismatch:
    """A read whose rows or schema differ between Hudi 1.0.2 and the consumer's reader (or which failed there)."""

    read: ConsumerRead
    reason: str

    def __str__(self) -> str:
        return f"{self.read.label} ({self.read.query.value}): {self.reason}"


def consumer_bundle_jar() -> Path:
    """The Hudi 0.15.0 bundle: env ``ODP_HUDI_CONSUMER_BUNDLE_JAR``, else the one ``make setup`` fetches.

    Raises:
        HudiBundleMissingError: the jar does not exist.
    """
    return required_jar(CONSUMER_BUNDLE_ENV, DEFAULT_CONSUMER_BUNDLE, f"Hudi {CONSUMER_HUDI_VERSION} bundle")


def table_rows(spark: Any, read: ConsumerRead) -> TableRows:
    """Every row and column of one read as text, sorted: the same function in both JVMs.

    Spark's ``to_json`` of the whole row (nulls kept), with the session in UTC, so decimals keep their scale,
    timestamps and dates have one form and nested values are written out whole. Columns by name: Hudi 0.15.0's
    reader puts a partitioned table's partition columns last, 1.0.2's keeps the table's order (a catalog reader
    takes the order from the catalog)."""
    from pyspark.sql import functions as F

    frame = spark.read.format("hudi").option("hoodie.datasource.query.type", read.query.value).load(read.base_path)
    fields = sorted(frame.schema.fields, key=lambda field: field.name)  # by name: readers order partition columns
    schema = tuple(f"{field.name} {field.dataType.simpleString()}" for field in fields)
    as_text = F.to_json(F.struct(*[F.col(f"`{field.name}`") for field in fields]), {"ignoreNullFields": "false"})
    return TableRows(schema, tuple(sorted(row[0] for row in frame.select(as_text).collect())))


def differences(writer: TableRows, consumer: TableRows) -> str | None:
    """Pure: how the consumer's read differs from the writer's (None: the same schema and the same rows, as many
    times each)."""
    if writer.schema != consumer.schema:
        return f"schema {list(consumer.schema)}, the writer reads {list(writer.schema)}"
    written, read = Counter(writer.rows), Counter(consumer.rows)
    if written == read:
        return None
    missing, extra = list((written - read).elements()), list((read - written).elements())
    return (
        f"{len(consumer.rows)} rows, the writer reads {len(writer.rows)}: {len(missing)} missing "
        f"(e.g. {missing[:SHOWN_ROWS]}), {len(extra)} not in the writer's read (e.g. {extra[:SHOWN_ROWS]})"
    )


@dataclass(frozen=True)
class ReadBack:
    """One read of a table by both: this session's rows (Hudi 1.0.2; None when the consumer could not read it) and the
    consumer's rows or the error its read raised."""

    read: ConsumerRead
    writer: TableRows | None
    consumer: TableRows | str


def read_back(spark: Any, reads: Sequence[ConsumerRead]) -> list[ReadBack]:
    """Each read by Hudi 0.15.0's reader in a child JVM, and by this session where the consumer read it.

    Raises:
        HudiBundleMissingError: the 0.15.0 bundle is missing.
        ConsumerReaderError: the child process failed as a whole (its output in the message).
    """
    consumer = read_as_consumer(reads)
    return [
        ReadBack(read, None if isinstance(result, str) else table_rows(spark, read), result)
        for read, result in zip(reads, consumer, strict=True)
    ]


def mismatches_of(read_backs: Sequence[ReadBack]) -> list[ConsumerMismatch]:
    """Pure: each read whose two readers differ, or that the consumer could not read."""
    mismatches = []
    for back in read_backs:
        if isinstance(back.consumer, str):
            reason = f"Hudi {CONSUMER_HUDI_VERSION} could not read it: {back.consumer}"
        else:
            reason = differences(back.writer, back.consumer)
        if reason is not None:
            mismatches.append(ConsumerMismatch(back.read, reason))
    return mismatches


def consumer_mismatches(spark: Any, reads: Sequence[ConsumerRead]) -> list[ConsumerMismatch]:
    """Each read that differs between this session (Hudi 1.0.2) and Hudi 0.15.0's reader in a child JVM.

    Raises:
        HudiBundleMissingError: the 0.15.0 bundle is missing.
        ConsumerReaderError: the child process failed as a whole (its output in the message).
    """
    return mismatches_of(read_back(spark, reads))


class ConsumerReaderError(RuntimeError):
    """The consumer's reader process failed before it read anything."""


def read_as_consumer(reads: Sequence[ConsumerRead]) -> list[TableRows | str]:
    """Each read by Hudi 0.15.0 in one child JVM: its rows, or the error that read raised (one read's failure does
    not stop the others).

    Raises:
        HudiBundleMissingError: the 0.15.0 bundle is missing.
        ConsumerReaderError: the child process failed as a whole.
    """
    jar = consumer_bundle_jar()
    with tempfile.TemporaryDirectory(prefix="odp-consumer-read-") as folder:
        request, answer = Path(folder) / "reads.json", Path(folder) / "rows.json"
        request.write_text(json.dumps([asdict(read) for read in reads]))
        environment = {**os.environ, CONSUMER_BUNDLE_ENV: str(jar), "PYTHONPATH": str(REPO_ROOT)}
        environment.pop("PYSPARK_SUBMIT_ARGS", None)  # the child's session is its own
        child = subprocess.run(
            [sys.executable, "-m", "sandbox.consumer_reader", str(request), str(answer), folder],
            cwd=REPO_ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_SECONDS,
            check=False,
        )
        if child.returncode != 0 or not answer.exists():
            raise ConsumerReaderError(f"the Hudi {CONSUMER_HUDI_VERSION} reader failed: {child.stderr[-3000:]}")
        results = json.loads(answer.read_text())
    return [
        TableRows(tuple(result["schema"]), tuple(result["rows"])) if "rows" in result else result["error"]
        for result in results
    ]


def consumer_session(jar: Path, warehouse: str) -> Any:
    """A local[2] session with only the consumer's Hudi bundle (no ODP jar: a consumer has none), in UTC."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("odp-consumer-reader").master("local[2]")
    options = local_jvm_options_without_odp_classes()
    settings = {
        "spark.jars": str(jar),
        "spark.driver.extraClassPath": str(jar),
        **HUDI_SESSION_CONF,
        "spark.sql.warehouse.dir": warehouse,
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        # ODP_LOCAL_JVM_OPTIONS as well (the tests' C1-only for a short-lived JVM) but ODP's local file system, whose
        # class is in ODP's jar; the class data archive in them was made with ODP's class path, not this one, so the
        # JVM starts without it (docs/decisions/023).
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse} {options}".strip(),
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _child(request: Path, answer: Path, warehouse: str) -> int:
    spark = consumer_session(consumer_bundle_jar(), warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    version = java_class(spark, "org.apache.hudi.common.table.HoodieTableVersion").current().versionCode()
    if version != TABLE_VERSION:  # Hudi 0.15's own table version: another bundle would prove nothing
        print(f"the consumer's bundle is at table version {version}, not {TABLE_VERSION}", file=sys.stderr)
        return 2
    results: list[dict[str, Any]] = []
    for entry in json.loads(request.read_text()):
        read = ConsumerRead(entry["label"], entry["base_path"], QueryType(entry["query"]))
        try:
            rows = table_rows(spark, read)
            results.append({"schema": list(rows.schema), "rows": list(rows.rows)})
        except Exception as error:  # noqa: BLE001 - one read's failure is its result, the others are still read
            results.append({"error": " ".join(f"{type(error).__name__}: {error}".split())[:600]})
    answer.write_text(json.dumps(results))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(_child(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]))

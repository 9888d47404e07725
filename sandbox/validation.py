"""Validate Hudi tables against the independent model of the sources.

For each table: the row count and an order-independent checksum of its configured columns, read
back twice, with Spark (a snapshot query, so MERGE_ON_READ logs are merged) and with hudi-rs (a
second, independent Hudi reader), each compared with the rows the model expects. Current tables
compare one row per key; historical tables one row per change (count and checksum over every
change row). Values are put in one canonical text form on both sides
(numbers exact, timestamps as UTC text, JSON objects with sorted keys) before hashing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from odp.config.models import TableConfig, TableMode
from odp.table_reader import TableReadError, read_hudi_snapshot

NULL = "\\N"
TIMESTAMP_TEXT = "%Y-%m-%d %H:%M:%S.%f"
SPARK_TIMESTAMP_TEXT = "yyyy-MM-dd HH:mm:ss.SSSSSS"


@dataclass(frozen=True)
class TableCheck:
    """One table's validation."""

    table_id: str
    mode: str
    expected_rows: int
    actual_rows: int | None
    expected_checksum: str
    actual_checksum: str | None
    error: str | None = None
    hudi_rs_rows: int | None = None
    hudi_rs_checksum: str | None = None

    @property
    def spark_ok(self) -> bool:
        return self.expected_rows == self.actual_rows and self.expected_checksum == self.actual_checksum

    @property
    def hudi_rs_ok(self) -> bool:
        return self.expected_rows == self.hudi_rs_rows and self.expected_checksum == self.hudi_rs_checksum

    @property
    def ok(self) -> bool:
        return self.error is None and self.spark_ok and self.hudi_rs_ok


def _json_text(text: str) -> str:
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except json.JSONDecodeError:
        return text


_CANONICAL: tuple[tuple[type | tuple[type, ...], Any], ...] = (
    (bool, lambda v: "true" if v else "false"),  # before int: bool is an int
    (int, str),
    (float, repr),
    (Decimal, lambda v: format(v.normalize(), "f")),
    (datetime, lambda v: (v.astimezone(UTC) if v.tzinfo else v).strftime(TIMESTAMP_TEXT)),
)


def canonical(value: Any) -> str:
    """One text per value, the same whichever side (model or Spark) it comes from."""
    if value is None:
        return NULL
    for kind, render in _CANONICAL:
        if isinstance(value, kind):
            return render(value)
    text = str(value)
    return _json_text(text) if text[:1] in ("{", "[") else text


def row_digest(row: dict[str, Any], columns: list[str]) -> int:
    text = "\x1f".join(canonical(row.get(name)) for name in columns)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def checksum(rows: Iterable[dict[str, Any]], columns: list[str]) -> tuple[int, str]:
    """(row count, checksum): the sum of per-row digests modulo 2**64, so row order does not matter."""
    count = 0
    total = 0
    for row in rows:
        count += 1
        total = (total + row_digest(row, columns)) % (1 << 64)
    return count, f"{total:016x}"


def compared_columns(config: TableConfig) -> list[str]:
    """The configured columns (lower case, as the job writes them)."""
    return [name.lower() for name in (config.columns or {})] or [name.lower() for name in config.primary_key]


def read_table(spark: Any, base_path: str, config: TableConfig) -> list[dict[str, Any]]:
    """The table's rows (compared columns only) from a Hudi snapshot query.

    Raises:
        KeyError: a compared column is missing from the table (names it).
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    frame = spark.read.format("hudi").load(base_path)
    by_lower = {name.lower(): name for name in frame.columns}
    selected = []
    for name in compared_columns(config):
        if name not in by_lower:
            raise KeyError(f"column {name!r} is missing from {base_path} (columns: {', '.join(frame.columns)})")
        column = F.col(f"`{by_lower[name]}`")
        kind = frame.schema[by_lower[name]].dataType
        if isinstance(kind, T.TimestampType | T.TimestampNTZType):
            column = F.date_format(column, SPARK_TIMESTAMP_TEXT)
        selected.append(column.alias(name))
    return [row.asDict() for row in frame.select(*selected).collect()]


def read_table_hudi_rs(base_path: str, config: TableConfig) -> list[dict[str, Any]]:
    """The table's rows (compared columns only) through hudi-rs, which merges MERGE_ON_READ logs itself.

    Raises:
        KeyError: a compared column is missing from the table.
    """
    data = read_hudi_snapshot(base_path)
    if data is None:
        raise TableReadError(f"hudi-rs read no record batch from {base_path}")
    by_lower = {name.lower(): name for name in data.column_names}
    columns = compared_columns(config)
    missing = [name for name in columns if name not in by_lower]
    if missing:
        raise KeyError(f"columns {missing} are missing from {base_path}")
    return [
        {name: row[by_lower[name]] for name in columns}
        for row in data.select([by_lower[n] for n in columns]).to_pylist()
    ]


def check_table(spark: Any, base_path: str, config: TableConfig, expected: list[dict[str, Any]]) -> TableCheck:
    """Compare a Hudi table, read by Spark and by hudi-rs, with the model's rows.

    A read failure is a failed check (its message kept), not an exception.
    """
    columns = compared_columns(config)
    expected_count, expected_sum = checksum(expected, columns)
    counts: dict[str, tuple[int, str] | None] = {"spark": None, "hudi-rs": None}
    errors: list[str] = []
    readers = {
        "spark": lambda: read_table(spark, base_path, config),
        "hudi-rs": lambda: read_table_hudi_rs(base_path, config),
    }
    for name, read in readers.items():
        try:
            counts[name] = checksum(read(), columns)
        except Exception as error:  # noqa: BLE001 - any read failure is reported as this table's failure
            errors.append(f"{name}: {' '.join(str(error).split())[:300]}")
    spark_result, rs_result = counts["spark"], counts["hudi-rs"]
    return TableCheck(
        table_id=config.table_id,
        mode=config.mode.value,
        expected_rows=expected_count,
        actual_rows=spark_result[0] if spark_result else None,
        expected_checksum=expected_sum,
        actual_checksum=spark_result[1] if spark_result else None,
        error="; ".join(errors) or None,
        hudi_rs_rows=rs_result[0] if rs_result else None,
        hudi_rs_checksum=rs_result[1] if rs_result else None,
    )


def describe_mode(config: TableConfig) -> str:
    return "change rows" if config.mode is TableMode.HISTORICAL else "rows"

"""Compare a contender's table with the expected state, reading it without Spark.

Hudi tables are read with hudi-rs (odp.table_reader: a snapshot read of the latest commit), plain
Parquet tables with pyarrow. Neither reader shares code with any contender.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from bench.workload import KEY, SCHEMA_ARROW
from odp.table_reader import TableReadError, read_hudi_snapshot


@dataclass(frozen=True)
class TableCheck:
    """The verdict on one table: ``ok``, or what differs."""

    table: str
    ok: bool
    expected_rows: int
    actual_rows: int
    detail: str = ""


def read_hudi(base_path: Path) -> pa.Table:
    """Snapshot of a Hudi table (latest commit) through hudi-rs.

    Raises:
        TableReadError: the path is not a readable Hudi table.
    """
    table = read_hudi_snapshot(base_path)
    return SCHEMA_ARROW.empty_table() if table is None else table


def read_parquet_table(path: Path) -> pa.Table:
    """A folder of Parquet files, hive-partitioned or not.

    Raises:
        TableReadError: the folder does not exist.
    """
    if not path.is_dir():
        raise TableReadError(f"no table folder at {path}")
    dataset = ds.dataset(
        str(path), format="parquet", partitioning="hive", exclude_invalid_files=True, ignore_prefixes=["_", "."]
    )
    return dataset.to_table()


def normalised(table: pa.Table, schema: pa.Schema = SCHEMA_ARROW) -> pa.Table:
    """The data columns of ``schema`` in its order and types, sorted by key.

    Raises:
        KeyError: a data column is missing (the caller reports it).
    """
    columns = []
    for schema_field in schema:
        column = table.column(schema_field.name)
        if pa.types.is_timestamp(column.type) and column.type != schema_field.type:
            column = column.cast(pa.timestamp("us")).cast(schema_field.type)
        else:
            column = column.cast(schema_field.type)
        columns.append(column)
    out = pa.Table.from_arrays(columns, schema=schema)
    return out.sort_by(KEY).combine_chunks()


def compare(table: str, expected: pa.Table, actual: pa.Table) -> TableCheck:
    """Row-for-row comparison on every data column of ``expected``; the detail names the first differences."""
    schema = pa.schema([pa.field(item.name, item.type) for item in expected.schema])
    expected = normalised(expected, schema)
    try:
        actual = normalised(actual, schema)
    except KeyError as missing:
        return TableCheck(table, False, expected.num_rows, actual.num_rows, f"missing column {missing}")
    if expected.num_rows != actual.num_rows or not expected.column(KEY).equals(actual.column(KEY)):
        want = set(expected.column(KEY).to_pylist())
        got = actual.column(KEY).to_pylist()
        duplicates = len(got) - len(set(got))
        missing = sorted(want - set(got))
        extra = sorted(set(got) - want)
        detail = f"{len(missing)} keys missing (e.g. {missing[:3]}), {len(extra)} extra (e.g. {extra[:3]})"
        return TableCheck(table, False, expected.num_rows, actual.num_rows, f"{detail}, {duplicates} duplicates")
    differing = []
    for name in schema.names:
        if not expected.column(name).equals(actual.column(name)):
            unequal = pc.invert(pc.fill_null(pc.equal(expected.column(name), actual.column(name)), False))
            differing.append(f"{name} ({pc.sum(unequal).as_py()} rows)")
    if differing:
        return TableCheck(table, False, expected.num_rows, actual.num_rows, "values differ: " + ", ".join(differing))
    return TableCheck(table, True, expected.num_rows, actual.num_rows)

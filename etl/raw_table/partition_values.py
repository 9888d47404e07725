"""What a raw table's partition layout refuses (:mod:`etl.hudi.partition_paths` has the layouts), per change, with its
file, row, column and value: only an **unencoded** table (created before ODP encoded) refuses a value with ``/`` (it
would split the path); the error says how to move the table to the encoded layout. The encoded layout stores every
value, with or without catalog sync.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from etl.change_frame import FILE, ROW
from etl.errors import UnstorableChangeError


def _problem(value: Column, name: str, table_id: str) -> Column:
    """The reason ``value`` (a partition column's text) cannot be stored in the unencoded layout, else NULL."""
    shown = F.concat(F.lit(f"partition column {name}: value '"), F.substring(value, 1, 100), F.lit("'"))
    return F.when(
        F.instr(value, "/") > 0,
        F.concat(
            shown,
            F.lit(
                " would split the partition path into two folder levels: the table was created before ODP "
                "URL-encoded partition values and keeps that layout. To move it to the encoded layout, rebuild "
                f"it: python -m odp replay {table_id} (deletes the table and its tombstones and applies every "
                "processed file again, if the staging bucket still holds them all), or delete its base path and "
                "load it again from a full load; its first write then records the encoded layout"
            ),
        ),
    )


def partition_value_error(partitions: Sequence[str], table_id: str, *, encoded: bool) -> Column | None:
    """``row N, <the first partition value this layout refuses>``, else NULL; None when nothing can be refused."""
    if not partitions or encoded:
        return None
    problems = [_problem(F.col(name).cast("string"), name, table_id) for name in partitions]
    return F.concat(F.lit("row "), (F.col(ROW) + 1).cast("string"), F.lit(", "), F.coalesce(*problems))


def check_partition_values(changes: DataFrame, partitions: Sequence[str], table_id: str, *, encoded: bool) -> None:
    """Refuse the first change whose partition value the table's layout cannot store (one Spark job when the layout
    can refuse a value: an unencoded partitioned table; none for an encoded or an unpartitioned one).

    Raises:
        ChangeFileError: names the file, the row, the partition column, the value and what to do.
    """
    error = partition_value_error(partitions, table_id, encoded=encoded)
    if error is None:
        return
    first = changes.select(F.col(FILE), error.alias("why")).where(F.col("why").isNotNull()).first()
    if first is not None:
        raise UnstorableChangeError(first[FILE], first["why"])

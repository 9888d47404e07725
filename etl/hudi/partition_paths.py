"""Partition values in paths: URL-encoded for tables created now, the layout fixed at a table's first write.

Hive-style partition paths put each value in a folder name, ``region=eu/west/``: a ``/`` in a value makes two
folder levels, which the catalog and Athena read as another partition layout. Hudi's
``hoodie.datasource.write.partitionpath.urlencode`` writes ``region=eu%2Fwest/`` instead (Hudi's
``PartitionPathEncodeUtils.escapePathName``, Hive's escaping), and records the setting in the table's
``hoodie.properties`` when it creates the table; it does not check later writes against it, so a table keeps the
layout it was created with only if every write passes that setting back
(:func:`etl.hudi.timeline.stored_partition_encoding`).
Spark and hudi-rs read partition values from the data files, so they read the original value either way.

What each layout refuses (:func:`partition_value_error`), per change, with its file, row, column and value:

- an **unencoded** table (created before ODP encoded): a value with ``/`` (it would split the path); the error says
  how to move the table to the encoded layout;
- a table written **with catalog sync** (the Glue jobs): a value Hudi would encode at all. Hudi 1.0.2's hms sync
  registers each partition with the values its extractor (``MultiPartKeysValueExtractor``) reads from the path, as
  they are written there, without decoding them (``HMSDDLExecutor.addPartitionsToTable``; Hudi's
  ``hoodie.meta.sync.decode_partition`` applies only to its JDBC / HiveQL executors and to dropped partitions):
  the catalog and Athena would show ``eu%2Fwest``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from etl.change_frame import FILE, ROW
from etl.errors import UnstorableChangeError

URL_ENCODE_OPTION = "hoodie.datasource.write.partitionpath.urlencode"
# The characters Hudi's PartitionPathEncodeUtils escapes (Hive's FileUtils set; tests/unit/etl/test_partition_paths.py
# compares it with Hudi's own escapePathName for every ASCII character).
ESCAPED = frozenset([chr(code) for code in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
_ESCAPED_CLASS = "[" + "".join(f"\\x{{{ord(char):x}}}" for char in sorted(ESCAPED)) + "]"


def needs_encoding(value: str) -> bool:
    """Pure: whether Hudi's URL encoding of partition paths changes ``value``."""
    return any(char in ESCAPED for char in value)


def _problem(value: Column, name: str, table_id: str, *, encoded: bool, catalog_sync: bool) -> Column:
    """The reason ``value`` (a partition column's text) cannot be stored in this layout, else NULL."""
    shown = F.concat(F.lit(f"partition column {name}: value '"), F.substring(value, 1, 100), F.lit("'"))
    if not encoded:
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
    if not catalog_sync:
        return F.lit(None).cast("string")
    return F.when(
        value.rlike(_ESCAPED_CLASS),
        F.concat(
            shown,
            F.lit(
                " is URL-encoded in the partition path, and Hudi 1.0.2's catalog sync registers the encoded text as "
                "the partition value (the catalog and Athena would show it encoded): map the value in the table's "
                "transform, or partition by another column"
            ),
        ),
    )


def partition_value_error(
    partitions: Sequence[str], table_id: str, *, encoded: bool, catalog_sync: bool
) -> Column | None:
    """``row N, <the first partition value this layout refuses>``, else NULL; None when nothing can be refused."""
    if not partitions or (encoded and not catalog_sync):
        return None
    problems = [
        _problem(F.col(name).cast("string"), name, table_id, encoded=encoded, catalog_sync=catalog_sync)
        for name in partitions
    ]
    return F.concat(F.lit("row "), (F.col(ROW) + 1).cast("string"), F.lit(", "), F.coalesce(*problems))


def check_partition_values(
    changes: DataFrame, partitions: Sequence[str], table_id: str, *, encoded: bool, catalog_sync: bool
) -> None:
    """Refuse the first change whose partition value the table's layout cannot store (one Spark job when the layout
    can refuse a value; none for an encoded table without catalog sync, or an unpartitioned one).

    Raises:
        ChangeFileError: names the file, the row, the partition column, the value and what to do.
    """
    error = partition_value_error(partitions, table_id, encoded=encoded, catalog_sync=catalog_sync)
    if error is None:
        return
    first = changes.select(F.col(FILE), error.alias("why")).where(F.col("why").isNotNull()).first()
    if first is not None:
        raise UnstorableChangeError(first[FILE], first["why"])

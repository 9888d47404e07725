"""Partition values in paths: URL-encoded for tables created now, the layout fixed at a table's first write.

Hive-style partition paths put each value in a folder name, ``region=eu/west/``: a ``/`` in a value makes two
folder levels, which the catalog and Athena read as another partition layout. Hudi's
``hoodie.datasource.write.partitionpath.urlencode`` writes ``region=eu%2Fwest/`` instead (Hudi's
``PartitionPathEncodeUtils.escapePathName``, Hive's escaping), and records the setting in the table's
``hoodie.properties`` when it creates the table; it does not check later writes against it, so a table keeps the
layout it was created with only if every write passes that setting back
(``TableState.encoded_partitions``, :func:`etl.hudi.timeline.read_table_state`).
Spark and hudi-rs read partition values from the data files, so they read the original value either way.

Catalog sync (the Glue jobs) registers each partition with the values its extractor reads from the path. Hudi's
``MultiPartKeysValueExtractor`` returns them as written there, still encoded, and Hudi 1.0.2's hms sync does not
decode them (``HMSDDLExecutor.addPartitionsToTable``; ``hoodie.meta.sync.decode_partition`` applies only to its
JDBC / HiveQL executors and to dropped partitions): the catalog and Athena would show ``eu%2Fwest``. A table with
the encoded layout therefore syncs with ODP's ``odp.hudi.DecodingPartitionValueExtractor`` (jvm/, in
``.cache/jars/odp-hudi-extensions.jar``: the same split, then Hudi's ``PartitionPathEncodeUtils.unescapePathName``),
so the catalog registers ``eu/west`` (:func:`partition_extractor`).

What a layout refuses (:func:`partition_value_error`), per change, with its file, row, column and value: only an
**unencoded** table (created before ODP encoded) refuses a value with ``/`` (it would split the path); the error
says how to move the table to the encoded layout. The encoded layout stores every value, with or without catalog
sync.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from etl.change_frame import FILE, ROW
from etl.errors import UnstorableChangeError

URL_ENCODE_OPTION = "hoodie.datasource.write.partitionpath.urlencode"
# The catalog sync's partition value extractors (HoodieSyncConfig.META_SYNC_PARTITION_EXTRACTOR_CLASS).
DECODING_EXTRACTOR = "odp.hudi.DecodingPartitionValueExtractor"  # jvm/partition-extractor: encoded paths, decoded
MULTI_PART_EXTRACTOR = "org.apache.hudi.hive.MultiPartKeysValueExtractor"  # values as written in the path
NON_PARTITIONED_EXTRACTOR = "org.apache.hudi.hive.NonPartitionedExtractor"


def partition_extractor(*, partitioned: bool, encoded: bool) -> str:
    """Pure: the class the catalog sync reads a table's partition values with, so it registers them as written:
    decoded from URL-encoded paths (ODP's extractor), as they are in unencoded ones (where a ``%`` is no escape)."""
    if not partitioned:
        return NON_PARTITIONED_EXTRACTOR
    return DECODING_EXTRACTOR if encoded else MULTI_PART_EXTRACTOR


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

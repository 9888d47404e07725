"""Partition values in paths: URL-encoded for tables created now, the layout fixed at a table's first write.

Hive-style partition paths put each value in a folder name, ``region=eu/west/``: a ``/`` in a value makes two
folder levels, which the catalog and Athena read as another partition layout. Hudi's
``hoodie.datasource.write.partitionpath.urlencode`` writes ``region=eu%2Fwest/`` instead (Hudi's
``PartitionPathEncodeUtils.escapePathName``, Hive's escaping), and records the setting in the table's
``hoodie.properties`` when it creates the table; it does not check later writes against it, so a table keeps the
layout it was created with only if every write passes that setting back
(``HudiTableState.encoded_partitions``, :func:`etl.hudi.timeline.read_table_state`).
Spark and hudi-rs read partition values from the data files, so they read the original value either way.

Catalog sync (the Glue jobs) registers each partition with the values its extractor reads from the path. Hudi's
``MultiPartKeysValueExtractor`` returns them as written there, still encoded, and Hudi 1.0.2's hms sync does not
decode them (``HMSDDLExecutor.addPartitionsToTable``; ``hoodie.meta.sync.decode_partition`` applies only to its
JDBC / HiveQL executors and to dropped partitions): the catalog and Athena would show ``eu%2Fwest``. A table with
the encoded layout therefore syncs with ODP's ``odp.hudi.DecodingPartitionValueExtractor`` (jvm/, in
``.cache/jars/odp-hudi-extensions.jar``: the same split, then Hudi's ``PartitionPathEncodeUtils.unescapePathName``),
so the catalog registers ``eu/west`` (:func:`partition_extractor`).

What a layout refuses is the raw tables' write's check (:mod:`etl.raw_table.partition_values`).
"""

from __future__ import annotations

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

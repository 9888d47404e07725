"""Hudi write options: one function of the target table (etl.hudi.target), the job's write profile and the
commit's metadata; the File Processor, the streaming micro-batch and the dataset job all call it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from etl.hudi.partition_paths import URL_ENCODE_OPTION, partition_extractor
from etl.hudi.table_version import TABLE_VERSION_OPTIONS
from etl.hudi.target import HudiTarget
from odp.config.models import TableType

COMMIT_METADATA_PREFIX = "_odp_"
FILE_IDS_METADATA = "_odp_file_ids"
RUN_ID_METADATA = "_odp_run_id"
INDEX_METADATA = "_odp_index"  # the index the commit was written with (HudiTarget.index)
SIMPLE_KEYGEN = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX_KEYGEN = "org.apache.hudi.keygen.ComplexKeyGenerator"
CUSTOM_KEYGEN = "org.apache.hudi.keygen.CustomKeyGenerator"
NONPARTITIONED_KEYGEN = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"


class WriteOperation(StrEnum):
    UPSERT = "upsert"
    BULK_INSERT = "bulk_insert"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"


def key_generator(record_keys: Sequence[str], partitions: Sequence[str]) -> tuple[str, str]:
    """(key generator class, partition path field option).

    One key field with one partition column: SimpleKeyGenerator. One key field with several partition
    columns: CustomKeyGenerator (a one-field ComplexKeyGenerator encodes keys differently across Hudi
    releases, HUDI-9666). Several key fields: ComplexKeyGenerator. No partitions: NonpartitionedKeyGenerator.
    """
    if not partitions:
        return NONPARTITIONED_KEYGEN, ""
    if len(record_keys) > 1:
        return COMPLEX_KEYGEN, ",".join(partitions)
    if len(partitions) == 1:
        return SIMPLE_KEYGEN, partitions[0]
    return CUSTOM_KEYGEN, ",".join(f"{name}:SIMPLE" for name in partitions)


class HudiProfile(StrEnum):
    """Where a write runs. ``glue``: production (Hudi sizes its own shuffles from the input and the cluster).
    ``local``: a laptop (shuffles sized from the input and the local cores, a small record index)."""

    GLUE = "glue"
    LOCAL = "local"


ROWS_PER_LOCAL_TASK = 100_000  # local profile: one shuffle task per this many input rows, at most one per core
PARALLELISM_OPTIONS = (
    "hoodie.bulkinsert.shuffle.parallelism",
    "hoodie.upsert.shuffle.parallelism",
    "hoodie.insert.shuffle.parallelism",
    "hoodie.delete.shuffle.parallelism",
    "hoodie.simple.index.parallelism",  # the simple index's join with the stored keys (Hudi's default: derived)
    "hoodie.global.simple.index.parallelism",
)
DEFAULT_COMPACTION_DELTA_COMMITS = 5
# MERGE_ON_READ with the record index (Hudi 1.0.2 cannot index log files): an upsert merges a partition's inserts into
# its one "small" file group (base file under hoodie.parquet.small.file.limit, Hudi's default 100 MB), with that
# group's updates and deletes, into a new base file, as COPY_ON_WRITE would; only the other groups get log files.
# At 100 MB a table of one file group under 100 MB was rewritten by every commit with an insert (docs/decisions/006,
# i27-fleet-mor). At 4 MiB a commit rewrites at most 4 MiB per partition with inserts, every larger file group logs
# its updates and deletes, and a trickle of inserts gathers in files of about 4 MiB (docs/decisions/006).
MERGE_ON_READ_SMALL_FILE_BYTES = 4 * 1024 * 1024
# MERGE_ON_READ compaction: at each schedule (every compaction_delta_commits delta commits) only the file groups whose
# logs matter are compacted, ODP's strategy from jvm/ (its class comment; docs/decisions/007):
# log bytes at least COMPACTION_LOG_SHARE of the base file's, or as many log files as delta commits between schedules,
# or no base file. Hudi's default compacts every group with a log file, so a fact table whose late updates put a
# few rows in many old partitions rewrote nearly all of itself at each compaction (docs/decisions/007).
COMPACTION_STRATEGY = "odp.hudi.LogShareCompactionStrategy"
COMPACTION_LOG_SHARE_OPTION = "odp.compaction.log.share"
COMPACTION_LOG_SHARE = 0.2
# Hudi 1.0 turns on the metadata table's column statistics and partition statistics by default: every
# write then computes min / max / null counts of every column of every file it writes, and commits them
# to two more metadata partitions (about half the metadata table's write time on the benchmark's CDC
# wave). They serve data skipping in Hudi's own Spark reader only (Athena and Glue's catalog readers do
# not use them); an existing table's partitions are dropped by Hudi on the next write with them off.
METADATA_INDEXES_OFF = {
    "hoodie.metadata.index.column.stats.enable": "false",
    "hoodie.metadata.index.partition.stats.enable": "false",
}


# Hudi cleans after every commit by default (``hoodie.clean.trigger.max.commits`` = 1), and Hudi 1.0.2 rereads every
# archived instant of the last 3 days at each file-system view (apache/hudi #14013), so each archived clean costs every
# later commit. A clean every 10 commits: why, what it measured and what it changes for readers in docs/decisions/008
# (the cleaner still keeps hoodie.clean.commits.retained = 10 commits).
CLEAN_EVERY_COMMITS = 10
TABLE_SERVICE_OPTIONS = {"hoodie.clean.trigger.max.commits": str(CLEAN_EVERY_COMMITS)}
# Off for a write of a table that has nothing to clean (etl.hudi.timeline.cleaning_due): Hudi would plan a clean over
# every partition at each commit from its 10th on and find nothing (docs/decisions/008).
AUTO_CLEAN_OPTION = "hoodie.clean.automatic"


@dataclass(frozen=True)
class WriteProfile:
    """The job-level settings of every Hudi write of one run: the profile, the cores Spark has, how often
    MERGE_ON_READ tables schedule compaction (inline, every ``compaction_delta_commits`` delta commits), the log share
    from which a file group is compacted (``compaction_log_share``) and the base-file size under which a
    MERGE_ON_READ file group takes inserts (``merge_on_read_small_file_bytes``)."""

    profile: HudiProfile = HudiProfile.GLUE
    cores: int = 2  # local profile only: Spark's default parallelism (the local cores)
    compaction_delta_commits: int = DEFAULT_COMPACTION_DELTA_COMMITS
    merge_on_read_small_file_bytes: int = MERGE_ON_READ_SMALL_FILE_BYTES
    compaction_log_share: float = COMPACTION_LOG_SHARE


def shuffle_parallelism(profile: WriteProfile, input_rows: int) -> int | None:
    """Pure: the shuffle parallelism of one write, or None to leave it to Hudi.

    glue: None. Hudi 1.0 derives it from the input's partitions (``*.shuffle.parallelism`` = 0), which
    Spark sizes from the input files and the job's workers; a constant would starve a 10-worker job.
    local: one task per ROWS_PER_LOCAL_TASK input rows, between 1 and the local cores (a small commit
    runs as one task instead of paying a task per core for nothing).
    """
    if profile.profile is HudiProfile.GLUE:
        return None
    return max(1, min(profile.cores, math.ceil(max(input_rows, 1) / ROWS_PER_LOCAL_TASK)))


KEYS_PER_LOCAL_INDEX_FILE_GROUP = 250_000
HUDI_MIN_INDEX_FILE_GROUPS = 10


def record_index_file_groups(input_rows: int) -> int:
    """Pure, local profile: the record index's file groups, fixed when the index is built (a table's first write, or
    its second when the first was a load: :func:`defers_record_index`; then from the stored rows).

    Hudi's minimum (10) suits tables of millions of keys; a laptop table of thousands writes 10 tiny files per
    commit for nothing, so one per 250,000 rows of the write, at most Hudi's 10. Never one for everything:
    a file group's keys are merged in the driver's memory, and 2,000,000 keys in one ran a 2 GiB driver
    out of heap (the benchmark's 10x table).
    """
    return max(1, min(HUDI_MIN_INDEX_FILE_GROUPS, math.ceil(max(input_rows, 1) / KEYS_PER_LOCAL_INDEX_FILE_GROUP)))


def profile_options(profile: WriteProfile, input_rows: int, *, index_rows: int | None = None) -> dict[str, str]:
    """Options every write of the profile carries (table and tombstones): metadata table on in both profiles
    (file listings from the metadata table, and the record level index lives there; the simple index turns it off,
    :func:`index_options`), a clean every
    :data:`CLEAN_EVERY_COMMITS` commits in both, parallelism per profile."""
    options = {"hoodie.metadata.enable": "true", **METADATA_INDEXES_OFF, **TABLE_SERVICE_OPTIONS}
    parallelism = shuffle_parallelism(profile, input_rows)
    if parallelism is not None:
        options.update(dict.fromkeys(PARALLELISM_OPTIONS, str(parallelism)))
        # the global index's check for keys that change partition reads the stored records of the tagged
        # keys with this many tasks (Hudi's default: 60, for a cluster)
        options["hoodie.global.index.reconcile.parallelism"] = str(parallelism)
    if profile.profile is HudiProfile.LOCAL:
        keys = input_rows if index_rows is None else index_rows  # the keys an index built by this write holds
        options["hoodie.metadata.record.index.min.filegroup.count"] = str(record_index_file_groups(keys))
    return options


def record_index_options(*, build: bool = True) -> dict[str, str]:
    """Hudi 1.0's record level index: key -> file group in the metadata table, global across partitions.

    Its lookup costs in proportion to the changes (a point read per key), not to the table as
    GLOBAL_SIMPLE's join with every stored key did. ``update.partition.path``: a key whose partition value
    changes (an update of the partition column, a delete whose image carries an older value) is deleted
    from its old partition and written to the new one, never left behind as a stale copy.

    ``build`` False: this write does not write the index (a first load, :func:`defers_record_index`); the index
    type stays, and the table's next write, with the index on, builds it from the stored files before it tags
    its changes (Hudi's initialisation of a metadata partition on an existing table).
    """
    return {
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.record.index.enable": str(build).lower(),
        "hoodie.record.index.update.partition.path": "true",
    }


# The largest first load whose record index is left to the table's next write. That write tags its changes with
# GLOBAL_SIMPLE (a join with every stored key) before Hudi builds the index from the files, so it pays the table's
# keys twice: cheap where the simple index is (docs/decisions/004: up to 1,000,000 rows), not beyond (the fleet
# benchmark's 2,000,000- and 10,000,000-row tables: docs/decisions/033's addendum).
RECORD_INDEX_DEFERRED_UP_TO_ROWS = 1_000_000


def defers_record_index(target: HudiTarget, operation: WriteOperation, input_rows: int = 0) -> bool:
    """Pure: whether a record-index table's write leaves its record index to the table's next write.

    A first load (``bulk_insert``, only ever into a new table: :func:`etl.raw_table.plan.plan_write`) tags nothing,
    yet with the index on Hudi creates the metadata table before the first commit and writes every key's entry
    into it as a delta commit of its own, row by row (7.9 s of an 11.5 s load of 200,000 rows). Without it the load
    writes only its data and the file listing, and the next write, with the index on, builds the index from the
    base files in bulk (read the keys, write them as HFiles): a load and its first upsert 11.5 s against 15.0 s
    (docs/decisions/002, 033). Only a load of at most :data:`RECORD_INDEX_DEFERRED_UP_TO_ROWS` rows (``input_rows``):
    the next write tags its changes against every stored key before the index exists.
    """
    return (
        target.index_buckets is None
        and not target.simple_index
        and operation is WriteOperation.BULK_INSERT
        and input_rows <= RECORD_INDEX_DEFERRED_UP_TO_ROWS
    )


def bucket_index_options(buckets: int) -> dict[str, str]:
    """Hudi's simple bucket index: a key's file group is a hash of its record key, ``buckets`` per partition.

    No lookup and no index to maintain, but not global: a key is only looked for in the partition its change
    names (``TableConfig.index_buckets`` says when that is safe). The metadata table keeps its file listings.
    """
    return {
        "hoodie.index.type": "BUCKET",
        "hoodie.index.bucket.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": str(buckets),
        "hoodie.metadata.record.index.enable": "false",
    }


def simple_index_options(*, partitioned: bool) -> dict[str, str]:
    """Hudi's simple index without the metadata table: a small table's index (``TableConfig.index`` ``simple``).

    Each upsert joins its keys with the record keys stored in the latest base files (Hudi reads the key column of
    every base file of the partitions it looks in), so its lookup costs in proportion to the table, not to the
    changes; in exchange a commit writes no metadata table (its file listing, record index and their own
    timeline, about a third of a small commit's CPU: docs/decisions/004). Partitioned:
    GLOBAL_SIMPLE, which looks in every partition and moves a key whose partition value changes
    (``update.partition.path``), the guarantee the record level index gives; unpartitioned: SIMPLE, the same
    lookup without the global index's reconciliation. The table's files are then listed from storage.
    """
    return {
        "hoodie.index.type": "GLOBAL_SIMPLE" if partitioned else "SIMPLE",
        "hoodie.simple.index.update.partition.path": "true",
        "hoodie.metadata.enable": "false",
        "hoodie.metadata.record.index.enable": "false",
    }


# Hudi writes a bloom filter of the file's keys into every base file's footer (about 430 KB at its default
# hoodie.index.bloom.num_entries of 60,000, whatever the file holds: a 66-row file was 445 KB). Only the bloom
# indexes read it; the record level index and the bucket index never do, so it is written for nothing and is
# most of a small table's bytes written per commit. Hudi still writes it when the index type is a bloom index.
NO_BASE_FILE_BLOOM_FILTER = {"hoodie.parquet.bloom.filter.enabled": "false"}


def index_options(
    target: HudiTarget, operation: WriteOperation = WriteOperation.UPSERT, input_rows: int = 0
) -> dict[str, str]:
    """The table's index: the record level index (built by the table's second write when its first is a load:
    :func:`defers_record_index`), the bucket index when ``index_buckets`` is set, or the simple index (which turns
    the metadata table off, so these options come after :func:`profile_options`); none reads a base file's bloom
    filter, so none is written (:data:`NO_BASE_FILE_BLOOM_FILTER`)."""
    if target.index_buckets is not None:
        index = bucket_index_options(target.index_buckets)
    elif target.simple_index:
        index = simple_index_options(partitioned=bool(target.partitions))
    else:
        index = record_index_options(build=not defers_record_index(target, operation, input_rows))
    return {**index, **NO_BASE_FILE_BLOOM_FILTER}


def hudi_write_options(
    target: HudiTarget,
    *,
    operation: WriteOperation,
    profile: WriteProfile,
    catalog_sync: bool,
    input_rows: int = 0,
    stored_rows: int = 0,
    metadata: Mapping[str, str] | None = None,
    clean: bool = True,
) -> dict[str, str]:
    """Every option of one Hudi write of a target table.

    Raw tables order by ``_odp_seq`` with EVENT_TIME_ORDERING (a change older than the stored row never replaces
    it); datasets with COMMIT_TIME_ORDERING. ``metadata``: the commit's extra metadata (etl.hudi.commit.CommitTag,
    read back for exactly-once). The index (:func:`index_options`: record level, bucket or simple) travels in it too
    (``_odp_index``), so a run can refuse to write a table with another one. A first load (up to a million rows)
    writes no record index; the next write builds it (:func:`defers_record_index`), sized for ``stored_rows`` (the rows
    before this write) when it has more than ``input_rows``.
    Partition values are URL-encoded in paths as the target says (a new table: encoded; Hudi records it in
    ``hoodie.properties``, :mod:`etl.hudi.partition_paths`). MERGE_ON_READ tables schedule an inline compaction every
    ``profile.compaction_delta_commits`` delta commits, of the file groups whose logs matter
    (:data:`COMPACTION_STRATEGY`), and only their file groups under ``profile.merge_on_read_small_file_bytes`` take
    inserts (:data:`MERGE_ON_READ_SMALL_FILE_BYTES`). ``clean``: False when the table has nothing for the cleaner
    (``hoodie.clean.automatic`` off for this write, :func:`etl.hudi.timeline.cleaning_due`). Every write keeps Hudi
    table version 6 (:data:`etl.hudi.table_version.TABLE_VERSION_OPTIONS`), the version Athena's readers read.
    """
    keygen, partition_field = key_generator(target.record_keys, target.partitions)
    options = {
        "hoodie.table.name": target.name,
        "hoodie.datasource.write.table.name": target.name,
        "hoodie.datasource.write.table.type": target.table_type.value,
        "hoodie.datasource.write.operation": operation.value,
        "hoodie.datasource.write.recordkey.field": ",".join(target.record_keys),
        "hoodie.datasource.write.precombine.field": target.ordering_field or "",
        "hoodie.record.merge.mode": target.ordering.value,
        "hoodie.datasource.write.keygenerator.class": keygen,
        "hoodie.datasource.write.partitionpath.field": partition_field,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        URL_ENCODE_OPTION: str(target.encode_partitions).lower(),  # etl.hudi.partition_paths
        "hoodie.write.set.null.for.missing.columns": "true",
        "hoodie.datasource.write.commitmeta.key.prefix": COMMIT_METADATA_PREFIX,
        **dict(metadata or {}),
        INDEX_METADATA: target.index,
        **profile_options(profile, input_rows, index_rows=max(input_rows, stored_rows)),
        **index_options(target, operation, input_rows),
    }
    options.update({} if clean else {AUTO_CLEAN_OPTION: "false"})
    if target.one_row_per_key:
        # The rows come one per record key already (current: the last change per key; historical: the key
        # plus ``_odp_seq``, unique per change): Hudi's own pre-combine would shuffle them again for nothing.
        options["hoodie.combine.before.upsert"] = "false"
    if target.table_type is TableType.MERGE_ON_READ:
        options.update(merge_on_read_options(profile))
    if catalog_sync:
        options.update(glue_sync_options(target))
    # Last, so nothing above can change them: table version 6 for the table, its metadata table and every table
    # service of the write (compaction, clean, archival), never upgraded (etl.hudi.table_version).
    options.update(TABLE_VERSION_OPTIONS)
    return options


def merge_on_read_options(profile: WriteProfile) -> dict[str, str]:
    """A MERGE_ON_READ table's compaction and small files.

    Scheduled inline, every N delta commits: N - 1 runs of N only append log files (fast ingestion), the N-th also
    merges the logs that matter into base files (:data:`COMPACTION_STRATEGY`). A group compacts once it has N log
    files, so a snapshot read merges at most 2N - 1 logs of a group; only file groups under the profile's small-file
    size take inserts (:data:`MERGE_ON_READ_SMALL_FILE_BYTES`).
    """
    return {
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
        "hoodie.compact.inline.max.delta.commits": str(profile.compaction_delta_commits),
        "hoodie.parquet.small.file.limit": str(profile.merge_on_read_small_file_bytes),
        "hoodie.compaction.strategy": COMPACTION_STRATEGY,
        COMPACTION_LOG_SHARE_OPTION: str(profile.compaction_log_share),
        "hoodie.compaction.logfile.num.threshold": str(profile.compaction_delta_commits),
    }


def glue_sync_options(target: HudiTarget) -> dict[str, str]:
    """Hudi meta sync to the Glue Data Catalog (Glue's Hive metastore client), hive-style partitions; the partition
    values registered as written (decoded for a table with URL-encoded paths: :func:`partition_extractor`)."""
    return {
        "hoodie.datasource.meta.sync.enable": "true",
        "hoodie.datasource.hive_sync.enable": "true",
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.use_jdbc": "false",
        "hoodie.datasource.hive_sync.database": target.database,
        "hoodie.datasource.hive_sync.table": target.name,
        "hoodie.datasource.hive_sync.partition_fields": ",".join(target.partitions),
        # HoodieSyncConfig.META_SYNC_PARTITION_EXTRACTOR_CLASS: Hudi 1.0.2's one key for every sync tool
        "hoodie.datasource.hive_sync.partition_extractor_class": partition_extractor(
            partitioned=bool(target.partitions), encoded=target.encode_partitions
        ),
        "hoodie.datasource.hive_sync.support_timestamp": "true",
    }

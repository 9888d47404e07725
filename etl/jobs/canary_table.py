"""The canary table: what a job's harmless mode (the post-deploy canary) writes on its engine, through the write path
its real tables take, before any real table does.

Each job writes a tiny table of its own, ``_odp_canary_<job kind>_<unit>`` (:func:`odp.naming.canary_table_name`: the
unit is what runs it, so the runs the canary starts together never share a table; ``_odp`` names are reserved for
ODP: no configured table or dataset can take it), in a database its role already syncs into, under its own zone:

1. **leftovers**: the data and catalog entries a killed canary left are removed first;
2. **write**: two commits through the job's own writer under ``commit_once`` (a raw table: :class:`RawTableWriter`,
   partitioned, MERGE_ON_READ, the inserts then their updates; a dataset: the dataset job's save, partitioned
   COPY_ON_WRITE, one commit); with catalog sync on, Hudi syncs the table to the Glue Data Catalog in each commit
   (the partition value extractor loads by name), locally the writer registers it in the session catalog;
3. **compaction** (a raw table): the canary's write profile compacts after one delta commit, so the second commit
   runs ODP's compaction strategy (``odp.hudi.LogShareCompactionStrategy``) and leaves a compaction on the timeline;
4. **catalog**: the table has an entry in the catalog (Glue: GetTable, ``_ro`` / ``_rt`` for MERGE_ON_READ);
5. **read back**: a Hudi snapshot read returns exactly the rows written (the updates merged);
6. **remove**: the catalog entries (Glue: DeleteTable) and the files, then checked gone.

A step that fails raises :class:`CanaryStepError` naming the table, the step and the cause; the job then fails, and
the canary (``python -m odp canary``) names the run. Why this shape: docs/decisions/031-a-canary-that-writes.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Protocol

from botocore.exceptions import ClientError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.change_frame import FILE, FILE_ORDER, INSERT, IS_DELETED, OP, ORDERING, ROW, UPDATE, with_sequence
from etl.errors import EtlError
from etl.hudi.commit import CommitTag, commit_once
from etl.hudi.options import WriteProfile
from etl.hudi.timeline import commit_of_run, completed_commits
from etl.jvm import filesystem_path
from etl.raw_table.batch import ChangeBatch, WriteSettings
from etl.raw_table.writer import RawTableWriter, register_path_in_session_catalog
from odp.config.datasets import DatasetConfig, Refresh, Zone
from odp.config.models import SourceFormat, TableConfig, TableMode, TableType
from odp.contracts.datasets import DatasetJobArgs
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import canary_table_name, table_base_path, tombstone_path

CANARY_SOURCE = "odp"
CANARY_SCHEMA = "canary"
# Two partitions (the partition value extractor registers both), two keys each.
CANARY_ROWS = ((1, "a"), (2, "a"), (3, "b"), (4, "b"))
COLUMNS = {"id": "bigint", "region": "string", "value": "string"}
# The first commit's values, then the second's: what the read back must return.
FIRST, SECOND = "inserted", "updated"
# A MERGE_ON_READ table compacts once this many delta commits are on its timeline (real tables: 5): the canary's
# second commit logs its updates and compacts them, in the same write.
CANARY_COMPACTION_DELTA_COMMITS = 1
COMPACTION_ACTION = "commit"  # a MERGE_ON_READ table's compaction completes as a ``commit``

Step = str
LEFTOVERS, WRITE, CATALOG_SYNC, COMPACTION, CATALOG, READ_BACK, REMOVE = (
    "remove leftovers",
    "write",
    "catalog sync",
    "compaction",
    "catalog entry",
    "read back",
    "remove",
)


class CanaryStepError(EtlError):
    """A step of the canary table failed: the message names the table, where it lives, the step and the cause."""

    def __init__(self, table: CanaryTable, step: Step, cause: str) -> None:
        super().__init__(f"canary table {table.catalog_name} ({table.base_path}): step '{step}' failed: {cause}")
        self.step = step


def catalog_entries(name: str) -> tuple[str, ...]:
    """Pure: every catalog entry a canary table may have: its name, and the ``_ro`` / ``_rt`` views Hudi's sync
    registers for a MERGE_ON_READ table."""
    return (name, f"{name}_ro", f"{name}_rt")


@dataclass(frozen=True)
class CanaryTable:
    """Where one job's canary table lives: its job kind, catalog database and name, and base path."""

    job: str
    database: str
    name: str
    base_path: str

    @property
    def catalog_name(self) -> str:
        return f"{self.database}.{self.name}"


def raw_canary_table(job: str, raw_root: str, database: str, unit: str = "") -> CanaryTable:
    """Pure: a raw-table writer's canary table (the File Processor, the streaming job): ``<raw_root>/<database>/
    _odp_canary_<job>_<unit>``, beside the database's tables."""
    name = canary_table_name(job, unit)
    return CanaryTable(job, database, name, table_base_path(raw_root, database, name))


def raw_canary_config(table: CanaryTable, cadence: str = "canary") -> TableConfig:
    """Pure: the canary table's configuration as a raw table: partitioned by ``region``, MERGE_ON_READ, current mode,
    the record level index (the defaults every configured table gets)."""
    return TableConfig(
        source=CANARY_SOURCE,
        schema_name=CANARY_SCHEMA,
        table=table.name,
        target_table=table.name,
        format=SourceFormat.DMS,
        primary_key=("id",),
        ordering_column="seq",
        partition_by=("region",),
        table_type=TableType.MERGE_ON_READ,
        mode=TableMode.CURRENT,
        cadence=cadence,
        database=table.database,
        columns=COLUMNS,
    )


def dataset_canary_config(job: str, zone: Zone, database: str, unit: str = "") -> DatasetConfig:
    """Pure: the dataset job's canary table as a dataset of ``zone`` in ``database``: keyed by ``id``, partitioned by
    ``region``, COPY_ON_WRITE, no source (its rows are the canary's, not a query's)."""
    return DatasetConfig(
        name=canary_table_name(job, unit),
        zone=zone,
        database=database,
        sources=(),
        sql="",
        key=("id",),
        partition_by=("region",),
        table_type=TableType.COPY_ON_WRITE,
        refresh=Refresh.FULL,
        quality=(),
        file="(the post-deploy canary)",
    )


def expected_rows(value: str) -> list[tuple[int, str, str]]:
    """Pure: the canary rows with ``value``, ordered as :func:`read_rows` returns them."""
    return [(key, region, value) for key, region in CANARY_ROWS]


class CanaryCatalog(Protocol):
    """Where the canary table's catalog entries are looked up and removed."""

    def entries(self, database: str, names: Sequence[str]) -> list[str]: ...

    def drop(self, database: str, name: str) -> None: ...


@dataclass(frozen=True)
class GlueCatalog:
    """The Glue Data Catalog through a boto3 Glue client (glue:GetTable, glue:DeleteTable)."""

    glue: Any

    def entries(self, database: str, names: Sequence[str]) -> list[str]:
        found = []
        for name in names:
            try:
                self.glue.get_table(DatabaseName=database, Name=name)
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "EntityNotFoundException":
                    raise
                continue
            found.append(name)
        return found

    def drop(self, database: str, name: str) -> None:
        self.glue.delete_table(DatabaseName=database, Name=name)


@dataclass(frozen=True)
class SessionCatalog:
    """The Spark session's own catalog (a local run: the sandbox registers its tables there)."""

    spark: SparkSession

    def entries(self, database: str, names: Sequence[str]) -> list[str]:
        return [name for name in names if self.spark.catalog.tableExists(f"`{database}`.`{name}`")]

    def drop(self, database: str, name: str) -> None:
        self.spark.sql(f"DROP TABLE IF EXISTS `{database}`.`{name}`")


def job_catalog(spark: SparkSession, *, catalog_sync: bool, glue: Callable[[], Any]) -> CanaryCatalog:
    """The catalog the job syncs to: Glue's (``glue()`` makes a boto3 Glue client) with catalog sync on, else the
    session's."""
    return GlueCatalog(glue()) if catalog_sync else SessionCatalog(spark)


def describe(error: BaseException) -> str:
    """Pure: an error in a line or two: its type and first line, and the root cause of a Java stack trace (the last
    ``Caused by:`` of a Py4JJavaError: a missing class shows there as ``ClassNotFoundException: <class>``)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    first = next((line for line in lines if not line.startswith("at ")), "")
    causes = [line for line in lines if line.startswith("Caused by:")]
    return f"{type(error).__name__}: {first}" + (f" ({causes[-1]})" if causes else "")


@contextmanager
def step(table: CanaryTable, name: Step) -> Iterator[None]:
    """Run one step; anything it raises becomes a :class:`CanaryStepError` naming the step."""
    try:
        yield
    except CanaryStepError:
        raise
    except Exception as error:
        raise CanaryStepError(table, name, describe(error)) from error


def remove_table(
    spark: SparkSession, table: CanaryTable, catalog: CanaryCatalog, *, extra_paths: Sequence[str] = ()
) -> None:
    """Drop the table's catalog entries and delete its files (and ``extra_paths``), whatever exists of them."""
    for name in catalog.entries(table.database, catalog_entries(table.name)):
        catalog.drop(table.database, name)
    for path in (table.base_path, *extra_paths):
        filesystem, hadoop_path = filesystem_path(spark, path)
        if filesystem.exists(hadoop_path):
            filesystem.delete(hadoop_path, True)


def check_removed(spark: SparkSession, table: CanaryTable, catalog: CanaryCatalog) -> None:
    """Raises:
    CanaryStepError: an entry or the files are still there."""
    entries = catalog.entries(table.database, catalog_entries(table.name))
    filesystem, hadoop_path = filesystem_path(spark, table.base_path)
    if entries or filesystem.exists(hadoop_path):
        left = [*entries, *([table.base_path] if filesystem.exists(hadoop_path) else [])]
        raise CanaryStepError(table, REMOVE, f"still there after removal: {', '.join(left)}")


def read_rows(spark: SparkSession, base_path: str) -> list[tuple[int, str, str]]:
    """The table's rows as (id, region, value), by id (a Hudi snapshot read: logs merged)."""
    frame = spark.read.format("hudi").load(base_path).select("id", "region", "value").orderBy("id")
    return [(int(row["id"]), str(row["region"]), str(row["value"])) for row in frame.collect()]


def change_rows(spark: SparkSession, op: str, value: str, ordering: str) -> DataFrame:
    """The canary rows as one file's changes in the canonical change frame (op, ordering, file, row, columns)."""
    rows = [(op, ordering, position, key, region, value) for position, (key, region) in enumerate(CANARY_ROWS)]
    schema = f"{OP} string, {ORDERING} string, {ROW} long, id long, region string, value string"
    frame = spark.createDataFrame(rows, schema)
    return with_sequence(
        frame.select(OP, ORDERING, F.lit(f"canary-{ordering}").alias(FILE), F.lit(0).alias(FILE_ORDER), ROW, *COLUMNS)
    )


def write_commit(
    spark: SparkSession,
    table: CanaryTable,
    run_id: str,
    write: Callable[[CommitTag], Any],
    *,
    job: str,
) -> None:
    """One commit under ``commit_once``. The same save runs, after the commit completes, a MERGE_ON_READ table's inline
    compaction and then the catalog sync (Hudi's, or the session catalog's registration locally): a failure after the
    commit is named after whichever of them its stack trace names.

    Raises:
        CanaryStepError: ``write``, ``compaction`` or ``catalog sync``.
    """
    try:
        commit_once(spark, table.base_path, CommitTag(run_id, (run_id,)), write, job=job, label=table.catalog_name)
    except Exception as error:
        raise CanaryStepError(table, failed_step(spark, table, run_id, error), describe(error)) from error


def failed_step(spark: SparkSession, table: CanaryTable, run_id: str, error: BaseException) -> Step:
    """Which step of a commit failed: the write itself when the commit did not complete, else the compaction when the
    error names one, else the catalog sync."""
    try:
        committed = commit_of_run(completed_commits(spark, table.base_path), run_id) is not None
    except Exception:  # noqa: BLE001 - the timeline does not read: the write is what failed
        committed = False
    if not committed:
        return WRITE
    return COMPACTION if "compact" in str(error).lower() else CATALOG_SYNC


def canary_profile(profile: WriteProfile) -> WriteProfile:
    """Pure: the job's write profile, compacting a MERGE_ON_READ table after each delta commit."""
    return replace(profile, compaction_delta_commits=CANARY_COMPACTION_DELTA_COMMITS)


def run_raw_canary(
    spark: SparkSession, table: CanaryTable, settings: WriteSettings, catalog: CanaryCatalog
) -> list[str]:
    """The canary table of a raw-table writer (the File Processor, the streaming job): every step of the module
    docstring through :class:`RawTableWriter` with ``settings`` (the job's; compaction after one delta commit).
    Returns what each step found, one line each.

    Raises:
        CanaryStepError: a step failed (its name in the message).
    """
    settings = replace(settings, profile=canary_profile(settings.profile))
    config = raw_canary_config(table)
    tombstones = tombstone_path(settings.raw_root, table.database, table.name)
    with step(table, LEFTOVERS):
        remove_table(spark, table, catalog, extra_paths=[tombstones])
    writer = RawTableWriter(settings)
    run = uuid.uuid4().hex
    for number, (op, value) in enumerate(((INSERT, FIRST), (UPDATE, SECOND)), start=1):
        changes = change_rows(spark, op, value, ordering=f"{number:04d}")
        batch = ChangeBatch(changes, rows=len(CANARY_ROWS), has_deletes=False)

        def write(tag: CommitTag, batch: ChangeBatch = batch) -> Any:
            return writer.write(spark, batch, config, table.base_path, tag)

        run_id = f"canary-{run}-{number}"
        write_commit(spark, table, run_id, write, job=settings.job)
    with step(table, COMPACTION):
        actions = [commit.action for commit in completed_commits(spark, table.base_path)]
        if COMPACTION_ACTION not in actions:
            raise CanaryStepError(table, COMPACTION, f"no compaction on the timeline after {actions}")
    lines = [f"canary table {table.catalog_name}: {len(actions)} commits ({', '.join(actions)})"]
    lines += _check_and_remove(spark, table, catalog, extra_paths=[tombstones])
    return lines


def run_dataset_canary(
    spark: SparkSession,
    table: CanaryTable,
    dataset: DatasetConfig,
    save: Callable[[DataFrame, DatasetConfig, str, CommitTag], None],
    catalog: CanaryCatalog,
    *,
    catalog_sync: bool,
) -> list[str]:
    """The dataset job's canary table: one commit through the dataset job's save (``save(rows, dataset, path, tag)``,
    :meth:`etl.datasets.refresh.DatasetRefresher.save`), then the catalog, the read back and the removal.

    Raises:
        CanaryStepError: a step failed (its name in the message).
    """
    with step(table, LEFTOVERS):
        remove_table(spark, table, catalog)
    changes = change_rows(spark, UPDATE, SECOND, ordering="0001")
    rows = changes.select(*COLUMNS, F.lit(False).alias(IS_DELETED))
    run = f"canary-{uuid.uuid4().hex}"

    def write(tag: CommitTag) -> None:
        save(rows, dataset, table.base_path, tag)
        if not catalog_sync:  # locally: the session catalog, as the sandbox registers its tables
            register_path_in_session_catalog(spark, table.database, table.name, table.base_path)

    write_commit(spark, table, run, write, job="datasets")
    return [f"canary table {table.catalog_name}: 1 commit", *_check_and_remove(spark, table, catalog)]


def _check_and_remove(
    spark: SparkSession, table: CanaryTable, catalog: CanaryCatalog, *, extra_paths: Sequence[str] = ()
) -> list[str]:
    """The catalog entry, the read back, the removal (each its own step)."""
    with step(table, CATALOG):
        entries = catalog.entries(table.database, catalog_entries(table.name))
        if not entries:
            raise CanaryStepError(table, CATALOG, "the catalog has no entry for it after the sync")
    with step(table, READ_BACK):
        found = read_rows(spark, table.base_path)
        if found != expected_rows(SECOND):
            raise CanaryStepError(table, READ_BACK, f"read {found}, wrote {expected_rows(SECOND)}")
    with step(table, REMOVE):
        remove_table(spark, table, catalog, extra_paths=extra_paths)
        check_removed(spark, table, catalog)
    return [
        f"canary table {table.catalog_name}: catalog entries {', '.join(entries)}",
        f"canary table {table.catalog_name}: read back {len(found)} rows",
        f"canary table {table.catalog_name}: removed",
    ]


# One function per job kind: where its canary table goes (a database its role already syncs into) and its writer.
SKIPPED = "canary table skipped"


def file_processor_canary(
    spark: SparkSession, args: FileProcessorJobArgs, *, engine: str, table_config: Any, glue: Callable[[], Any]
) -> list[str]:
    """The File Processor's canary table, in the database of the first active
    table of its cadence (by id, from table_config's ``active_by_cadence`` index: a database its role syncs into), with
    the job's write settings. ``table_config``: a boto3 Table; ``glue``: makes a Glue client (catalog sync on).

    Raises:
        CanaryStepError: a step failed.
    """
    from etl.file_processor.run_context import job_write_profile  # noqa: PLC0415 - the File Processor's only
    from odp.config.store import TableConfigStore  # noqa: PLC0415

    store = TableConfigStore(table_config)
    ids = sorted(store.active_ids(args.cadence))
    if not ids:
        return [f"{SKIPPED}: cadence {args.cadence} has no active table, so no database to write it in"]
    unit = f"{args.cadence}_{engine}"  # a cadence on EMR Serverless also has its Glue job: both are canaried
    table = raw_canary_table("file_processor", args.raw_root, store.get(ids[0]).database, unit)
    settings = WriteSettings(job_write_profile(spark, args), args.catalog_sync, args.raw_root)
    return run_raw_canary(spark, table, settings, job_catalog(spark, catalog_sync=args.catalog_sync, glue=glue))


def streaming_canary(
    spark: SparkSession,
    args: StreamingJobArgs,
    tables: Sequence[TableConfig],
    *,
    profile: WriteProfile,
    glue: Callable[[], Any],
) -> list[str]:
    """The streaming job's canary table, in the first database of its streamed
    ``tables``, written as its micro-batches write (job ``streaming``, ``profile``).

    Raises:
        CanaryStepError: a step failed.
    """
    if not tables:
        return [f"{SKIPPED}: the stream has no table"]
    table = raw_canary_table("streaming_job", args.raw_root, min(t.database for t in tables), args.stream)
    settings = WriteSettings(profile, args.catalog_sync, args.raw_root, job="streaming")
    return run_raw_canary(spark, table, settings, job_catalog(spark, catalog_sync=args.catalog_sync, glue=glue))


def dataset_canary(
    spark: SparkSession,
    args: DatasetJobArgs,
    datasets: Sequence[DatasetConfig],
    *,
    engine: str,
    glue: Callable[[], Any],
) -> list[str]:
    """The dataset job's canary table, in the zone and database of the first dataset
    (by database, then name) of the run's engine (``--odp_engine``: an EMR Serverless run's role syncs only the
    databases of the datasets on EMR Serverless), written by the dataset job's own save.

    Raises:
        CanaryStepError: a step failed.
    """
    from etl.datasets.refresh import DatasetRefresher  # noqa: PLC0415 - the dataset job's only
    from etl.hudi.options import HudiProfile  # noqa: PLC0415

    chosen = [d for d in datasets if args.engine in ("any", d.engine.value)]
    if not chosen:
        return [f"{SKIPPED}: no dataset runs on {args.engine}"]
    first = min(chosen, key=lambda d: (d.database, d.name))
    dataset = dataset_canary_config("dataset_job", first.zone, first.database, engine)  # Glue's and EMR's run together
    table = CanaryTable("dataset_job", dataset.database, dataset.name, args.roots.dataset_path(dataset))
    refresher = DatasetRefresher(
        spark, args.roots, {}, {}, catalog_sync=args.catalog_sync, profile=WriteProfile(HudiProfile(args.hudi_profile))
    )

    def save(rows: DataFrame, config: DatasetConfig, path: str, tag: CommitTag) -> None:
        refresher.save(rows, config, path, tag, input_rows=len(CANARY_ROWS))

    catalog = job_catalog(spark, catalog_sync=args.catalog_sync, glue=glue)
    return run_dataset_canary(spark, table, dataset, save, catalog, catalog_sync=args.catalog_sync)

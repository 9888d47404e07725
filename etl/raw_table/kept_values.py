"""Partial updates: changes that leave a column's stored value as it is get that value before the write.

A change keeps a column (:data:`etl.change_frame.KEEP`) when its value is Debezium's unavailable-value
placeholder (an unchanged TOASTed Postgres column) or when its file lacks the column and the table says
``missing_columns: keep``. The value comes from the key's nearest earlier change in event-time order
(``_odp_seq``), in the batch or stored (:func:`etl.change_frame.fill_kept`); only the keys carrying a kept cell
are looked up in the table, and only their kept columns are read. A change left without a value fails its
file, naming the row and the column, before anything is written.

Why not Hudi's own partial updates: Hudi 1.0.2's ``PostgresDebeziumAvroPayload`` (and
``PartialUpdateAvroPayload``) merge only against the stored record when Hudi merges (the COW merge, MOR
compaction or a reader applying the payload), need ``hoodie.record.merge.mode=CUSTOM`` with the payload's
own ordering field instead of ODP's ``_odp_seq`` event-time ordering, leave a change with nothing stored
holding the placeholder (no refusal), and a MOR log holds the placeholder until compaction for readers that
do not run the payload (Athena through the catalog, hudi-rs). Filling before the write keeps every reader
and both table types on one rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import (
    DELETE,
    FILE,
    FILE_ORDER,
    KEEP,
    LATER_STORED,
    OP,
    ROW,
    SEQ,
    UNRESOLVED,
    UPDATE,
    fill_kept,
)
from etl.errors import ChangeFileError, TransformError, UnstorableChangeError
from etl.hudi.schema import HUDI_META_PREFIX
from etl.hudi.timeline import HudiTableState
from etl.raw_table.stored_keys import stored_rows_of_keys
from odp.config.models import SourceFormat, TableConfig, TableMode

_ODP_PREFIX = "_odp_"


def stored_data_columns(config: TableConfig, state: HudiTableState) -> tuple[str, ...]:
    """The stored table's data columns, which files declaring their columns must carry when the table configures
    none (dms and files sources without a transform); () when that does not apply or the table has no schema yet.
    ``state``: the table as its run read it (:func:`etl.hudi.timeline.read_table_state`)."""
    applies = config.format in (SourceFormat.DMS, SourceFormat.FILES) and not config.columns and not config.transform
    if not applies or state.schema is None:
        return ()
    hidden = (HUDI_META_PREFIX, _ODP_PREFIX)
    added = {config.shard_column} if config.shard_from_key else set()  # a merged table's shard: not in the files
    return tuple(f.name for f in state.schema.fields if not f.name.startswith(hidden) and f.name not in added)


def check_kept_columns(config: TableConfig, kept: Sequence[str], before: Sequence[str], after: Sequence[str]) -> None:
    """A table transform must keep, under their names, the columns changes keep stored (``kept``) that its input
    had (``before``: the change frame's columns, ``after``: the transform's); else their stored values could not
    be found and the renamed column would be written NULL.

    Raises:
        TransformError: names the table and the columns.
    """
    lost = [name for name in kept if name in before and name not in after]
    if lost:
        raise TransformError(
            f"{config.table_id}: the table's transform drops or renames column(s) {lost}, which changes of this run "
            "leave as stored (a Debezium unavailable-value placeholder or missing_columns: keep): select them "
            "under their names"
        )


def _stored_changes(
    spark: SparkSession,
    base_path: str,
    config: TableConfig,
    *,
    wanted: DataFrame,
    columns: Sequence[str],
    schema: T.StructType,
    tombstones: DataFrame | None,
) -> DataFrame | None:
    """The stored rows of the keys in ``wanted`` as changes (key, ``_odp_seq``, op, kept columns): the current row,
    or every stored change of a historical table; plus their tombstones as deletes. None: no key is wanted.
    ``schema``: the table's."""
    keys = list(config.primary_key)
    present = [name for name in columns if name in schema.fieldNames()]
    op = F.col(OP) if config.mode is TableMode.HISTORICAL and OP in schema.fieldNames() else F.lit(UPDATE)
    # no broadcast hint: a run of many TOAST updates has many keys; Spark picks the join from their size
    stored = stored_rows_of_keys(spark, base_path, config, wanted, [*keys, SEQ, op.alias(OP), *present])
    if stored is None:
        return None
    if tombstones is not None:
        deleted = tombstones.join(wanted, keys, "left_semi").select(*keys, SEQ, F.lit(DELETE).alias(OP))
        stored = stored.unionByName(deleted, allowMissingColumns=True)
    return stored


def _with_kept_columns(frame: DataFrame, columns: Sequence[str], stored: T.StructType | None) -> DataFrame:
    """Kept columns no change of the batch carries, added as NULL of their stored type (text when not stored)."""
    types = {f.name: f.dataType for f in stored.fields} if stored is not None else {}
    for name in columns:
        if name not in frame.columns:
            frame = frame.withColumn(name, F.lit(None).cast(types.get(name, T.StringType())))
    return frame


def resolve_kept(
    spark: SparkSession,
    changes: DataFrame,
    config: TableConfig,
    base_path: str,
    *,
    columns: Sequence[str],
    read_stored: bool,
    tombstones: DataFrame | None = None,
) -> tuple[DataFrame, DataFrame]:
    """The batch's changes with every kept cell filled, and the cached frame they are read from (the caller
    unpersists it after the write: the stored rows are read once, before anything is written).

    ``columns``: the columns some change keeps; ``read_stored``: whether the table's stored rows count (not for a
    new table or a full load, which replaces them); ``tombstones``: the stored deletes of a current table.

    Raises:
        ChangeFileError: a change that will be written keeps a column no earlier change of its key and no stored
            row supplies (current tables: the key's last change, unless something stored is newer and wins);
            names the file, the row, the column and the key.
    """
    keys = list(config.primary_key)
    schema = spark.read.format("hudi").load(base_path).schema if read_stored else None
    frame = _with_kept_columns(changes, columns, schema)
    stored = None
    if schema is not None:
        wanted = frame.where(F.size(F.coalesce(F.col(KEEP), F.array())) > 0).select(*keys).distinct()
        stored = _stored_changes(
            spark, base_path, config, wanted=wanted, columns=columns, schema=schema, tombstones=tombstones
        )
    filled = frame.transform(fill_kept(keys, columns, stored)).persist()
    try:
        _refuse_unresolved(filled, config)
    except ChangeFileError:
        filled.unpersist()
        raise
    return filled.drop(UNRESOLVED, LATER_STORED), filled


def _refuse_unresolved(filled: DataFrame, config: TableConfig) -> None:
    """Raise for the first change (file order, row) that will be written with a kept cell nothing supplied."""
    keys = list(config.primary_key)
    unresolved = F.size(F.col(UNRESOLVED)) > 0
    if config.mode is TableMode.CURRENT:
        filled = filled.withColumn("_odp_last", F.max(SEQ).over(Window.partitionBy(*keys)) == F.col(SEQ))
        unresolved = unresolved & F.col("_odp_last") & (F.col(OP) != F.lit(DELETE)) & ~F.col(LATER_STORED)
    first = (
        filled.where(unresolved)
        .select(FILE, FILE_ORDER, ROW, F.col(UNRESOLVED)[0].alias("column"), *keys)
        .orderBy(FILE_ORDER, ROW)
        .first()
    )
    if first is None:
        return
    key = ", ".join(f"{name}={first[name]!r}" for name in keys)
    raise UnstorableChangeError(
        first[FILE],
        f"row {first[ROW] + 1}, column {first['column']}: the change leaves the stored value as it is (Debezium's "
        "unavailable-value placeholder, or a column its file lacks with missing_columns: keep), but key "
        f"{key} has no earlier change in this run and no stored row to take it from",
    )

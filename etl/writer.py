"""Apply a batch of changes to a table's Hudi files: one commit per table run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from etl.change_frame import for_current_table, for_historical_table, latest_per_key, surviving_rows
from etl.hudi_options import WriteOperation, hudi_write_options
from etl.schema import align_to_table, table_schema
from etl.timeline import table_exists
from odp.config.models import TableConfig, TableMode


@dataclass(frozen=True)
class WritePlan:
    """What a run writes and how: the rows in table shape and the Hudi operation."""

    rows: DataFrame
    operation: WriteOperation


def plan_write(changes: DataFrame, config: TableConfig, *, has_full_load: bool, exists: bool) -> WritePlan:
    """Pure: the rows and operation of one run.

    current: last change per key; deletes travel as ``_hoodie_is_deleted`` in the same upsert. A first
    full load is a bulk_insert; a full load of an existing table replaces its contents
    (insert_overwrite_table) with what survives of the batch.
    historical: every change, upserted by (key, ``_odp_seq``) so a retried change is not doubled;
    a first full load is a bulk_insert.
    """
    if config.mode is TableMode.HISTORICAL:
        rows = for_historical_table(changes)
        if has_full_load and not exists:
            return WritePlan(rows, WriteOperation.BULK_INSERT)
        return WritePlan(rows, WriteOperation.UPSERT)
    latest = changes.transform(latest_per_key(config.primary_key))
    if has_full_load:
        rows = for_current_table(surviving_rows(latest))
        return WritePlan(rows, WriteOperation.INSERT_OVERWRITE_TABLE if exists else WriteOperation.BULK_INSERT)
    return WritePlan(for_current_table(latest), WriteOperation.UPSERT)


def write_changes(
    spark: SparkSession,
    changes: DataFrame,
    config: TableConfig,
    base_path: str,
    *,
    has_full_load: bool,
    catalog_sync: bool,
    metadata_table: bool,
    file_ids: Sequence[str],
    run_id: str,
) -> WriteOperation:
    """Write one commit to the table at base_path; returns the operation used.

    Raises:
        SchemaEvolutionError: the batch changes a column incompatibly (nothing is written).
    """
    exists = table_exists(spark, base_path)
    plan = plan_write(changes, config, has_full_load=has_full_load, exists=exists)
    rows = align_to_table(plan.rows, table_schema(spark, base_path)) if exists else plan.rows
    options = hudi_write_options(
        config,
        operation=plan.operation,
        catalog_sync=catalog_sync,
        metadata_table=metadata_table,
        file_ids=file_ids,
        run_id=run_id,
    )
    rows.write.format("hudi").options(**options).mode("append").save(base_path)
    return plan.operation


def register_in_session_catalog(spark: SparkSession, config: TableConfig, base_path: str) -> None:
    """Locally (no Glue catalog): make ``SELECT * FROM database.table`` work in this session."""
    database, table = config.database, config.target_table
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    if not spark.catalog.tableExists(f"{database}.{table}"):
        spark.sql(f"CREATE TABLE `{database}`.`{table}` USING hudi LOCATION '{base_path}'")
    else:
        spark.sql(f"REFRESH TABLE `{database}`.`{table}`")

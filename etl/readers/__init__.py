"""Readers: landed files of one table -> the canonical change frame (see :mod:`etl.change_frame`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pyspark.sql import DataFrame, SparkSession

from etl.errors import TableConfigError
from etl.readers.common import SourceFile, TableRead, first_error
from etl.readers.dms import read_dms
from etl.readers.event_horizon import table_horizon
from etl.readers.json_sources import read_debezium, read_dynamodb
from etl.readers.plain_files import read_plain_files
from odp.config.models import SourceFormat, TableConfig

__all__ = ["SourceFile", "TableRead", "first_error", "read_changes", "read_debezium", "read_dms", "read_dynamodb"]

READERS = {  # one reader per source format: (spark, files, TableRead) -> change frame
    SourceFormat.DMS: read_dms,
    SourceFormat.DEBEZIUM: read_debezium,
    SourceFormat.DYNAMODB: read_dynamodb,
    SourceFormat.FILES: read_plain_files,
}


def read_changes(
    spark: SparkSession,
    files: Sequence[SourceFile],
    config: TableConfig,
    *,
    run_start: datetime | None = None,
    stored_columns: Sequence[str] = (),
) -> DataFrame:
    """Read a table's files with the reader of its source format; event times are checked against the
    table's horizon from ``run_start`` (None: now) (:mod:`etl.readers.event_horizon`). ``stored_columns``: the
    stored table's data columns, which a file declaring its columns must carry when the table configures none
    (its ``missing_columns`` decides; dms and files sources).

    Raises:
        ChangeFileError: a file cannot be read or holds an invalid change (names the file and why).
        TableConfigError: the configuration does not allow reading these files.
    """
    if not files:
        raise TableConfigError(f"{config.table_id}: no files to read")
    read = TableRead(config, table_horizon(config, run_start or datetime.now(UTC)), tuple(stored_columns))
    return READERS[config.format](spark, files, read)

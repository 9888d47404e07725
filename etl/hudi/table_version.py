"""The Hudi table version every ODP write keeps, and the one Hudi save of every job.

ODP writes with Hudi 1.0.2 but keeps **table version 6** (the layout of Hudi 0.14 / 0.15), because its
consumers' engines read that one: Athena documents Hudi 0.14.0 and 0.15.0 readers, and a 0.15 reader fails on a
version 8 table at ``TimelineLayoutVersion`` (docs/decisions/001-hudi-table-version-6.md). Every option set of
:func:`etl.hudi.options.hudi_write_options` carries :data:`TABLE_VERSION_OPTIONS`, and :func:`save_hudi`, the one
place a job hands rows to Hudi, refuses options without them and a table stored at another version: Hudi 1.0.2 itself
writes a version 8 table on as version 8 when told to write version 6, without a word.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from etl.errors import EtlError
from etl.jvm import filesystem_path, java_class

TABLE_VERSION = 6
TABLE_VERSION_OPTION = "hoodie.write.table.version"
AUTO_UPGRADE_OPTION = "hoodie.write.auto.upgrade"
TABLE_VERSION_OPTIONS = {TABLE_VERSION_OPTION: str(TABLE_VERSION), AUTO_UPGRADE_OPTION: "false"}
VERSION_PROPERTY = "hoodie.table.version"  # in <base path>/.hoodie/hoodie.properties


class UnsupportedTableVersionError(EtlError):
    """A table is stored at a Hudi table version ODP does not write (a table a Hudi 1.x writer created with its
    defaults: version 8). Nothing is written; the message says how to convert it."""


class TableVersionOptionsMissingError(ValueError):
    """A Hudi write was about to run without the table version options (a programming error, never data)."""


def conversion_advice(label: str, catalog_name: str, *, replay: bool) -> str:
    """Pure: how an operator converts a table to the version ODP writes (``catalog_name``: ``database.table``)."""
    downgrade = (
        f"in a Spark session with Hudi 1.0.2 (a Glue 5.1 job or notebook), CALL downgrade_table(table => "
        f"'{catalog_name}', to_version => 'SIX')"
    )
    rebuild = (
        f"or rebuild it from its files: python -m odp replay {label}"
        if replay
        else "or delete its base path: the next refresh rebuilds it in full"
    )
    return f"Convert it once, {downgrade}; {rebuild}."


def check_table_version(stored: int | None, *, label: str, base_path: str, catalog_name: str, replay: bool) -> None:
    """Pure: refuse a table stored at another version than :data:`TABLE_VERSION` (``stored`` None: no table yet).

    ``replay``: the table can be rebuilt by ``python -m odp replay`` (a raw table; a dataset is rebuilt by a full
    refresh instead).

    Raises:
        UnsupportedTableVersionError: ``stored`` is another version; the message names the table, both versions and
            the conversion (:func:`conversion_advice`).
    """
    if stored is None or stored == TABLE_VERSION:
        return
    raise UnsupportedTableVersionError(
        f"{label}: the Hudi table at {base_path} is table version {stored}; ODP writes table version "
        f"{TABLE_VERSION}, the version Athena's Hudi 0.14 / 0.15 readers read, and never writes a table of another "
        f"version (nothing was written). {conversion_advice(label, catalog_name, replay=replay)}"
    )


def stored_table_version(spark: SparkSession, base_path: str) -> int | None:
    """The table version in ``hoodie.properties`` (one small read, no meta client); None when there is no table.

    Raises:
        UnsupportedTableVersionError: ``hoodie.properties`` has no readable version (not a table ODP can write).
    """
    filesystem, path = filesystem_path(spark, f"{base_path.rstrip('/')}/.hoodie/hoodie.properties")
    if not filesystem.exists(path):
        return None
    properties = java_class(spark, "java.util.Properties")()
    stream = filesystem.open(path)
    try:
        properties.load(stream)
    finally:
        stream.close()
    return parse_table_version(properties.getProperty(VERSION_PROPERTY), base_path)


def parse_table_version(value: str | None, base_path: str) -> int:
    """Pure: the ``hoodie.table.version`` property as a number (Hudi writes it as a plain integer).

    Raises:
        UnsupportedTableVersionError: absent or not a number.
    """
    if value is None or not value.strip().isdigit():
        raise UnsupportedTableVersionError(
            f"{base_path}/.hoodie/hoodie.properties: {VERSION_PROPERTY} is {value!r}, not a table version"
        )
    return int(value)


def require_table_version_options(options: Mapping[str, str]) -> None:
    """Raises:
    TableVersionOptionsMissingError: ``options`` would let Hudi write or upgrade to another table version."""
    missing = {key: value for key, value in TABLE_VERSION_OPTIONS.items() if options.get(key) != value}
    if missing:
        raise TableVersionOptionsMissingError(
            f"a Hudi write without {', '.join(f'{k}={v}' for k, v in missing.items())}: every write's options come "
            "from etl.hudi.options.hudi_write_options"
        )


def save_hudi(rows: DataFrame, base_path: str, options: Mapping[str, str]) -> None:
    """The one Hudi save of every job (append mode: Hudi's own operation decides upsert, insert or overwrite).

    Raises:
        TableVersionOptionsMissingError: ``options`` lack :data:`TABLE_VERSION_OPTIONS`.
        whatever Hudi raises.
    """
    require_table_version_options(options)
    rows.write.format("hudi").options(**options).mode("append").save(base_path)

"""Hudi table version 6 on every write path, and the refusal of a table stored at another version.

The options of every write come from one builder (tests/unit/etl/test_hudi_options.py checks that every combination of
its inputs keeps the table version); this file fails when a module of ``etl/`` hands rows to Hudi anywhere but ``save_hudi`` (which refuses options without it),
and when the refusal of a version 8 table stops naming the table and its conversion.
"""

from __future__ import annotations

import re

import pytest

from etl.hudi.table_version import (
    TableVersionOptionsMissingError,
    UnsupportedTableVersionError,
    check_table_version,
    parse_table_version,
    require_table_version_options,
)
from tests.support.paths import REPO_ROOT

VERSION_6 = {"hoodie.write.table.version": "6", "hoodie.write.auto.upgrade": "false"}


def test_the_one_save_refuses_options_without_the_table_version() -> None:
    require_table_version_options({"a": "b", **VERSION_6})
    with pytest.raises(TableVersionOptionsMissingError, match=r"hoodie.write.table.version=6"):
        require_table_version_options({"hoodie.write.auto.upgrade": "false"})
    with pytest.raises(TableVersionOptionsMissingError, match=r"hoodie.write.auto.upgrade=false"):
        require_table_version_options({"hoodie.write.table.version": "6", "hoodie.write.auto.upgrade": "true"})


# A Hudi write in Python: a DataFrameWriter of format "hudi" (`.write.format("hudi")`, `.write.format('hudi')`).
_HUDI_WRITE = re.compile(r"""\.write\s*\.\s*format\(\s*["']hudi["']""")


def test_only_save_hudi_hands_rows_to_hudi() -> None:
    """Every job's Hudi write goes through etl.hudi.table_version.save_hudi, which checks the options."""
    writers = sorted(
        str(path.relative_to(REPO_ROOT))
        for folder in ("etl", "sandbox", "odp", "lambdas")
        for path in (REPO_ROOT / folder).rglob("*.py")
        if _HUDI_WRITE.search(path.read_text())
    )
    assert writers == ["etl/hudi/table_version.py"]


def test_a_table_at_another_version_is_refused_naming_it_and_its_conversion() -> None:
    check_table_version(
        None, label="erp.sales.orders", base_path="s3://raw/erp/orders", catalog_name="erp.orders", replay=True
    )
    check_table_version(
        6, label="erp.sales.orders", base_path="s3://raw/erp/orders", catalog_name="erp.orders", replay=True
    )
    with pytest.raises(UnsupportedTableVersionError) as refused:
        check_table_version(
            8, label="erp.sales.orders", base_path="s3://raw/erp/orders", catalog_name="erp.orders", replay=True
        )
    assert str(refused.value) == (
        "erp.sales.orders: the Hudi table at s3://raw/erp/orders is table version 8; ODP writes table version 6, the "
        "version Athena's Hudi 0.14 / 0.15 readers read, and never writes a table of another version (nothing was "
        "written). Convert it once, in a Spark session with Hudi 1.0.2 (a Glue 5.1 job or notebook), CALL "
        "downgrade_table(table => 'erp.orders', to_version => 'SIX'); or rebuild it from its files: python -m odp "
        "replay erp.sales.orders."
    )
    with pytest.raises(UnsupportedTableVersionError, match=r"or delete its base path: the next refresh rebuilds it"):
        check_table_version(8, label="trips_clean", base_path="s3://c/t", catalog_name="conformed.t", replay=False)


def test_the_stored_version_is_hudis_property_as_a_number() -> None:
    assert parse_table_version("6", "s3://raw/t") == 6
    assert parse_table_version("8", "s3://raw/t") == 8
    for value in (None, "", "SIX"):
        with pytest.raises(UnsupportedTableVersionError, match=r"s3://raw/t/.hoodie/hoodie.properties"):
            parse_table_version(value, "s3://raw/t")

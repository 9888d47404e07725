"""What the File Manager takes from a table_config item."""

from __future__ import annotations

from typing import Any

import pytest

from lambdas.file_manager.manager import TableInfo, table_info_from_item
from odp.config.models import SourceFormat


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (None, TableInfo(is_active=False, source_format=None)),
        ({}, TableInfo(is_active=False, source_format=None)),
        ({"is_active": True, "format": "debezium"}, TableInfo(is_active=True, source_format=SourceFormat.DEBEZIUM)),
        ({"is_active": False, "format": "dms"}, TableInfo(is_active=False, source_format=SourceFormat.DMS)),
        ({"is_active": "true", "format": "dms"}, TableInfo(is_active=False, source_format=SourceFormat.DMS)),
        ({"is_active": True, "format": "avro"}, TableInfo(is_active=True, source_format=None)),
    ],
)
def test_table_info_from_item(item: dict[str, Any] | None, expected: TableInfo) -> None:
    assert table_info_from_item(item) == expected

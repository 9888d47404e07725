"""Three streamed tables (COW current, MOR current, historical) and a local stream folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl.hudi.options import HudiProfile, WriteProfile
from etl.streaming.batch import StreamTarget
from odp.config.models import SourceFormat, TableConfig, TableMode, TableType
from tests.unit.etl.streaming.records_factory import StreamFolder

STREAM = "shop_changes"


def streamed_table(
    table: str, *, table_type: TableType, mode: TableMode, columns: dict[str, str] | None
) -> TableConfig:
    return TableConfig(
        source="shop_dynamodb",
        schema_name="app",
        table=table,
        format=SourceFormat.DYNAMODB,
        primary_key=("id",),
        partition_by=(),
        table_type=table_type,
        mode=mode,
        cadence=None,
        stream=STREAM,
        database="shop_raw",
        target_table=table,
        is_active=True,
        columns=columns,
    )


CUSTOMERS = streamed_table(
    "customers", table_type=TableType.COPY_ON_WRITE, mode=TableMode.CURRENT, columns={"id": "string", "name": "string"}
)
ORDERS = streamed_table(
    "orders",
    table_type=TableType.MERGE_ON_READ,
    mode=TableMode.CURRENT,
    columns={"id": "string", "amount": "decimal(12,2)", "status": "string"},
)
EVENTS = streamed_table(
    "order_events",
    table_type=TableType.COPY_ON_WRITE,
    mode=TableMode.HISTORICAL,
    columns={"id": "string", "kind": "string"},
)


@pytest.fixture
def target(tmp_path: Path) -> StreamTarget:
    return StreamTarget(
        stream=STREAM,
        tables=(CUSTOMERS, ORDERS, EVENTS),
        raw_root=f"file://{tmp_path / 'raw'}",
        error_root=f"file://{tmp_path / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
    )


@pytest.fixture
def folder(tmp_path: Path) -> StreamFolder:
    return StreamFolder(tmp_path / "kinesis")

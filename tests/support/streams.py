"""Three streamed tables (COW current, MOR current, historical) of one stream."""

from __future__ import annotations

from odp.config.models import SourceFormat, TableConfig, TableMode, TableType

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
        table_type=table_type,
        mode=mode,
        stream=STREAM,
        database="shop_raw",
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

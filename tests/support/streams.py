"""Three streamed tables (COW current, MOR current, historical) of one stream.

With the simple index (no metadata table, about a third of a small commit's CPU: docs/decisions/004): what these
tests guarantee (routing, late and duplicate records, poison records, new columns, exactly once across a restart)
does not depend on the index. A streamed table's default, the record level index, is what the stream demo writes
(tests/e2e/test_stream_demo.py)."""

from __future__ import annotations

from odp.config.models import IndexKind, SourceFormat, TableConfig, TableMode, TableType

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
        index=IndexKind.SIMPLE,
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

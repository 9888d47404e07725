"""Reading whole DynamoDB queries and scans through boto3's paginators, for every layer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal


def table_items(table: Any, operation: Literal["query", "scan"], **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item of a query or scan of a boto3 Table resource, page after page (its client's paginator).

    The resource's client accepts ``Key`` / ``Attr`` conditions and plain values, and returns plain
    values (``Decimal`` numbers), as ``table.query`` / ``table.scan`` do.
    """
    for page in table.meta.client.get_paginator(operation).paginate(TableName=table.name, **kwargs):
        yield from page.get("Items", [])

"""DynamoDB helpers for every layer: whole queries and scans through boto3's paginators, and the
base class of every stored record (one item mapping each way, numbers converted here once)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict

# Stored floats (durations, DPU-seconds) keep millisecond precision.
FLOAT_DIGITS = 3


def table_items(table: Any, operation: Literal["query", "scan"], **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item of a query or scan of a boto3 Table resource, page after page (its client's paginator).

    The resource's client accepts ``Key`` / ``Attr`` conditions and plain values, and returns plain
    values (``Decimal`` numbers), as ``table.query`` / ``table.scan`` do.
    """
    for page in table.meta.client.get_paginator(operation).paginate(TableName=table.name, **kwargs):
        yield from page.get("Items", [])


def to_attribute(value: Any) -> Any:
    """A plain value as a boto3 resource attribute value: floats become ``Decimal`` (3 decimals), tuples lists."""
    if isinstance(value, float):
        return Decimal(str(round(value, FLOAT_DIGITS)))
    if isinstance(value, list | tuple):
        return [to_attribute(inner) for inner in value]
    if isinstance(value, dict):
        return {key: to_attribute(inner) for key, inner in value.items()}
    return value


class StoredRecord(BaseModel):
    """A frozen record stored as one DynamoDB item (boto3 resource form).

    :meth:`to_item` writes every stored field that is set (None and empty lists are left out: an
    absent attribute reads back as the default); :meth:`from_item` validates an item back, ``Decimal``
    numbers included, ignoring attributes that are not fields (keys of indexes, TTL). Fields declared
    with ``Field(exclude=True)`` are the record's in-memory part and are never stored.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    def to_item(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude_none=True)
        return {name: to_attribute(value) for name, value in data.items() if value != []}

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Self:
        """Raises: pydantic.ValidationError: the item is not one of these records."""
        return cls.model_validate(item)

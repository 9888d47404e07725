"""DynamoDB helpers for every layer: whole queries and scans through boto3's paginators, and the
base class of every stored record (one item mapping each way, numbers converted here once)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, ClassVar, Literal, Self

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


def to_attribute(value: Any, digits: int | None = FLOAT_DIGITS) -> Any:
    """A plain value as a boto3 resource attribute value: floats become ``Decimal`` (``digits`` decimals; None:
    exactly as written), tuples lists."""
    if isinstance(value, float):
        return Decimal(str(value if digits is None else round(value, digits)))
    if isinstance(value, list | tuple):
        return [to_attribute(inner, digits) for inner in value]
    if isinstance(value, dict):
        return {key: to_attribute(inner, digits) for key, inner in value.items()}
    return value


MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item size limit, 400 KB: attribute names and values, UTF-8


def item_size(item: dict[str, Any]) -> int:
    """The size DynamoDB counts for a boto3 resource item (its documented rules: "Item sizes and formats"): each
    attribute name's and string's UTF-8 bytes, a number's 1 byte per two significant digits plus 1, 1 byte for a
    boolean or null, 3 bytes for a list or map plus 1 byte per element."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, int | float | Decimal):
        digits = Decimal(str(value)).normalize().as_tuple().digits
        return (len(digits) + 1) // 2 + 1
    if isinstance(value, dict):
        return 3 + sum(len(key.encode()) + _value_size(inner) + 1 for key, inner in value.items())
    if isinstance(value, list | tuple | set):
        return 3 + sum(_value_size(inner) + 1 for inner in value)
    raise TypeError(f"not a DynamoDB attribute value: {type(value).__name__}")


class StoredRecord(BaseModel):
    """A frozen record stored as one DynamoDB item (boto3 resource form).

    :meth:`to_item` writes every stored field that is set (None and empty lists are left out: an
    absent attribute reads back as the default); :meth:`from_item` validates an item back, ``Decimal``
    numbers included, ignoring attributes that are not fields (keys of indexes, TTL). Fields declared
    with ``Field(exclude=True)`` are the record's in-memory part and are never stored.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")
    float_digits: ClassVar[int | None] = FLOAT_DIGITS  # decimals a stored float keeps; None: every one

    def to_item(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude_none=True)
        return {name: to_attribute(value, self.float_digits) for name, value in data.items() if value != []}

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Self:
        """Raises: pydantic.ValidationError: the item is not one of these records."""
        return cls.model_validate(item)

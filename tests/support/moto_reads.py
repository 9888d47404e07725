"""Let moto answer DynamoDB queries by partition while a test only reads: a speed-up, not a fake.

moto 5.2.5 answers every Query by sorting every item of the table and then filtering it (O(table
size) per call, about 2 s a query at 50,000 items), and 50,000 writes through the API take about
30 s. A test at production scale therefore uses two narrow helpers:

- :func:`seed_items` stores items in moto's own table model directly (no HTTP layer).
- :func:`partition_reads` hands moto's unchanged query code only the items of the queried
  partition (of the table or of the index), and its scan code of an index the same list of the index's
  items every time (moto sorts it in place on a scan's first page; every later page finds it sorted,
  one pass instead of a sort of every item): the result, its order, pages, projections and filters
  are computed by moto as always. Any write while it is active fails the test, so the per-partition
  lists can never be stale.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from boto3.dynamodb.types import TypeSerializer
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
from moto.dynamodb.models.table import Table

_SERIALIZER = TypeSerializer()


def moto_table(name: str, region: str) -> Table:
    return dynamodb_backends[DEFAULT_ACCOUNT_ID][region].get_table(name)


def _typed(value: Any) -> dict[str, Any]:
    """The few attribute types tracker items use, typed as DynamoDB does (faster than TypeSerializer)."""
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, str):
        return {"S": value}
    return _SERIALIZER.serialize(value)


def seed_items(name: str, region: str, items: Iterable[dict[str, Any]]) -> int:
    """Store plain items (boto3 resource style) in a moto table; returns how many.

    moto's own ``Item`` is built with its attribute map filled in one step: its per-attribute
    size check recomputes the whole item's size for every attribute (quadratic), which is what
    makes 50,000 puts slow. Items here are a few hundred bytes, far below the 400 KB limit.
    """
    table = moto_table(name, region)
    hash_attr, range_attr = table.hash_key_attr, table.range_key_attr
    # Values repeat across items (table ids, statuses, buckets): share one immutable DynamoType each.
    shared: dict[tuple[type, Any], DynamoType] = {}

    def dynamo(value: Any) -> DynamoType:
        if isinstance(value, list | dict | set):  # not hashable: typed on its own (a table_config's lists, maps)
            return DynamoType(_typed(value))
        key = (type(value), value)
        found = shared.get(key)
        if found is None:
            found = shared[key] = DynamoType(_typed(value))
        return found

    count = 0
    for plain in items:
        typed = {key: dynamo(value) for key, value in plain.items()}
        item = Item.__new__(Item)
        item.hash_key = typed[hash_attr]
        item.range_key = typed[range_attr] if range_attr else None
        item.attrs = LimitedSizeDict(typed)  # dict.update: no per-attribute size recount
        if range_attr:
            table.items[item.hash_key][item.range_key] = item
        else:
            table.items[item.hash_key] = item
        count += 1
    return count


class WriteDuringReadsError(AssertionError):
    """The code under test wrote to DynamoDB inside :func:`partition_reads`."""


@contextmanager
def partition_reads() -> Iterator[None]:
    """Within the block, moto queries look at one partition instead of the whole table; writes fail."""
    original_query = Table.query
    original_index_items = Table.has_idx_items
    partitions: dict[tuple[int, str], dict[Any, list[Any]]] = {}
    index_items: dict[tuple[int, str], list[Any]] = {}

    def partition(table: Table, attribute: str) -> dict[Any, list[Any]]:
        key = (id(table), attribute)
        if key not in partitions:
            grouped: dict[Any, list[Any]] = defaultdict(list)
            # table.items maps hash key -> item, or hash key -> {range key: item}; all_items() would sort.
            stored = table.items.values()
            every = [i for group in stored for i in group.values()] if table.range_key_attr else list(stored)
            for item in every:
                value = item.attrs.get(attribute)
                if value is not None:
                    grouped[value].append(item)
            partitions[key] = grouped
        return partitions[key]

    def query(self: Table, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        conditions = kwargs.get("hash_key_conditions") or []
        if index_name:
            if len(conditions) != 1:
                return original_query(self, hash_key, *args, **kwargs)
            attribute, value = conditions[0]
        else:
            attribute, value = self.hash_key_attr, hash_key
        candidates = list(partition(self, attribute).get(value, []))
        self.all_items = lambda: candidates  # type: ignore[method-assign]
        try:
            return original_query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    def same_index_items(self: Table, index_name: str) -> list[Any]:
        key = (id(self), index_name)
        if key not in index_items:
            index_items[key] = original_index_items(self, index_name)
        return index_items[key]

    def refuse(*_: Any, **__: Any) -> Any:
        raise WriteDuringReadsError("the code under test wrote to DynamoDB during a read-only step")

    writes = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
    saved = {name: getattr(DynamoDBBackend, name) for name in writes}
    Table.query = query  # type: ignore[method-assign]
    Table.has_idx_items = same_index_items  # type: ignore[method-assign]
    for name in writes:
        setattr(DynamoDBBackend, name, refuse)
    try:
        yield
    finally:
        Table.query = original_query  # type: ignore[method-assign]
        Table.has_idx_items = original_index_items  # type: ignore[method-assign]
        for name, method in saved.items():
            setattr(DynamoDBBackend, name, method)

"""The benchmark's DynamoDB emulator (moto) with a transaction whose cost does not grow with the table.

moto 5.2.5's ``transact_write_items`` keeps a rollback copy by deep-copying the **whole table** of every action,
once per action: a transaction of 100 actions into a table of N items copies 100 x N items. DynamoDB's own cost of
a transaction does not depend on the table's size. In the many-files run (1,000 files landed for one table) that
copy was about half of ODP's wave: the tracker writes one transaction per registered file and one per 50 files
moved to history, each copying tables of up to 1,000 items (docs/decisions/010).

:func:`install_item_level_rollback` keeps moto's transaction as it is and changes only what the rollback copies:
the items the transaction's actions name, before it runs, instead of whole tables. A transaction that fails (a
condition, the same item twice, a validation error) restores exactly those items, so every outcome is moto's:
``tests/unit/bench/test_dynamodb_emulator.py`` runs the same transactions on both and compares the tables and
errors. Only the benchmark's ODP process installs it; the tests of ODP itself use moto unchanged.
"""

from __future__ import annotations

import contextlib
import copy
import json
import types
from typing import Any

from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.exceptions import MockValidationException
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table

_MOTO_TRANSACT_WRITE_ITEMS = DynamoDBBackend.transact_write_items


def _deepcopy_except_tables(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """``copy.deepcopy``, except that a whole table is not copied (its rollback copy is made item by item)."""
    return value if isinstance(value, Table) else copy.deepcopy(value, memo)


def _action_key(table: Table, operation: dict[str, Any]) -> dict[str, Any] | None:
    """The key (DynamoDB JSON) an action names: ``Key``, or a Put's item's key attributes (None: malformed)."""
    if "Key" in operation:
        return operation["Key"]
    item = operation.get("Item") or {}
    names = [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
    if not all(name in item for name in names):
        return None
    return {name: item[name] for name in names}


def _items_before(backend: DynamoDBBackend, actions: list[dict[str, Any]]) -> list[tuple[str, dict, dict | None]]:
    """Each item the actions name, as it is before the transaction: (table, key, attributes or None if absent)."""
    before: dict[tuple[str, str], tuple[str, dict, dict | None]] = {}
    for action in actions:
        _, operation = next(iter(action.items()))
        name = operation.get("TableName")
        table = backend.tables.get(name) if isinstance(name, str) else None
        key = _action_key(table, operation) if table is not None else None
        if key is None or (name, json.dumps(key, sort_keys=True)) in before:
            continue
        # a malformed key: moto refuses the action before it changes anything, so there is nothing to keep
        with contextlib.suppress(MockValidationException):
            current = backend.get_item(name, key)
            attributes = copy.deepcopy(current.to_json()["Attributes"]) if current is not None else None
            before[(name, json.dumps(key, sort_keys=True))] = (name, key, attributes)
    return list(before.values())


def _transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    before = _items_before(self, transact_items)
    try:
        return _MOTO_TRANSACT_WRITE_ITEMS(self, transact_items)
    except Exception:
        for name, key, attributes in before:
            if attributes is not None:
                self.put_item(name, attributes)
            elif self.get_item(name, key) is not None:
                self.delete_item(name, key)
        raise


def install_item_level_rollback() -> None:
    """Make moto's transactions copy the items they name for their rollback, not whole tables (idempotent)."""
    dynamodb_models.copy = types.SimpleNamespace(deepcopy=_deepcopy_except_tables)  # type: ignore[assignment]
    DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]


def uninstall_item_level_rollback() -> None:
    """moto as shipped again (for tests)."""
    dynamodb_models.copy = copy  # type: ignore[assignment]
    DynamoDBBackend.transact_write_items = _MOTO_TRANSACT_WRITE_ITEMS  # type: ignore[method-assign]

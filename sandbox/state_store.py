"""Sandbox state kept in the lake folder between runs: the DynamoDB tables and the announced objects.

moto keeps everything in memory, so each ``run`` restores the tracker tables from JSON files in
``<lake>/_sandbox/`` before it starts, and :class:`WriteThrough` writes a table's file again after
every write to it (DynamoDB is durable once a write returns: a run killed at any point loses nothing
it had written). Items are stored in DynamoDB's typed JSON form (``{"S": ...}``, ``{"N": ...}``),
so numbers and sets round-trip exactly.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from sandbox.aws_calls import as_the_sandbox

STATE_DIR = "_sandbox"
DYNAMODB_DIR = "dynamodb"
ANNOUNCED_FILE = "announced_objects.json"
_WRITE_BATCH = 25
WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
_TRANSACTION_WRITES = ("Put", "Update", "Delete")


class StateFileError(ValueError):
    """A state file in the lake folder is not what the sandbox wrote; the message names it."""


def state_dir(lake: Path) -> Path:
    return lake / STATE_DIR


def _write_json(path: Path, value: Any) -> None:
    """Write atomically, so an interrupted run never leaves half a file. Compact, without ``indent``: Python's json
    encodes an indented document in pure Python, four times slower than its C encoder, and a table's file is written
    again after every write to it (``python -m json.tool`` shows one indented)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(value, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    os.replace(temporary, path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise StateFileError(f"{path} is not valid JSON ({error}); delete the lake folder to start afresh") from error


def scan_typed(client: Any, table_name: str) -> list[dict[str, Any]]:
    """Every item of the table in DynamoDB's typed JSON form (``client`` is a low-level client).

    The sandbox's DynamoDB is moto: the items are read from moto's table directly when ``client``'s region of
    exactly one moto account has the table (the same items, in the order a Scan returns them, without moto
    serializing each item into a response and botocore parsing it back: that made saving a table after
    every write quadratic in its size); else a paginated Scan.
    """
    table = _moto_table(client.meta.region_name, table_name)
    if table is not None:
        return moto_items(table)
    return scan_api(client, table_name)


# A save copies a table while other threads may write it (a File Processor run writes several tables at once): moto
# changes an item's attributes in place, so a copy can meet "dictionary changed size during iteration". Found by
# python -m bench.sandbox_fleet: 1 table of 1,000 failed on it, from inside its own tracker write.
SNAPSHOT_ATTEMPTS = 50


def moto_items(table: Any) -> list[dict[str, Any]]:
    """Every item of a moto table in DynamoDB's typed JSON form, copied again when a concurrent write changed the
    items during the copy (a write takes microseconds; the copy only needs a moment without one).

    Raises:
        RuntimeError: the copy met a concurrent change on every attempt, or another RuntimeError.
    """
    for attempt in range(1, SNAPSHOT_ATTEMPTS + 1):
        try:
            return [item.to_json()["Attributes"] for item in table.all_items()]
        except RuntimeError as error:
            if "changed size during iteration" not in str(error) or attempt == SNAPSHOT_ATTEMPTS:
                raise
            time.sleep(0.001 * attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def scan_api(client: Any, table_name: str) -> list[dict[str, Any]]:
    """Every item of the table through the DynamoDB API (a paginated Scan)."""
    return [item for page in client.get_paginator("scan").paginate(TableName=table_name) for item in page["Items"]]


def _moto_table(region: str, table_name: str) -> Any:
    """moto's in-memory table of that name in ``region``, if exactly one moto account has it; else None."""
    try:
        from moto.dynamodb.models import dynamodb_backends
    except ImportError:  # pragma: no cover - moto is a dependency of the sandbox
        return None
    found = []
    for account_backends in list(dict.values(dynamodb_backends)):
        backend = dict.get(account_backends, region)  # dict's own get: never creates a backend
        table = None if backend is None else backend.tables.get(table_name)
        if table is not None:
            found.append(table)
    return found[0] if len(found) == 1 else None


def dump_tables(client: Any, table_names: list[str], lake: Path) -> None:
    """Write every item of these tables to ``<lake>/_sandbox/dynamodb/<table>.json``."""
    for name in table_names:
        _write_json(state_dir(lake) / DYNAMODB_DIR / f"{name}.json", scan_typed(client, name))


def restore_tables(client: Any, table_names: list[str], lake: Path) -> int:
    """Put the saved items back into (empty, freshly created) tables; returns how many.

    Raises:
        StateFileError: a state file is not a JSON list of items.
    """
    restored = 0
    for name in table_names:
        path = state_dir(lake) / DYNAMODB_DIR / f"{name}.json"
        if not path.is_file():
            continue
        items = _read_json(path)
        if not isinstance(items, list):
            raise StateFileError(f"{path} must hold a JSON list of DynamoDB items")
        for start in range(0, len(items), _WRITE_BATCH):
            requests = [{"PutRequest": {"Item": item}} for item in items[start : start + _WRITE_BATCH]]
            pending: dict[str, Any] = {name: requests}
            while pending:
                pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        restored += len(items)
    return restored


def load_announced(lake: Path) -> dict[str, str]:
    """key -> ETag of every staging object already announced to the File Manager."""
    path = state_dir(lake) / ANNOUNCED_FILE
    if not path.is_file():
        return {}
    value = _read_json(path)
    if not isinstance(value, dict):
        raise StateFileError(f"{path} must hold a JSON object of key -> etag")
    return {str(k): str(v) for k, v in value.items()}


def save_announced(lake: Path, announced: dict[str, str]) -> None:
    _write_json(state_dir(lake) / ANNOUNCED_FILE, announced)


def written_tables(operation: str, params: dict[str, Any]) -> list[str]:
    """Pure: the tables a DynamoDB API call writes, in the order its actions name them (none for a read).

    A transaction lists its writes in order; ODP's own (FileTracker.mark_processed) puts the history
    item before it deletes the tracker item, so saving the tables in this order can leave a file in
    both (the next run reconciles it) but never in neither.
    """
    if operation not in WRITE_OPERATIONS:
        return []
    if operation == "BatchWriteItem":
        return list(params.get("RequestItems", {}))
    if operation == "TransactWriteItems":
        names: list[str] = []
        for action in params.get("TransactItems", []):
            for kind in _TRANSACTION_WRITES:
                name = action.get(kind, {}).get("TableName")
                if name is not None and name not in names:
                    names.append(name)
        return names
    return [params["TableName"]] if "TableName" in params else []


class WriteThrough:
    """Saves a sandbox table to the lake folder after every write to it: DynamoDB's durability, locally.

    Registered on a boto3 session's event system (``register``); every client made from that session
    afterwards (the Lambda handlers', the job's) saves what it wrote before its call returns.
    """

    def __init__(self, lake: Path, table_names: Collection[str]) -> None:
        self._lake = lake
        self._tables = frozenset(table_names)
        self._lock = threading.Lock()
        self._client: Any = None

    def register(self, session: Any) -> None:
        """``session``: a boto3 Session; its clients made from now on save their writes."""
        session.events.register("before-parameter-build.dynamodb", self._remember)
        session.events.register("after-call.dynamodb", self._save)
        self._client = session.client("dynamodb")

    def _remember(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        context["odp_written_tables"] = [t for t in written_tables(model.name, params) if t in self._tables]

    def _save(self, context: dict[str, Any], **_: Any) -> None:
        names = context.get("odp_written_tables") or []
        if not names:
            return
        # The sandbox's own reads: not a call of the principal whose write triggered the save.
        with self._lock, as_the_sandbox():
            for name in names:
                _write_json(state_dir(self._lake) / DYNAMODB_DIR / f"{name}.json", scan_typed(self._client, name))

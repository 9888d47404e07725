"""Sandbox state kept in the lake folder between runs: the DynamoDB tables and the announced objects.

moto keeps everything in memory, so each ``run`` restores the tracker tables from JSON files in
``<lake>/_sandbox/`` before it starts and writes them back when it ends. Items are stored in
DynamoDB's typed JSON form (``{"S": ...}``, ``{"N": ...}``), so numbers and sets round-trip exactly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

STATE_DIR = "_sandbox"
DYNAMODB_DIR = "dynamodb"
ANNOUNCED_FILE = "announced_objects.json"
_WRITE_BATCH = 25


class StateFileError(ValueError):
    """A state file in the lake folder is not what the sandbox wrote; the message names it."""


def state_dir(lake: Path) -> Path:
    return lake / STATE_DIR


def _write_json(path: Path, value: Any) -> None:
    """Write atomically, so an interrupted run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(value, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise StateFileError(f"{path} is not valid JSON ({error}); delete the lake folder to start afresh") from error


def scan_typed(client: Any, table_name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table_name}
    while True:
        page = client.scan(**kwargs)
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


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

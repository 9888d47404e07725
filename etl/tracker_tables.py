"""Tracker tables as odp.tracker.FileTracker needs them.

FileTracker sends pre-serialised items ({"S": ...}) through ``table.meta.client``. A boto3 *resource*
table's client serialises again (its parameter transformation), which DynamoDB and moto reject
(``unhashable type: 'dict'`` in moto). This view keeps the resource table for queries and exposes a
plain low-level client as ``meta.client``; with it FileTracker works with either kind of input.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import boto3


class LowLevelClientTable:
    """A resource Table whose ``meta.client`` is a plain (non-transforming) DynamoDB client."""

    def __init__(self, table: Any) -> None:
        self._table = table
        resource_client = table.meta.client
        client = boto3.client(
            "dynamodb",
            region_name=resource_client.meta.region_name,
            endpoint_url=resource_client.meta.endpoint_url,
        )
        self.meta = SimpleNamespace(client=client)

    @property
    def name(self) -> str:
        return self._table.name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._table, attribute)

"""Key schemas and indexes of every tracker table (the trackers, the config tables and the dataset
run history), in one place.

The CDK tracking construct declares the same keys and indexes (a test compares them), and tests and
the sandbox create their moto tables from :func:`create_tables`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odp.config.items import ACTIVE_CADENCE_ATTRIBUTE, TABLE_CONFIG_CADENCE_INDEX
from odp.naming import DATASET_CONFIG, DATASET_RUN_HISTORY, TrackerTableNames
from odp.tracker.items import PENDING_ATTRIBUTE, PENDING_INDEX


def _key(partition: str, sort: str | None = None) -> list[dict[str, str]]:
    schema = [{"AttributeName": partition, "KeyType": "HASH"}]
    if sort:
        schema.append({"AttributeName": sort, "KeyType": "RANGE"})
    return schema


# logical name -> (key schema, attribute types, global secondary indexes)
TABLE_DEFINITIONS: dict[str, dict[str, Any]] = {
    "file_tracker": {
        "KeySchema": _key("table_id", "file_id"),
        "Attributes": {"table_id": "S", "file_id": "S", PENDING_ATTRIBUTE: "S", "landed_at": "S"},
        "Indexes": {PENDING_INDEX: _key(PENDING_ATTRIBUTE, "landed_at")},
        "TimeToLive": None,
    },
    "file_tracker_history": {
        "KeySchema": _key("table_id", "file_id"),
        "Attributes": {"table_id": "S", "file_id": "S"},
        "Indexes": {},
        "TimeToLive": "expires_at",
    },
    "processing_tracker": {
        "KeySchema": _key("table_id"),
        "Attributes": {"table_id": "S"},
        "Indexes": {},
        "TimeToLive": None,
    },
    "processing_tracker_history": {
        "KeySchema": _key("table_id", "run_at"),
        "Attributes": {"table_id": "S", "run_at": "S"},
        "Indexes": {},
        "TimeToLive": "expires_at",
    },
    "batch_config": {
        "KeySchema": _key("cadence"),
        "Attributes": {"cadence": "S"},
        "Indexes": {},
        "TimeToLive": None,
    },
    "table_config": {
        "KeySchema": _key("table_id"),
        "Attributes": {"table_id": "S", ACTIVE_CADENCE_ATTRIBUTE: "S"},
        "Indexes": {TABLE_CONFIG_CADENCE_INDEX: _key(ACTIVE_CADENCE_ATTRIBUTE, "table_id")},
        "TimeToLive": None,
    },
    # The datasets' configuration (odp/config/items.py DatasetConfigRecord): one item per dataset, its SQL included.
    DATASET_CONFIG: {
        "KeySchema": _key("dataset"),
        "Attributes": {"dataset": "S"},
        "Indexes": {},
        "TimeToLive": None,
    },
    # The dataset job's run history (odp/tracker/dataset_history.py): one item per dataset run.
    DATASET_RUN_HISTORY: {
        "KeySchema": _key("dataset", "run_at"),
        "Attributes": {"dataset": "S", "run_at": "S"},
        "Indexes": {},
        "TimeToLive": "expires_at",
    },
}


def create_tables(dynamodb_client: Any, names: TrackerTableNames | Mapping[str, str]) -> None:
    """Create the named tables (on-demand) if they do not exist: for moto in tests and the sandbox.

    ``names``: the six of :class:`TrackerTableNames`, or logical -> physical names of any tables
    declared here (:func:`odp.naming.tracker_table_names` names all of them).
    """
    wanted = names.as_dict() if isinstance(names, TrackerTableNames) else dict(names)
    existing = set(dynamodb_client.list_tables().get("TableNames", []))
    for logical, physical in wanted.items():
        definition = TABLE_DEFINITIONS[logical]
        if physical in existing:
            continue
        kwargs: dict[str, Any] = {
            "TableName": physical,
            "KeySchema": definition["KeySchema"],
            "AttributeDefinitions": [
                {"AttributeName": name, "AttributeType": kind} for name, kind in definition["Attributes"].items()
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if definition["Indexes"]:
            kwargs["GlobalSecondaryIndexes"] = [
                {"IndexName": index, "KeySchema": key, "Projection": {"ProjectionType": "ALL"}}
                for index, key in definition["Indexes"].items()
            ]
        dynamodb_client.create_table(**kwargs)
        if definition["TimeToLive"]:
            dynamodb_client.update_time_to_live(
                TableName=physical,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": definition["TimeToLive"]},
            )

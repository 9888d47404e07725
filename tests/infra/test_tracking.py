"""Tracking: the synthesized tables carry exactly the keys and indexes of odp/tracker/schema.py."""

from __future__ import annotations

import pytest

from odp.naming import DATASET_RUN_HISTORY, TrackerTableNames, tracker_table_names
from odp.tracker.dataset_history import dataset_history_table_name
from odp.tracker.schema import TABLE_DEFINITIONS


def _tables(synthesized, env: str) -> dict[str, dict]:
    tables = synthesized.resources(synthesized.data_lakes[env], "AWS::DynamoDB::GlobalTable").values()
    return {table["Properties"]["TableName"]: table["Properties"] for table in tables}


@pytest.mark.parametrize("env", ["dev", "test", "prod"])
def test_key_schemas_indexes_and_ttl_match_the_schema_module(synthesized, env) -> None:
    tables = _tables(synthesized, env)
    names = tracker_table_names(env)
    assert set(tables) == set(names.values())
    assert set(names) == set(TABLE_DEFINITIONS)
    assert names[DATASET_RUN_HISTORY] == dataset_history_table_name(env) == f"odp-{env}-dataset-run-history"
    for logical, definition in TABLE_DEFINITIONS.items():
        props = tables[names[logical]]
        assert props["KeySchema"] == definition["KeySchema"]
        indexes = {gsi["IndexName"]: gsi["KeySchema"] for gsi in props.get("GlobalSecondaryIndexes", [])}
        assert indexes == definition["Indexes"]
        declared = {a["AttributeName"]: a["AttributeType"] for a in props["AttributeDefinitions"]}
        used = {e["AttributeName"] for key in [definition["KeySchema"], *definition["Indexes"].values()] for e in key}
        assert declared == {name: definition["Attributes"][name] for name in used}
        ttl = props.get("TimeToLiveSpecification")
        if definition["TimeToLive"]:
            assert ttl == {"AttributeName": definition["TimeToLive"], "Enabled": True}
        else:
            assert ttl is None


def test_the_dataset_run_history_keeps_the_logical_id_it_was_deployed_with(synthesized) -> None:
    """Declared by infrastructure/jobs/datasets.py (Datasets/RunHistory) before Tracking: same id, no replacement."""
    tables = synthesized.resources(synthesized.data_lakes["dev"], "AWS::DynamoDB::GlobalTable")
    [logical_id] = [
        key for key, table in tables.items() if table["Properties"]["TableName"] == "odp-dev-dataset-run-history"
    ]
    assert logical_id == "DatasetsRunHistoryE8DE7ACB"


def test_pending_files_are_queried_by_table_never_scanned(synthesized) -> None:
    tracker = _tables(synthesized, "dev")[TrackerTableNames.for_environment("dev").file_tracker]
    index = tracker["GlobalSecondaryIndexes"][0]
    assert index["IndexName"] == "pending_by_table"
    assert index["KeySchema"][0]["AttributeName"] == "pending_table_id"


@pytest.mark.parametrize("env", ["dev", "test", "prod"])
def test_tables_are_on_demand_with_pitr_and_kms(synthesized, env, config) -> None:
    settings = config.environments.environments[env]
    for props in _tables(synthesized, env).values():
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["SSESpecification"] == {"SSEEnabled": True, "SSEType": "KMS"}
        regions = {replica["Region"]: replica for replica in props["Replicas"]}
        expected = {settings.region} | ({settings.dr_region} if settings.dr_region else set())
        assert set(regions) == expected
        for replica in regions.values():
            assert replica["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
            assert "KMSMasterKeyId" in replica["SSESpecification"]
            if settings.removal_policy == "retain":
                # RetainExceptOnCreate: a rolled-back first create must delete its tables, so the template leaves
                # deletion protection to the operator, after the first deploy (docs/decisions/028).
                assert "DeletionProtectionEnabled" not in replica
            else:
                assert replica.get("DeletionProtectionEnabled", False) is False


def test_prod_replicas_use_the_dr_region_key(synthesized, config) -> None:
    prod = config.environments.environments["prod"]
    for props in _tables(synthesized, "prod").values():
        replica = next(r for r in props["Replicas"] if r["Region"] == prod.dr_region)
        key = replica["SSESpecification"]["KMSMasterKeyId"]
        assert f":kms:{prod.dr_region}:{prod.account}:alias/odp-prod-state-replica" in str(key)

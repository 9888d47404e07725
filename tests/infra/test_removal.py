"""A failed first create can be retried: in the synthesized stacks of dev, test and prod nothing is kept with a plain
``DeletionPolicy: Retain`` (a rolled-back create would leave it behind, and a named one fails the next create on
"already exists"). ``retain`` environments keep their data with RetainExceptOnCreate (docs/decisions/028)."""

from __future__ import annotations

from typing import Any

import pytest

from odp.config.models import RemovalPolicy as RemovalPolicyConfig

RETAIN_EXCEPT_ON_CREATE = "RetainExceptOnCreate"
# What holds an environment's data or names: each must be kept when a retain environment's stack goes.
KEPT_TYPES = (
    "AWS::S3::Bucket",
    "AWS::DynamoDB::GlobalTable",
    "AWS::KMS::Key",
    "AWS::Logs::LogGroup",
    "AWS::SQS::Queue",
    "AWS::Glue::Database",  # the tables the jobs registered in it go with it
)


def _stage_templates(synthesized, env: str) -> dict[str, dict[str, Any]]:
    """The templates the environment's stage deploys (DataLake, and ReplicaKey where a DR region is set)."""
    stage = env.title()
    found = {path: t for path, t in synthesized.templates.items() if path.split("/")[-2:-1] == [stage]}
    assert any(path.endswith("/DataLake") for path in found), sorted(synthesized.templates)
    return found


@pytest.mark.parametrize("env", ["dev", "test", "prod"])
def test_no_resource_is_kept_by_a_rolled_back_create(synthesized, env: str) -> None:
    retained = [
        f"{path} {logical} ({resource['Type']})"
        for path, template in _stage_templates(synthesized, env).items()
        for logical, resource in template["Resources"].items()
        if resource.get("DeletionPolicy") == "Retain"
    ]
    assert retained == []


@pytest.mark.parametrize("env", ["test", "prod"])
def test_retain_environments_keep_their_data_except_on_create(synthesized, config, env: str) -> None:
    assert config.environments.environments[env].removal_policy is RemovalPolicyConfig.RETAIN
    kept: dict[str, list[str]] = {kind: [] for kind in KEPT_TYPES}
    for template in _stage_templates(synthesized, env).values():
        for logical, resource in template["Resources"].items():
            if resource["Type"] in kept:
                assert resource.get("DeletionPolicy") == RETAIN_EXCEPT_ON_CREATE, (
                    logical,
                    resource.get("DeletionPolicy"),
                )
                kept[resource["Type"]].append(logical)
    assert all(kept.values()), kept  # each kind is there: the check above did not pass on nothing


def test_prod_replica_key_is_kept_except_on_create(synthesized) -> None:
    (template,) = [t for path, t in synthesized.templates.items() if path.endswith("Prod/ReplicaKey")]
    keys = [r for r in template["Resources"].values() if r["Type"] == "AWS::KMS::Key"]
    assert [k["DeletionPolicy"] for k in keys] == [RETAIN_EXCEPT_ON_CREATE]

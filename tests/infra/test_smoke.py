"""The post-deploy smoke check against emulated DynamoDB and Step Functions."""

from __future__ import annotations

import json

import boto3

from odp.config.manager import load_into_dynamodb
from odp.naming import TrackerTableNames, state_machine_name
from odp.operations.smoke import check_environment

ACCOUNT = "123456789012"  # moto's account


def test_smoke_check_lists_what_is_missing_then_passes(aws, tracker_tables, repo_root) -> None:
    from odp.config.loader import load_config

    config = load_config(repo_root / "config")
    env = "test"  # the tracker_tables fixture creates the test environment's tables
    names = TrackerTableNames.for_environment(env)
    dynamodb = boto3.client("dynamodb", region_name="eu-west-1")
    stepfunctions = boto3.client("stepfunctions", region_name="eu-west-1")

    failures = check_environment(config, env, dynamodb, stepfunctions, ACCOUNT)
    assert any("state machine" in f for f in failures)
    assert any("batch_config has no item" in f for f in failures)

    iam = boto3.client("iam", region_name="eu-west-1")
    role = iam.create_role(RoleName="sfn", AssumeRolePolicyDocument=json.dumps({"Statement": []}))["Role"]["Arn"]
    for cadence in config.cadences.cadences:
        stepfunctions.create_state_machine(
            name=state_machine_name(env, cadence),
            definition=json.dumps({"StartAt": "x", "States": {"x": {"Type": "Succeed"}}}),
            roleArn=role,
        )
    resource = boto3.resource("dynamodb", region_name="eu-west-1")
    load_into_dynamodb(config, env, resource.Table(names.table_config), resource.Table(names.batch_config))
    assert check_environment(config, env, dynamodb, stepfunctions, ACCOUNT) == []

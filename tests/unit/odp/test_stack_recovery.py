"""The pipeline's pre-stage step: a stack left in ROLLBACK_COMPLETE by a failed first create is deleted, nothing else.

CloudFormation and STS are botocore Stubbers: each test lists the calls AWS would receive, in order, with their
parameters, and fails on any other call.
"""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from odp.operations.stack_recovery import (
    RecoveryOutcome,
    StackRecoveryError,
    StackTarget,
    cloudformation_client,
    main,
    recover,
    session_policy,
)

STACK = "Prod-DataLake"
STACK_ID = "arn:aws:cloudformation:eu-west-1:333333333333:stack/Prod-DataLake/0f1e2d3c-aaaa-bbbb-cccc-000000000001"
ROLE = "arn:aws:iam::333333333333:role/cdk-hnb659fds-deploy-role-333333333333-eu-west-1"
TARGET = StackTarget(STACK, "333333333333", "eu-west-1", ROLE)


def _stack(status: str) -> dict:
    return {"Stacks": [{"StackName": STACK, "StackId": STACK_ID, "StackStatus": status, "CreationTime": "2026-11-29"}]}


@pytest.fixture
def cloudformation():
    client = boto3.client("cloudformation", region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_a_rolled_back_first_create_is_deleted_by_its_id_and_waited_for(cloudformation) -> None:
    client, stubber = cloudformation
    stubber.add_response("describe_stacks", _stack("ROLLBACK_COMPLETE"), {"StackName": STACK})
    stubber.add_response("delete_stack", {}, {"StackName": STACK_ID})
    stubber.add_response("describe_stacks", _stack("DELETE_IN_PROGRESS"), {"StackName": STACK_ID})
    stubber.add_response("describe_stacks", _stack("DELETE_COMPLETE"), {"StackName": STACK_ID})
    assert recover(client, STACK, poll_seconds=0) is RecoveryOutcome.DELETED


@pytest.mark.parametrize(
    "status", ["CREATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "UPDATE_COMPLETE", "DELETE_FAILED", "CREATE_IN_PROGRESS"]
)
def test_any_other_status_is_left_alone(cloudformation, status: str) -> None:
    client, stubber = cloudformation
    stubber.add_response("describe_stacks", _stack(status), {"StackName": STACK})
    assert recover(client, STACK) is RecoveryOutcome.UNCHANGED  # no delete_stack: the stubber refuses any unlisted call


def test_a_stack_that_does_not_exist_is_nothing_to_do(cloudformation) -> None:
    client, stubber = cloudformation
    stubber.add_client_error(
        "describe_stacks",
        "ValidationError",
        f"Stack with id {STACK} does not exist",
        expected_params={"StackName": STACK},
    )
    assert recover(client, STACK) is RecoveryOutcome.ABSENT


def test_a_refused_describe_is_not_mistaken_for_an_absent_stack(cloudformation) -> None:
    from botocore.exceptions import ClientError

    client, stubber = cloudformation
    stubber.add_client_error("describe_stacks", "AccessDenied", "not authorized", expected_params={"StackName": STACK})
    with pytest.raises(ClientError, match="AccessDenied"):
        recover(client, STACK)


def test_a_failed_rollback_stops_with_what_to_do(cloudformation) -> None:
    client, stubber = cloudformation
    stubber.add_response("describe_stacks", _stack("ROLLBACK_FAILED"), {"StackName": STACK})
    with pytest.raises(StackRecoveryError) as raised:
        recover(client, STACK)
    assert str(raised.value).startswith(f"stack {STACK} is ROLLBACK_FAILED: the rollback of its failed first create")
    assert f"aws cloudformation delete-stack --stack-name {STACK}" in str(raised.value)


def test_the_session_may_delete_only_this_stack() -> None:
    assert session_policy(TARGET) == {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "FindTheStack", "Effect": "Allow", "Action": "cloudformation:DescribeStacks", "Resource": "*"},
            {
                "Sid": "DeleteOnlyThisStack",
                "Effect": "Allow",
                "Action": "cloudformation:DeleteStack",
                "Resource": "arn:aws:cloudformation:eu-west-1:333333333333:stack/Prod-DataLake/*",
            },
        ],
    }


def test_the_role_is_assumed_with_the_session_policy() -> None:
    sts = boto3.client("sts", region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s")
    credentials = {
        "AccessKeyId": "ASIAEXAMPLEEXAMPLE01",
        "SecretAccessKey": "secret",
        "SessionToken": "token",
        "Expiration": "2026-11-29T10:00:00Z",
    }
    with Stubber(sts) as stubber:
        stubber.add_response(
            "assume_role",
            {"Credentials": credentials},
            {
                "RoleArn": ROLE,
                "RoleSessionName": "odp-recover-Prod-DataLake",
                "Policy": json.dumps(session_policy(TARGET)),
                "DurationSeconds": 900,
            },
        )
        client = cloudformation_client(TARGET, sts)
        stubber.assert_no_pending_responses()
    assert client.meta.region_name == "eu-west-1"


def test_the_command_refuses_a_role_arn_without_an_account() -> None:
    with pytest.raises(ValueError, match="--role-arn 'cdk-deploy-role': expected arn:<partition>:iam::<account>"):
        main(["--stack", STACK, "--region", "eu-west-1", "--role-arn", "cdk-deploy-role"])

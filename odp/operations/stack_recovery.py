"""Make a failed first create retryable: delete a stack CloudFormation left in ``ROLLBACK_COMPLETE``.

A stack whose first create fails rolls back to ``ROLLBACK_COMPLETE``: it holds no resources (every retained one is
``RetainExceptOnCreate``, so the rollback deleted it too: docs/decisions/028) but CloudFormation can neither update it
nor create it again until it is deleted. The pipeline runs this before each stage (``infrastructure/pipeline.py``
``recovery_commands``); by hand::

    python -m odp.operations.stack_recovery --stack Dev-DataLake --region eu-west-1 \\
        --role-arn arn:aws:iam::<account>:role/cdk-hnb659fds-deploy-role-<account>-eu-west-1

It assumes ``--role-arn`` (the target's CDK deploy role, which the deployment account is trusted to assume) with a
session policy that allows ``cloudformation:DeleteStack`` on that one stack and ``cloudformation:DescribeStacks``, and
nothing else (:func:`session_policy`), whatever else the role may do. Only ``ROLLBACK_COMPLETE`` is deleted: that status
exists only after a failed *create*, so nothing that ever held data is touched. ``ROLLBACK_FAILED`` (the rollback
could not delete something) stops with what to do; any other status is left as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import boto3
from botocore.exceptions import ClientError

ROLLED_BACK_CREATE = "ROLLBACK_COMPLETE"
# The rollback of a failed create could not delete a resource (a bucket that received objects, a table with deletion
# protection): deleting the stack now would retain it and the next create would fail on its name.
FAILED_ROLLBACK = "ROLLBACK_FAILED"
SESSION_SECONDS = 900  # the minimum: describe and delete an empty stack
DELETE_POLL_SECONDS = 15
DELETE_POLLS = 120  # 30 minutes: deleting a stack without resources takes seconds


class StackRecoveryError(Exception):
    """The stack is in a state this step must not repair by itself; the message says what to do."""


class RecoveryOutcome(StrEnum):
    ABSENT = "absent"  # nothing to do: the next deployment creates it
    DELETED = "deleted"  # was ROLLBACK_COMPLETE; the next deployment creates it again
    UNCHANGED = "unchanged"  # any status the deployment itself handles (CREATE_COMPLETE, UPDATE_ROLLBACK_COMPLETE, ...)


@dataclass(frozen=True)
class StackTarget:
    """One stack of a stage, where it lives, and the role that may delete it."""

    stack_name: str
    account: str
    region: str
    role_arn: str
    partition: str = "aws"

    @property
    def stack_arn(self) -> str:
        """Every stack of this name (a deleted and re-created stack gets a new id after the name)."""
        return f"arn:{self.partition}:cloudformation:{self.region}:{self.account}:stack/{self.stack_name}/*"


def session_policy(target: StackTarget) -> dict[str, Any]:
    """The session policy (it intersects the role's own): delete this one stack, describe stacks, nothing else.

    Describe is not limited to the stack: how IAM names an absent stack's ARN for ``DescribeStacks`` by name is not
    documented, and the first run of every pipeline asks about a stack that does not exist yet. Describing reveals
    what the role's read-only policy already shows; deleting is what the session policy exists to narrow.
    """
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "FindTheStack", "Effect": "Allow", "Action": "cloudformation:DescribeStacks", "Resource": "*"},
            {
                "Sid": "DeleteOnlyThisStack",
                "Effect": "Allow",
                "Action": "cloudformation:DeleteStack",
                "Resource": target.stack_arn,
            },
        ],
    }


def _describe(cloudformation: Any, stack_name: str) -> dict[str, Any] | None:
    try:
        return cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    except ClientError as error:
        # CloudFormation answers an unknown stack name with a ValidationError "Stack with id <name> does not exist".
        if error.response["Error"]["Code"] == "ValidationError" and "does not exist" in error.response["Error"].get(
            "Message", ""
        ):
            return None
        raise


def recover(cloudformation: Any, stack_name: str, *, poll_seconds: int = DELETE_POLL_SECONDS) -> RecoveryOutcome:
    """Delete ``stack_name`` if a failed first create left it in ROLLBACK_COMPLETE, and wait until it is gone.

    Raises:
        StackRecoveryError: the stack is in ROLLBACK_FAILED (what to do is in the message).
        botocore.exceptions.WaiterError: the deletion failed or did not finish in time.
    """
    stack = _describe(cloudformation, stack_name)
    if stack is None:
        return RecoveryOutcome.ABSENT
    status, stack_id = stack["StackStatus"], stack["StackId"]
    if status == FAILED_ROLLBACK:
        raise StackRecoveryError(
            f"stack {stack_name} is {FAILED_ROLLBACK}: the rollback of its failed first create could not delete some "
            "resources (its events name them, with the reason). Empty or delete each of those resources by hand, then "
            f"delete the stack (aws cloudformation delete-stack --stack-name {stack_name}) and run the pipeline again."
        )
    if status != ROLLED_BACK_CREATE:
        return RecoveryOutcome.UNCHANGED
    cloudformation.delete_stack(StackName=stack_id)
    cloudformation.get_waiter("stack_delete_complete").wait(
        StackName=stack_id, WaiterConfig={"Delay": poll_seconds, "MaxAttempts": DELETE_POLLS}
    )
    return RecoveryOutcome.DELETED


def cloudformation_client(target: StackTarget, sts: Any | None = None) -> Any:
    """A CloudFormation client in ``target.region`` as ``target.role_arn``, limited by :func:`session_policy`."""
    sts = sts or boto3.client("sts", region_name=target.region)
    credentials = sts.assume_role(
        RoleArn=target.role_arn,
        RoleSessionName=f"odp-recover-{target.stack_name}"[:64],
        Policy=json.dumps(session_policy(target)),
        DurationSeconds=SESSION_SECONDS,
    )["Credentials"]
    return boto3.client(
        "cloudformation",
        region_name=target.region,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


def _account_of(role_arn: str) -> str:
    parts = role_arn.split(":")
    if len(parts) < 6 or parts[2] != "iam" or not parts[4].isdigit():
        raise ValueError(f"--role-arn {role_arn!r}: expected arn:<partition>:iam::<account>:role/<name>")
    return parts[4]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m odp.operations.stack_recovery",
        description="Delete a stack left in ROLLBACK_COMPLETE by a failed first create (nothing else).",
    )
    parser.add_argument("--stack", required=True, help="the stack name (e.g. Dev-DataLake)")
    parser.add_argument("--region", required=True, help="the stack's region")
    parser.add_argument("--role-arn", required=True, help="the role to assume in the stack's account (CDK deploy role)")
    args = parser.parse_args(argv)
    partition = args.role_arn.split(":")[1] if args.role_arn.count(":") >= 5 else "aws"
    target = StackTarget(args.stack, _account_of(args.role_arn), args.region, args.role_arn, partition)
    try:
        outcome = recover(cloudformation_client(target), target.stack_name)
    except StackRecoveryError as error:
        print(f"stack recovery: {error}", file=sys.stderr)
        return 1
    print(f"stack {target.stack_name} ({target.region}): {outcome.value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

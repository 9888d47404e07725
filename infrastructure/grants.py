"""Least-privilege grants with explicit action lists (no ``Get*``-style wildcards) and exact index
ARNs, so every IAM statement on a bucket, key or table names what it allows and where.

Object-level S3 permissions still end in ``/<prefix>*`` (S3 has no other way to say "the objects
in this bucket"); :func:`grant_objects` acknowledges that one cdk-nag finding on the policy with
the reason the caller gives.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from infrastructure.nag import acknowledge
from odp.tracker.schema import TABLE_DEFINITIONS

TABLE_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:DescribeTable")
TABLE_WRITE = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
TABLE_CONDITION_CHECK = ("dynamodb:ConditionCheckItem",)
TABLE_SCAN = ("dynamodb:Scan",)
KEY_DECRYPT = ("kms:Decrypt", "kms:DescribeKey")
KEY_ENCRYPT = ("kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncryptFrom", "kms:ReEncryptTo")
OBJECT_READ = ("s3:GetObject", "s3:GetObjectVersion")
OBJECT_WRITE = ("s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")
OBJECT_DELETE = ("s3:DeleteObject", "s3:DeleteObjectVersion")
BUCKET_READ = ("s3:ListBucket", "s3:GetBucketLocation", "s3:ListBucketMultipartUploads")


def grant_table(
    grantee: iam.IGrantable, logical: str, table: dynamodb.ITableV2, *, write: bool, scan: bool = False
) -> None:
    """Item access to a tracker table and its named indexes (the key grant is separate); ``scan`` adds
    ``dynamodb:Scan`` for a principal that must read every item (the Configuration Manager)."""
    indexes = [f"{table.table_arn}/index/{name}" for name in TABLE_DEFINITIONS[logical]["Indexes"]]
    actions = TABLE_READ + TABLE_CONDITION_CHECK + (TABLE_WRITE if write else ()) + (TABLE_SCAN if scan else ())
    iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=[table.table_arn, *indexes])


def grant_table_actions(grantee: iam.IGrantable, table: dynamodb.ITableV2, actions: list[str]) -> None:
    """Exactly ``actions`` on a table (no index, no key grant): a principal that makes only these calls."""
    iam.Grant.add_to_principal(grantee=grantee, actions=actions, resource_arns=[table.table_arn])


def grant_key(grantee: iam.IGrantable, key: kms.IKey, *, encrypt: bool) -> None:
    """Use of a KMS key: decrypt, and also encrypt / generate data keys when ``encrypt``."""
    actions = KEY_DECRYPT + (KEY_ENCRYPT if encrypt else ())
    iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=[key.key_arn])


def grant_objects(
    role: iam.Role,
    bucket: s3.IBucket,
    *,
    reason: str,
    prefix: str = "",
    write: bool = False,
    delete: bool = False,
) -> None:
    """List the bucket and read (optionally write, delete) the objects under ``prefix``.

    The statement's object ARN ends in ``*``; the matching cdk-nag finding is acknowledged on the
    role with ``reason`` (whichever of its policies holds the statement: CDK moves statements out of a large role's
    default policy into ``OverflowPolicy<n>`` managed policies).
    """
    actions = OBJECT_READ + (OBJECT_WRITE if write else ()) + (OBJECT_DELETE if delete else ())
    role.add_to_policy(iam.PolicyStatement(actions=list(BUCKET_READ), resources=[bucket.bucket_arn]))
    role.add_to_policy(iam.PolicyStatement(actions=list(actions), resources=[bucket.arn_for_objects(f"{prefix}*")]))
    logical = Stack.of(bucket).get_logical_id(bucket.node.default_child)
    acknowledge(role, f"AwsSolutions-IAM5[Resource::<{logical}.Arn>/{prefix}*]", reason)

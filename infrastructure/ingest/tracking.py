"""Tracking: every tracker table (the six DynamoDB tables of ARCHITECTURE.md section 3 and the
dataset run history), declared from the same key schemas and indexes as odp/tracker/schema.py (a
test compares them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from odp.naming import DATASET_RUN_HISTORY, TrackerTableNames, tracker_table_names
from odp.tracker.schema import TABLE_DEFINITIONS

# The dataset run history was declared by infrastructure/jobs/datasets.py (construct path Datasets/RunHistory)
# until the tables were gathered here: its CloudFormation logical id is kept, so a deployed table is
# neither replaced nor orphaned.
_KEPT_LOGICAL_IDS = {DATASET_RUN_HISTORY: "DatasetsRunHistoryE8DE7ACB"}
_TYPES = {"S": dynamodb.AttributeType.STRING, "N": dynamodb.AttributeType.NUMBER, "B": dynamodb.AttributeType.BINARY}


def _attribute(definition: Mapping, key_schema: list[dict[str, str]], key_type: str) -> dynamodb.Attribute | None:
    for element in key_schema:
        if element["KeyType"] == key_type:
            name = element["AttributeName"]
            return dynamodb.Attribute(name=name, type=_TYPES[definition["Attributes"][name]])
    return None


def _deletion_protection(removal_policy: RemovalPolicy) -> bool | None:
    """RETAIN turns deletion protection on; DESTROY turns it off. RETAIN_ON_UPDATE_OR_DELETE (``retain`` in config)
    leaves it out of the template: a rollback of the first create must be able to delete the tables, so protection
    is turned on after the first successful deploy and CloudFormation never changes it (docs/decisions/028)."""
    if removal_policy == RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE:
        return None
    return removal_policy == RemovalPolicy.RETAIN


@dataclass(frozen=True)
class TrackingProps:
    """What Tracking needs: the tracker tables of one environment.

    Attributes:
        environment: names every resource ``odp-<env>-...``.
        key: the state key (encrypts logs, tables, topic).
        removal_policy: RETAIN (default) keeps data when the stack goes; DESTROY deletes it.
        dr_region: region of the table replicas; default None (no replicas).
        replica_key_arn: key (or alias) ARN in ``dr_region``; required with it.
    """

    environment: str
    key: kms.IKey
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    dr_region: str | None = None
    replica_key_arn: str | None = None


class Tracking(Construct):
    """On-demand, PITR, KMS-encrypted global tables (replicas in the DR region when configured).

    Args:
        environment: environment name (physical names from :class:`TrackerTableNames`).
        key: the state key.
        dr_region: region of the replicas, or None.
        replica_key_arn: ARN (or alias ARN) of the key in the DR region; required with ``dr_region``.
        removal_policy: RETAIN also turns on deletion protection; RETAIN_ON_UPDATE_OR_DELETE leaves it to the operator.

    Raises:
        ValueError: ``dr_region`` without ``replica_key_arn``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: TrackingProps) -> None:
        super().__init__(scope, construct_id)
        environment, key, removal_policy, dr_region, replica_key_arn = (
            props.environment,
            props.key,
            props.removal_policy,
            props.dr_region,
            props.replica_key_arn,
        )
        if dr_region and not replica_key_arn:
            raise ValueError(f"environment {environment!r}: dr_region {dr_region} needs a replica key ARN")
        self.names = TrackerTableNames.for_environment(environment)
        physical_names = tracker_table_names(environment)
        encryption = dynamodb.TableEncryptionV2.customer_managed_key(
            key, replica_key_arns={dr_region: replica_key_arn} if dr_region and replica_key_arn else None
        )
        self.tables: dict[str, dynamodb.TableV2] = {}
        for logical, definition in TABLE_DEFINITIONS.items():
            key_schema = definition["KeySchema"]
            indexes = [
                dynamodb.GlobalSecondaryIndexPropsV2(
                    index_name=index_name,
                    partition_key=_attribute(definition, index_key, "HASH"),
                    sort_key=_attribute(definition, index_key, "RANGE"),
                    projection_type=dynamodb.ProjectionType.ALL,
                )
                for index_name, index_key in definition["Indexes"].items()
            ]
            self.tables[logical] = dynamodb.TableV2(
                self,
                logical.title().replace("_", ""),
                table_name=physical_names[logical],
                partition_key=_attribute(definition, key_schema, "HASH"),
                sort_key=_attribute(definition, key_schema, "RANGE"),
                billing=dynamodb.Billing.on_demand(),
                point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                    point_in_time_recovery_enabled=True
                ),
                encryption=encryption,
                time_to_live_attribute=definition["TimeToLive"],
                global_secondary_indexes=indexes or None,
                replicas=[dynamodb.ReplicaTableProps(region=dr_region)] if dr_region else None,
                deletion_protection=_deletion_protection(removal_policy),
                removal_policy=removal_policy,
            )
            if logical in _KEPT_LOGICAL_IDS:
                self.tables[logical].node.default_child.override_logical_id(_KEPT_LOGICAL_IDS[logical])

    def table(self, logical: str) -> dynamodb.TableV2:
        """The table with this logical name (a key of :func:`odp.naming.tracker_table_names`)."""
        return self.tables[logical]

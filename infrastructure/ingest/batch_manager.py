"""Batch Manager: the function every File Processor state machine calls to plan batches of tables
and to summarise their outcome; it publishes the freshness metric."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infrastructure.grants import TABLE_SCAN, grant_key, grant_objects, grant_table
from infrastructure.ingest.lambda_function import FunctionOwnerProps, FunctionSpec, OdpFunction, OdpFunctionProps
from odp.contracts.batches import PLANS_PREFIX
from odp.contracts.lambda_env import PLAN_BUCKET
from odp.tracker.items import PENDING_INDEX

HANDLER = "lambdas.batch_manager.handler.handler"
SERVICE = "batch_manager"  # Powertools service name: the `service` dimension of its metrics
FUNCTION_TIMEOUT = Duration.minutes(2)
FUNCTION = FunctionSpec(
    HANDLER,
    SERVICE,
    FUNCTION_TIMEOUT,
    "Plans runs of tables with landed files per cadence, packed by estimated work, and summarises each execution",
)


@dataclass(frozen=True, kw_only=True)
class BatchManagerFunctionProps(FunctionOwnerProps):
    """What the Batch Manager needs: what every function owner gives (``FunctionOwnerProps``), and the bucket it
    writes each execution's plan to and reads its Map's results from (the artifacts bucket, under ``plans/``)."""

    plans: s3.IBucket


class BatchManagerFunction(Construct):
    """One function shared by every cadence (the cadence travels in the payload)."""

    def __init__(self, scope: Construct, construct_id: str, props: BatchManagerFunctionProps) -> None:
        super().__init__(scope, construct_id)
        tracking, key = props.tracking, props.key
        self.lambda_ = OdpFunction(self, "Function", OdpFunctionProps(props, FUNCTION))
        self.function = self.lambda_.function
        for logical in (
            "file_tracker",
            "processing_tracker",
            "batch_config",
            "table_config",
        ):
            grant_table(self.function, logical, tracking.table(logical), write=False)
        # a plan reads every pending file in one paginated Scan of the sparse pending index (of it alone)
        pending_index = f"{tracking.table('file_tracker').table_arn}/index/{PENDING_INDEX}"
        iam.Grant.add_to_principal(grantee=self.function, actions=list(TABLE_SCAN), resource_arns=[pending_index])
        plans = props.plans
        self.function.add_environment(PLAN_BUCKET, plans.bucket_name)
        grant_objects(
            self.function.role,
            plans,
            prefix=f"{PLANS_PREFIX}/",
            write=True,
            reason="The Batch Manager writes each execution's plan and summary, and reads its Map's results, under "
            "plans/ of the artifacts bucket: object names are per execution, so the grant ends in a wildcard.",
        )
        grant_key(self.function, key, encrypt=True)  # the artifacts bucket's objects are SSE-KMS with the state key

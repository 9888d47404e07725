"""The operations layer: an alarm on everything that can fail (the Lambdas, the dead-letter queue, the state
machines, the jobs, freshness, quarantine) and the role the pipeline's post-deploy checks assume."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_stepfunctions as sfn

from infrastructure.access.lake_formation import LakeFormation
from infrastructure.foundation.context import DeploymentContext
from infrastructure.ingest.layer import Ingest
from infrastructure.jobs.kind_jobs import KindJobs
from infrastructure.jobs.layer import Jobs
from infrastructure.operations.deploy_access import DeployAccess, DeployAccessProps
from infrastructure.operations.monitoring import Monitoring
from odp.operations.canary import canary_jobs


def build_operations(
    stack: Stack,
    context: DeploymentContext,
    monitoring: Monitoring,
    ingest: Ingest,
    jobs: Jobs,
    *,
    lake_formation: LakeFormation | None = None,
) -> DeployAccess:
    """Every alarm and the config-loader role (``odp-<env>-config-loader``) the post-deploy step assumes; with Lake
    Formation, that role also applies the consumers' table grants (``python -m odp lake-grants``)."""
    monitoring.watch_queue("file-manager", ingest.file_manager.dead_letter_queue)
    monitoring.watch_function("file-manager", ingest.file_manager.function)
    monitoring.watch_function("batch-manager", ingest.batch_manager.function)
    # every batch Glue job: the File Processor's and those of any other registered kind (KindJobs)
    kind_jobs = [name for family in jobs.families if isinstance(family, KindJobs) for name in family.jobs]
    monitoring.watch_glue_jobs([*jobs.glue_jobs.job_names.values(), *kind_jobs])
    cadences = context.config.cadences.cadences
    monitoring.watch_table_costs(cadences)
    for cadence_name, processor in jobs.processors.items():
        monitoring.watch_state_machine(cadence_name, processor.state_machine)
        monitoring.watch_freshness(cadence_name, cadences[cadence_name])
        monitoring.watch_quarantine(cadence_name)
    canary = canary_jobs(context.config, context.name, context.kinds)  # every job: the post-deploy canary starts each
    deploy_access = DeployAccess(
        stack,
        "DeployAccess",
        DeployAccessProps(
            environment=context.name,
            deployment_account=context.config.environments.deployment.account,
            tracking=ingest.tracking,
            key=context.state_key,
            state_machines=described_state_machines(jobs),
            glue_job_arns=[stack.format_arn(service="glue", resource="job", resource_name=job.name) for job in canary],
            emr_serverless=jobs.emr,
        ),
    )
    if lake_formation is not None:
        lake_formation.grant_table_grants(deploy_access.role)
    return deploy_access


def described_state_machines(jobs: Jobs) -> list[sfn.IStateMachine]:
    """What the smoke check describes (every File Processor's state machine) and the post-deploy canary reads an EMR
    Serverless run from (those and, when it starts one, the datasets state machine: odp/operations/canary.py)."""
    machines = [processor.state_machine for processor in jobs.processors.values()]
    if jobs.datasets is not None and jobs.datasets.runs_on_emr:
        machines.append(jobs.datasets.state_machine)
    return machines

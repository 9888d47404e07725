"""The File Processor jobs, one per cadence (worker type and count differ): a thin construct on
:class:`~infrastructure.jobs.glue_job.GlueJobFamily`. The family ships the Glue asset folder (the script, the
``etl``/``odp`` zip and the zip of wheels every ODP job loads) to ``s3://<artifacts>/glue/file_processor/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Annotations, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from infrastructure.grants import TABLE_SCAN
from infrastructure.ingest.tracking import Tracking
from infrastructure.jobs.glue_job import LIBRARY_PREFIX, GlueJobFamily, GlueJobFamilyProps, GlueJobSpec, GlueStage
from infrastructure.jobs.job_role import grant_file_processor_data
from odp.config.models import Cadence, CadenceMode
from odp.contracts.datasets_trigger import WARM_TICK_SOURCE
from odp.contracts.job_kinds import FILE_PROCESSOR, JobDeployment, JobUnit
from odp.contracts.metrics import NAMESPACE
from odp.tracker.items import PENDING_INDEX

CODE_PREFIX = LIBRARY_PREFIX
# Runs beyond the state machine's Map concurrency: the post-deploy canary or an operator's manual run
# must not take a slot the scheduled execution needs (the overlap guard keeps executions to one).
EXTRA_CONCURRENT_RUNS = 1


def max_concurrent_runs(cadence: Cadence) -> int:
    """The job's MaxConcurrentRuns: the cadence's Map concurrency plus EXTRA_CONCURRENT_RUNS; a warm cadence's job 1
    (one warm run: a start while it runs is refused, which its state machine takes as "running": docs/decisions/032)."""
    if cadence.mode is CadenceMode.WARM:
        return 1
    return cadence.max_concurrency + EXTRA_CONCURRENT_RUNS


@dataclass(frozen=True)
class GlueJobsProps:
    """The File Processor jobs.

    Attributes:
        stage: what the stage gives every job family (buckets: staging read, raw read/write; zone keys:
            staging decrypt, raw is the family's S3 key).
        cadences: one job per cadence, sized from it.
        tracking: the tracker tables the jobs read and write.
        deployment: what the jobs' static arguments name (odp.contracts.job_kinds.JobDeployment).
        databases: the raw databases of the configured tables (the catalog scope).
    """

    stage: GlueStage
    cadences: Mapping[str, Cadence]
    tracking: Tracking
    deployment: JobDeployment
    databases: Sequence[str]


class GlueJobs(GlueJobFamily):
    """One ``glueetl`` job per cadence on one role and one security configuration (S3 SSE-KMS with the raw key).

    Attributes:
        job_names: cadence -> physical name (``jobs`` of the family: physical name -> job).
    """

    def __init__(self, scope: Construct, construct_id: str, props: GlueJobsProps) -> None:
        stage = props.stage
        artifacts = stage.artifacts
        super().__init__(
            scope,
            construct_id,
            GlueJobFamilyProps(
                stage,
                "file-processor",
                CODE_PREFIX,
                [s3deploy.Source.asset(str(artifacts.directory))],
                data_key=stage.zone_keys["raw"],
                databases=props.databases,
                metric_namespaces=[NAMESPACE],  # each table run's seconds and DPU-seconds (etl/file_processor/cost.py)
            ),
        )
        if artifacts.script is None:
            Annotations.of(self).add_warning_v2(
                "odp:glue-script-missing", "etl/jobs/file_processor.py does not exist yet: the job has no script"
            )
        grant_file_processor_data(self.role, stage.buckets, stage.zone_keys, props.tracking)
        self.job_names: dict[str, str] = {}
        # cadence -> the job's contract arguments (DefaultArguments; a cadence on EMR Serverless passes the same)
        self.contract_arguments: dict[str, dict[str, str]] = {}
        for name, cadence in props.cadences.items():
            unit = JobUnit(name, cadence.engine, cadence)
            self.contract_arguments[name] = FILE_PROCESSOR.static_arguments(props.deployment, unit)
            job_name = FILE_PROCESSOR.job_name(stage.environment, unit)
            self.add_job(
                GlueJobSpec(
                    construct_id=f"Job-{name}",
                    name=job_name,
                    description=f"ODP File Processor, cadence {name}: landed CDC files -> Hudi tables",
                    script=artifacts.script or "file_processor.py",
                    arguments=self.contract_arguments[name],
                    worker_type=cadence.worker_type.value,
                    number_of_workers=cadence.number_of_workers,
                    timeout_minutes=cadence.job_timeout_minutes,
                    max_concurrent_runs=max_concurrent_runs(cadence),
                )
            )
            self.job_names[name] = job_name
        warm = sorted(name for name, cadence in props.cadences.items() if cadence.mode is CadenceMode.WARM)
        if warm:
            self._grant_warm_runs(warm, props.tracking)

    def _grant_warm_runs(self, cadences: list[str], tracking: Tracking) -> None:
        """What a warm run does besides a scheduled run (etl/file_processor/warm.py): reads its own job's definition
        (glue:GetJob, the deploy signal) and the planning reads of the Batch Manager (odp/cadence_plan.py): the
        pending index Scan (that index only); its BatchGetItem of processing_tracker and Query of table_config's
        active index are in the File Processor's table grants already. And each tick's event to the datasets state
        machine (odp.contracts.datasets_trigger): events:PutEvents on the default bus, of that source only."""
        self.role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="WarmRunJobVersion", actions=["glue:GetJob"], resources=[self.job_arn(name) for name in cadences]
            )
        )
        stack = Stack.of(self)
        self.role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="WarmTickEvents",
                actions=["events:PutEvents"],
                resources=[f"arn:{stack.partition}:events:{stack.region}:{stack.account}:event-bus/default"],
                conditions={"StringEquals": {"events:source": WARM_TICK_SOURCE}},
            )
        )
        pending_index = f"{tracking.table('file_tracker').table_arn}/index/{PENDING_INDEX}"
        iam.Grant.add_to_principal(grantee=self.role, actions=list(TABLE_SCAN), resource_arns=[pending_index])

    def grant_read_job_runs(self, grantee: iam.IGrantable) -> None:
        """glue:GetJobRun on every File Processor job: a lease names the job run holding it, and a run
        that finds the lease of an ended run (FAILED, TIMEOUT, STOPPED) takes it over (odp/tracker/job_runs.py)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                sid="LeaseHolderJobRuns",
                actions=["glue:GetJobRun"],
                resources=[self.job_arn(cadence) for cadence in sorted(self.job_names)],
            )
        )

    def job_arn(self, cadence: str) -> str:
        return self.arn_of(self.job_names[cadence])

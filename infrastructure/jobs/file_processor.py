"""File Processor, one per cadence: an EventBridge Scheduler schedule starts a state machine whose definition is
stepfunctions/file_processor.<engine>.asl.json of the cadence's engine, filled through definition substitutions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from aws_cdk import RemovalPolicy, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infrastructure.foundation.observability import encrypted_log_group
from infrastructure.grants import grant_objects
from infrastructure.jobs.engines.base import JobEngine
from infrastructure.jobs.engines.glue import GLUE
from infrastructure.nag import acknowledge
from odp.config.models import Cadence, CadenceMode, EngineName
from odp.contracts.batches import PLANS_PREFIX
from odp.contracts.job_kinds import FILE_PROCESSOR
from odp.contracts.state_machines import FileProcessorWarmOnGlue, substitutions_for
from odp.naming import schedule_name, state_machine_name


@dataclass(frozen=True)
class FileProcessorProps:
    """The schedule and state machine of one cadence.

    Attributes:
        environment: names every resource ``odp-<env>-...``.
        cadence_name: the cadence's name in cadences.yaml.
        cadence: its configuration (schedule, Map concurrency).
        batch_manager: the Batch Manager function the state machine invokes.
        job_name: the cadence's File Processor Glue job.
        job_arn: its ARN.
        static_arguments: the cadence's static contract arguments (its Glue job's DefaultArguments; a run on EMR
            Serverless passes them as entry point arguments).
        engine: what runs the cadence's job (default Glue; the stage's EMR Serverless application when the cadence
            says ``engine: emr_serverless``).
        alerts_topic: where failures are published.
        key: the state key (encrypts logs, tables, topic, the plans).
        plans: the artifacts bucket: the Map reads the plan from it and writes its results to it (``plans/``).
        removal_policy: RETAIN (default) keeps data when the stack goes; DESTROY deletes it.
        log_retention: of the log groups (default one year).
    """

    environment: str
    cadence_name: str
    cadence: Cadence
    batch_manager: lambda_.IFunction
    job_name: str
    job_arn: str
    alerts_topic: sns.ITopic
    key: kms.IKey
    plans: s3.IBucket
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR
    static_arguments: Mapping[str, str] = field(default_factory=dict)
    engine: JobEngine = GLUE


class FileProcessor(Construct):
    """The schedule and state machine of one cadence; ``state_machine`` is public.

    The schedule starts an execution at every tick with input ``{}``; the definition's overlap guard ends
    an execution that finds an older one still running."""

    def __init__(self, scope: Construct, construct_id: str, props: FileProcessorProps) -> None:
        super().__init__(scope, construct_id)
        (
            environment,
            cadence_name,
            cadence,
            batch_manager,
            job_name,
            job_arn,
            alerts_topic,
            key,
            removal_policy,
            log_retention,
        ) = (
            props.environment,
            props.cadence_name,
            props.cadence,
            props.batch_manager,
            props.job_name,
            props.job_arn,
            props.alerts_topic,
            props.key,
            props.removal_policy,
            props.log_retention,
        )
        name = state_machine_name(environment, cadence_name)
        self.log_group = encrypted_log_group(
            self, f"/aws/vendedlogs/states/{name}", key=key, retention=log_retention, removal_policy=removal_policy
        )
        warm = cadence.mode is CadenceMode.WARM
        if warm and props.engine.engine is not EngineName.GLUE:
            raise ValueError(f"cadence {cadence_name}: mode warm runs on Glue only, not {props.engine.engine.value}")
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=name,
            definition_body=sfn.DefinitionBody.from_file(
                str(FileProcessorWarmOnGlue.DEFINITION if warm else FILE_PROCESSOR.definition(props.engine.engine))
            ),
            definition_substitutions=(
                FileProcessorWarmOnGlue(alerts_topic.topic_arn, cadence_name, job_name).values()
                if warm
                else substitutions_for(FILE_PROCESSOR, props.engine.engine)(
                    alerts_topic_arn=alerts_topic.topic_arn,
                    batch_manager_function_arn=batch_manager.function_arn,
                    cadence=cadence_name,
                    max_concurrency=cadence.max_concurrency,
                    plan_bucket=props.plans.bucket_name,
                    **props.engine.run_values(
                        FILE_PROCESSOR,
                        job_name=job_name,
                        static_arguments=props.static_arguments,
                        timeout_minutes=cadence.job_timeout_minutes,
                    ),
                ).values()
            ),
            logs=sfn.LogOptions(destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
            tracing_enabled=True,
        )
        role = self.state_machine.role
        if warm:
            # StartWarmRun starts the job and does not wait: glue:StartJobRun alone
            role.add_to_principal_policy(
                iam.PolicyStatement(sid="StartWarmRun", actions=["glue:StartJobRun"], resources=[job_arn])
            )
        else:
            self._grant_scheduled(props, name)
        role.add_to_principal_policy(
            iam.PolicyStatement(sid="PublishAlerts", actions=["sns:Publish"], resources=[alerts_topic.topic_arn])
        )
        key.grant(role, "kms:Decrypt", "kms:GenerateDataKey")  # the alerts topic (and the plans) are KMS-encrypted
        acknowledge(
            role.node.find_child("DefaultPolicy"),
            "AwsSolutions-IAM5[Resource::*]",
            "Log delivery (logs:*LogDelivery, DescribeLogGroups...) and X-Ray actions support no resource-level "
            "permissions; CDK adds them for logging ALL and tracing.",
        )

        self.schedule = scheduler.Schedule(
            self,
            "Schedule",
            schedule_name=schedule_name(environment, cadence_name),
            description=f"Starts the File Processor of cadence {cadence_name}",
            schedule=scheduler.ScheduleExpression.expression(cadence.schedule),
            # The state machine builds its own payload from the cadence it was deployed with.
            target=scheduler_targets.StepFunctionsStartExecution(
                self.state_machine, input=scheduler.ScheduleTargetInput.from_object({})
            ),
        )

    def _grant_scheduled(self, props: FileProcessorProps, name: str) -> None:
        """A scheduled cadence's calls: the Batch Manager, the job's runs (.sync), the overlap guard, the
        Distributed Map's child executions and its plans and results in S3."""
        role = self.state_machine.role
        batch_manager, job_arn, cadence_name = props.batch_manager, props.job_arn, props.cadence_name
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="InvokeBatchManager",
                actions=["lambda:InvokeFunction"],
                # The ASL invokes the unqualified ARN (no version or alias): no `:*`.
                resources=[batch_manager.function_arn],
            )
        )
        props.engine.grant_run(role, job_arn=job_arn, sid="RunFileProcessorJob")
        stack = Stack.of(self)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="OverlapGuard",  # FindRunningExecutions lists this state machine's running executions
                actions=["states:ListExecutions"],
                # Built from the name: the machine's own ARN attribute would make its policy depend on it.
                resources=[f"arn:{stack.partition}:states:{stack.region}:{stack.account}:stateMachine:{name}"],
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="DistributedMapRuns",  # ProcessBatches starts one child execution of this machine per batch
                actions=["states:StartExecution"],
                resources=[f"arn:{stack.partition}:states:{stack.region}:{stack.account}:stateMachine:{name}"],
            )
        )
        executions = f"arn:{stack.partition}:states:{stack.region}:{stack.account}:execution:{name}/*"
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="DistributedMapChildren",  # and watches (or stops) them: <machine>/<map run>:<child>
                actions=["states:DescribeExecution", "states:StopExecution"],
                resources=[executions],
            )
        )
        grant_objects(
            role,
            props.plans,
            prefix=f"{PLANS_PREFIX}/{cadence_name}/",
            write=True,
            reason="The Distributed Map reads each execution's plan (ItemReader) and writes its results (ResultWriter) "
            "under plans/<cadence>/ of the artifacts bucket: per-execution object names.",
        )
        policy = role.node.find_child("DefaultPolicy")
        region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
        account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
        acknowledge(
            policy,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:{region}:{account}:execution:{name}/*]",
            "The Distributed Map's child executions are named by Step Functions at run time (<machine>/<map run>:"
            "<child>); the grant is limited to this state machine's executions.",
        )

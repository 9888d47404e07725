"""What IAM must allow for each recorded call, and for each task of the state machine definition.

:func:`call_requirements` maps one :class:`sandbox.aws_calls.AwsCall` (names of the environment it
ran in) to the (action, resource, context) requests IAM evaluates for it in the deployed
environment: BatchWriteItem / BatchGetItem per table, TransactWriteItems as the per-item actions
(IAM has no transaction action), Query and Scan on an index as ``table/<t>/index/<i>``, ListObjects as
``s3:ListBucket`` with ``s3:prefix``, and the KMS use the call implies on a customer-managed key (a
DynamoDB table's key: ``kms:Decrypt``; an S3 read: ``kms:Decrypt``, a write ``kms:GenerateDataKey``;
an SNS publish: both). An operation not in the map raises :class:`UnmappedCallError`: a new call
must be mapped before the test can pass.

:func:`state_machine_requirements` does the same for every Task of an ASL definition (the state
machine's service integrations, which its own role performs): ``lambda:invoke``,
``glue:startJobRun[.sync]`` and ``sns:publish``, with the actions AWS documents for each pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from odp.config.datasets import DatasetConfig
from odp.config.models import TableConfig
from odp.contracts.streaming import StreamingJobArgs
from odp.tracker.dataset_history import dataset_job_name
from sandbox.aws_calls import BATCH_MANAGER, DATASET_JOB, FILE_MANAGER, FILE_PROCESSOR_JOB, STREAMING_JOB, AwsCall
from tests.infra.permissions.template import (
    Resolver,
    encryption_key_arn,
    find_bucket,
    find_by_name,
)

SECURE_TRANSPORT = ("aws:SecureTransport", "true")  # boto3 and S3A use HTTPS: bucket and queue policies require it
S3_TLS = ("s3:TlsVersion", "1.2")  # the oldest TLS boto3 and S3A negotiate; the buckets deny anything older


class UnmappedCallError(LookupError):
    """A recorded operation has no IAM mapping here yet; the message names it and where it came from."""


@dataclass(frozen=True)
class Requirement:
    """``principal`` must be allowed ``action`` on ``resource`` (with these condition keys) because of ``reason``."""

    principal: str
    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = (SECURE_TRANSPORT,)
    reason: str = ""

    @property
    def key(self) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
        return (self.principal, self.action, self.resource, self.context)


@dataclass(frozen=True)
class Translation:
    """How names of the environment a call ran in map to the deployed environment's names.

    ``environment``: the name the recorded code used (``sandbox`` for the local flow); ``buckets``:
    recorded bucket name -> deployed bucket purpose (``staging`` -> ``odp-<env>-staging-...``).
    """

    environment: str
    buckets: Mapping[str, str]

    def name(self, resolver: Resolver, name: str) -> str:
        """``odp-<recorded env>-x`` -> ``odp-<deployed env>-x``; other names unchanged."""
        recorded = f"odp-{self.environment}-"
        if name.startswith(recorded):
            return f"odp-{resolver.deployment.environment}-" + name.removeprefix(recorded)
        return name

    def arn(self, resolver: Resolver, arn: str) -> str:
        """An ARN of the recorded account: the deployed partition, region, account and names."""
        parts = arn.split(":", 5)
        if len(parts) < 6:
            raise UnmappedCallError(f"not an ARN: {arn!r}")
        d = resolver.deployment
        resource = re.sub(rf"odp-{re.escape(self.environment)}-", f"odp-{d.environment}-", parts[5])
        return ":".join(
            [parts[0], d.partition, parts[2], d.region if parts[3] else "", d.account if parts[4] else "", resource]
        )


def _table(resolver: Resolver, translation: Translation, name: str) -> tuple[str, str]:
    """(table ARN, logical id) of a recorded table name in the deployed template."""
    logical = find_by_name(resolver, "AWS::DynamoDB::GlobalTable", translation.name(resolver, name))
    return resolver.get_att(logical, "Arn"), logical


def _dynamodb(call: AwsCall, resolver: Resolver, translation: Translation) -> Iterator[tuple[str, str, str]]:
    """(action, resource, table logical id) for each table a DynamoDB call touches."""
    params = call.params
    operation = call.operation
    if operation in ("BatchWriteItem", "BatchGetItem"):
        for name in params["RequestItems"]:
            arn, logical = _table(resolver, translation, name)
            yield f"dynamodb:{operation}", arn, logical
        return
    if operation in ("TransactWriteItems", "TransactGetItems"):
        per_item = {
            "Put": "PutItem",
            "Update": "UpdateItem",
            "Delete": "DeleteItem",
            "ConditionCheck": "ConditionCheckItem",
            "Get": "GetItem",
        }
        for item in params["TransactItems"]:
            ((kind, body),) = item.items()
            arn, logical = _table(resolver, translation, body["TableName"])
            yield f"dynamodb:{per_item[kind]}", arn, logical
        return
    if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "DescribeTable"):
        arn, logical = _table(resolver, translation, params["TableName"])
        if params.get("IndexName"):
            arn = f"{arn}/index/{params['IndexName']}"
        yield f"dynamodb:{operation}", arn, logical
        return
    raise UnmappedCallError(f"{call.principal}: no IAM mapping for {call.describe()}")


_S3_ACTIONS = {
    "GetObject": "s3:GetObject",
    "HeadObject": "s3:GetObject",
    "PutObject": "s3:PutObject",
    "DeleteObject": "s3:DeleteObject",
    "ListObjectsV2": "s3:ListBucket",
    "ListObjects": "s3:ListBucket",
}


def _bucket(resolver: Resolver, translation: Translation, name: str) -> str:
    purpose = translation.buckets.get(name)
    if purpose is None:
        raise UnmappedCallError(f"bucket {name!r} has no deployed counterpart in the translation")
    return find_bucket(resolver, purpose)


def call_requirements(call: AwsCall, resolver: Resolver, translation: Translation) -> list[Requirement]:
    """The requests IAM evaluates for one recorded call in the deployed environment.

    Raises:
        UnmappedCallError: the operation, or a name it uses, has no mapping.
    """
    reason = call.describe()
    region = resolver.deployment.region

    def need(action: str, resource: str, *context: tuple[str, str]) -> Requirement:
        return Requirement(call.principal, action, resource, (SECURE_TRANSPORT, *context), reason)

    if call.service == "sts" and call.operation == "GetCallerIdentity":
        return []  # needs no permission
    if call.service == "dynamodb":
        found: list[Requirement] = []
        for action, resource, logical in _dynamodb(call, resolver, translation):
            found.append(need(action, resource))
            key = encryption_key_arn(resolver, logical)
            if key is not None and action != "dynamodb:DescribeTable":
                found.append(need("kms:Decrypt", key, ("kms:ViaService", f"dynamodb.{region}.amazonaws.com")))
        return found
    if call.service == "s3" and call.operation in _S3_ACTIONS:
        logical = _bucket(resolver, translation, call.params["Bucket"])
        bucket_arn = resolver.get_att(logical, "Arn")
        action = _S3_ACTIONS[call.operation]
        if action == "s3:ListBucket":
            return [need(action, bucket_arn, S3_TLS, ("s3:prefix", call.params.get("Prefix", "")))]
        found = [need(action, f"{bucket_arn}/{call.params['Key']}", S3_TLS)]
        key = encryption_key_arn(resolver, logical)
        via = ("kms:ViaService", f"s3.{region}.amazonaws.com")
        if key is not None and action == "s3:GetObject":
            found.append(need("kms:Decrypt", key, via))
        if key is not None and action == "s3:PutObject":
            found.append(need("kms:GenerateDataKey", key, via))
        return found
    return _control_plane_requirements(call, resolver, translation, need)


def _control_plane_requirements(
    call: AwsCall, resolver: Resolver, translation: Translation, need: Callable[..., Requirement]
) -> list[Requirement]:
    """CloudWatch metrics, a state machine's description, an SNS publish.

    Raises:
        UnmappedCallError: anything else.
    """
    if call.service == "cloudwatch" and call.operation == "PutMetricData":
        # No resource-level permission: the namespace is the condition key a grant narrows by.
        return [need("cloudwatch:PutMetricData", "*", ("cloudwatch:namespace", call.params["Namespace"]))]
    if call.service == "stepfunctions" and call.operation == "DescribeStateMachine":
        return [need("states:DescribeStateMachine", translation.arn(resolver, call.params["stateMachineArn"]))]
    if call.service == "glue" and call.operation in ("StartJobRun", "GetJobRun", "GetJobRuns"):
        d = resolver.deployment
        job = translation.name(resolver, call.params["JobName"])
        return [need(f"glue:{call.operation}", f"arn:{d.partition}:glue:{d.region}:{d.account}:job/{job}")]
    if call.service == "sns" and call.operation == "Publish":
        topic = translation.arn(resolver, call.params["TopicArn"])
        return [need("sns:Publish", topic), *_topic_key_requirements(resolver, topic, call.principal, call.describe())]
    raise UnmappedCallError(f"{call.principal}: no IAM mapping for {call.describe()}")


# Step Functions service integrations: resource ARN -> actions its role needs (AWS's documented policies).
_GLUE_SYNC = ("glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns", "glue:BatchStopJobRun")
_INTEGRATIONS = {
    "arn:aws:states:::lambda:invoke": ("lambda:InvokeFunction",),
    "arn:aws:states:::glue:startJobRun": ("glue:StartJobRun",),
    "arn:aws:states:::glue:startJobRun.sync": _GLUE_SYNC,
    "arn:aws:states:::sns:publish": ("sns:Publish",),
    # The overlap guard lists the running executions of the machine itself ($$.StateMachine.Id).
    "arn:aws:states:::aws-sdk:sfn:listExecutions": ("states:ListExecutions",),
}


def _tasks(states: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, state in states.items():
        if state["Type"] == "Task":
            yield name, state
        if state["Type"] == "Map":
            yield from _tasks((state.get("ItemProcessor") or state["Iterator"])["States"])
        if state["Type"] == "Parallel":
            for branch in state["Branches"]:
                yield from _tasks(branch["States"])


def state_machine_requirements(
    principal: str, definition: Mapping[str, Any], resolver: Resolver, *, own_arn: str = ""
) -> list[Requirement]:
    """What the state machine's role needs for every Task of its (rendered) definition.

    ``own_arn`` is the machine's own ARN (what ``$$.StateMachine.Id`` resolves to at run time).

    Raises:
        UnmappedCallError: a Task uses an integration not mapped here.
    """
    d = resolver.deployment
    found: list[Requirement] = []
    for name, task in _tasks(definition["States"]):
        integration = task["Resource"]
        if integration not in _INTEGRATIONS:
            raise UnmappedCallError(f"{principal}: state {name} uses {integration}, which has no IAM mapping")
        parameters = task.get("Parameters", {})
        reason = f"state {name} ({integration})"
        if integration.endswith("lambda:invoke"):
            resources = [str(parameters["FunctionName"])]
        elif integration.endswith("sfn:listExecutions"):
            if parameters.get("StateMachineArn.$") != "$$.StateMachine.Id":
                raise UnmappedCallError(f"{principal}: state {name} lists the executions of another state machine")
            resources = [own_arn]
        elif ":glue:" in integration:
            resources = [f"arn:{d.partition}:glue:{d.region}:{d.account}:job/{parameters['JobName']}"]
        else:
            resources = [str(parameters["TopicArn"])]
        for resource in resources:
            for action in _INTEGRATIONS[integration]:
                found.append(Requirement(principal, action, resource, reason=reason))
        if integration.endswith("sns:publish"):
            found += _topic_key_requirements(resolver, resources[0], principal, reason)
    return found


def _topic_key_requirements(resolver: Resolver, topic_arn: str, principal: str, reason: str) -> list[Requirement]:
    """Publishing to a topic encrypted with a customer-managed key: GenerateDataKey and Decrypt on it."""
    topic = next(
        (logical for logical in resolver.of_type("AWS::SNS::Topic") if resolver.ref(logical) == topic_arn), None
    )
    key = None if topic is None else encryption_key_arn(resolver, topic)
    if key is None:
        return []
    via = ("kms:ViaService", f"sns.{resolver.deployment.region}.amazonaws.com")
    return [
        Requirement(principal, "kms:GenerateDataKey", key, (SECURE_TRANSPORT, via), reason),
        Requirement(principal, "kms:Decrypt", key, (SECURE_TRANSPORT, via), reason),
    ]


# What AWS does with a role because of how the template configures its resource (AWS's documented policies).
_LAMBDA_TRACING = ("xray:PutTraceSegments", "xray:PutTelemetryRecords")
_SQS_EVENT_SOURCE = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
_STATES_LOG_DELIVERY = (
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
)
_STATES_TRACING = (
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
)
_GLUE_WRITTEN_ARGUMENTS = ("--TempDir", "--spark-event-logs-path")  # prefixes Glue writes to, not code it loads


def function_principal(resolver: Resolver, logical: str) -> str | None:
    name = resolver.physical_name(logical)
    prefix = f"odp-{resolver.deployment.environment}-"
    principal = name.removeprefix(prefix)
    return principal if name.startswith(prefix) and principal in (FILE_MANAGER, BATCH_MANAGER) else None


def _lambda_requirements(resolver: Resolver) -> Iterator[Requirement]:
    d = resolver.deployment
    for logical, function in resolver.of_type("AWS::Lambda::Function").items():
        principal = function_principal(resolver, logical)
        if principal is None:
            continue
        name = resolver.physical_name(logical)
        properties = function["Properties"]
        group = properties.get("LoggingConfig", {}).get("LogGroup")
        group_name = f"/aws/lambda/{name}" if group is None else str(resolver.resolve(group))
        stream = (
            f"arn:{d.partition}:logs:{d.region}:{d.account}:log-group:{group_name}:log-stream:2026/01/01/[$LATEST]0"
        )
        for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
            yield Requirement(principal, action, stream, reason=f"Lambda writes the logs of {name}")
        if "KmsKeyArn" in properties:  # Lambda decrypts the environment variables with the function's role
            via = ("kms:ViaService", f"lambda.{d.region}.amazonaws.com")
            key = str(resolver.resolve(properties["KmsKeyArn"]))
            yield Requirement(principal, "kms:Decrypt", key, (SECURE_TRANSPORT, via), f"the environment of {name}")
        if properties.get("TracingConfig", {}).get("Mode") == "Active":
            for action in _LAMBDA_TRACING:
                yield Requirement(principal, action, "*", reason=f"active tracing of {name}")
    for mapping in resolver.of_type("AWS::Lambda::EventSourceMapping").values():
        properties = mapping["Properties"]
        principal = function_principal(resolver, resolver.logical_id_of(properties["FunctionName"]))
        source = properties.get("EventSourceArn")
        if principal is None or source is None or ":sqs:" not in str(resolver.resolve(source)):
            continue
        queue = resolver.logical_id_of(source)
        reason = f"the SQS event source of {principal} ({resolver.physical_name(queue)})"
        for action in _SQS_EVENT_SOURCE:
            yield Requirement(principal, action, resolver.get_att(queue, "Arn"), reason=reason)
        key = encryption_key_arn(resolver, queue)
        if key is not None:
            via = ("kms:ViaService", f"sqs.{d.region}.amazonaws.com")
            yield Requirement(principal, "kms:Decrypt", key, (SECURE_TRANSPORT, via), reason)


def glue_job_principal(resolver: Resolver, name: str) -> str | None:
    environment = resolver.deployment.environment
    if name.startswith(f"odp-{environment}-file-processor-"):
        return FILE_PROCESSOR_JOB
    if name.startswith(f"odp-{environment}-stream-"):
        return STREAMING_JOB
    return DATASET_JOB if name == dataset_job_name(environment) else None


def _glue_code_requirements(resolver: Resolver) -> Iterator[Requirement]:
    """Glue loads the script and every s3:// file of the job's arguments (libraries, wheels, the
    datasets' config is listed by the job itself) with the job's role."""
    for job in resolver.of_type("AWS::Glue::Job").values():
        properties = resolver.resolve(job["Properties"])
        principal = glue_job_principal(resolver, properties["Name"])
        if principal is None:
            continue
        values = [properties["Command"]["ScriptLocation"]] + [
            value
            for name, value in properties.get("DefaultArguments", {}).items()
            if name not in _GLUE_WRITTEN_ARGUMENTS
        ]
        uris = {uri for value in values for uri in re.findall(r"s3://[^\s,]+", str(value))}
        for uri in sorted(uris):
            bucket, _, key = uri.removeprefix("s3://").partition("/")
            if not key or key.endswith("/"):
                continue  # a prefix (the raw root), not a file Glue loads
            logical = find_by_name(resolver, "AWS::S3::Bucket", bucket)
            reason = f"Glue loads {uri} for job {properties['Name']}"
            yield Requirement(
                principal,
                "s3:GetObject",
                f"{resolver.get_att(logical, 'Arn')}/{key}",
                (SECURE_TRANSPORT, S3_TLS),
                reason,
            )
            bucket_key = encryption_key_arn(resolver, logical)
            if bucket_key is not None:
                via = ("kms:ViaService", f"s3.{resolver.deployment.region}.amazonaws.com")
                yield Requirement(principal, "kms:Decrypt", bucket_key, (SECURE_TRANSPORT, via), reason)


def _state_machine_platform(resolver: Resolver, logical: str, principal: str) -> Iterator[Requirement]:
    properties = resolver.resources[logical]["Properties"]
    name = resolver.physical_name(logical)
    if properties.get("LoggingConfiguration", {}).get("Level", "OFF") != "OFF":
        for action in _STATES_LOG_DELIVERY:
            yield Requirement(principal, action, "*", reason=f"execution logging of {name}")
    if properties.get("TracingConfiguration", {}).get("Enabled"):
        for action in _STATES_TRACING:
            yield Requirement(principal, action, "*", reason=f"X-Ray tracing of {name}")


def configuration_requirements(resolver: Resolver) -> list[Requirement]:
    """What AWS itself does with the code principals' roles because of the template: the functions'
    logs, tracing and SQS event source; Glue loading the job's code and wheels."""
    return [*_lambda_requirements(resolver), *_glue_code_requirements(resolver)]


def state_machine_platform_requirements(resolver: Resolver, logical: str, principal: str) -> list[Requirement]:
    """Execution logging and X-Ray tracing of one state machine, as configured in the template."""
    return list(_state_machine_platform(resolver, logical, principal))


# Hudi's hive sync in "hms" mode goes through Glue's Hive metastore client on Glue: a table action
# needs the catalog, the database and the table ARN. Derived, not recorded: the sandbox has no catalog.
_CATALOG_DATABASE_ACTIONS = ("glue:GetDatabase",)
_CATALOG_TABLE_ACTIONS = ("glue:GetTable", "glue:CreateTable", "glue:UpdateTable")
_CATALOG_PARTITION_ACTIONS = ("glue:GetPartitions", "glue:BatchCreatePartition", "glue:UpdatePartition")


def _hudi_syncs(
    resolver: Resolver, principal: str, targets: Iterable[tuple[str, str, Any, tuple[str, ...], str]]
) -> list[Requirement]:
    """The catalog sync of each (database, table, table type, partition columns, what) Hudi table: its
    database, its Glue table (``<t>_ro`` and ``<t>_rt`` for MERGE_ON_READ, as Hudi registers both
    views), and its partitions when it is partitioned."""
    d = resolver.deployment
    catalog = f"arn:{d.partition}:glue:{d.region}:{d.account}"
    found: list[Requirement] = []
    for database, table, table_type, partition_by, what in targets:
        reason = f"Hudi's catalog sync of {what} (hive sync through Glue's metastore client; not recorded)"
        scopes = [f"{catalog}:catalog", f"{catalog}:database/{database}"]
        names = [f"{table}_ro", f"{table}_rt"] if table_type.value == "MERGE_ON_READ" else [table]
        actions = _CATALOG_TABLE_ACTIONS + (_CATALOG_PARTITION_ACTIONS if partition_by else ())
        found += [
            Requirement(principal, a, scope, reason=reason) for scope in scopes for a in _CATALOG_DATABASE_ACTIONS
        ]
        for name in names:
            for resource in [*scopes, f"{catalog}:table/{database}/{name}"]:
                found += [Requirement(principal, action, resource, reason=reason) for action in actions]
    return found


def catalog_sync_requirements(
    resolver: Resolver, tables: Iterable[TableConfig], principal: str = FILE_PROCESSOR_JOB
) -> list[Requirement]:
    """What ``principal``'s catalog sync needs for each active configured table (:func:`_hudi_syncs`)."""
    targets = [(t.database, t.target_table, t.table_type, t.partition_by, t.table_id) for t in tables if t.is_active]
    return _hudi_syncs(resolver, principal, targets)


def dataset_catalog_requirements(resolver: Resolver, datasets: Iterable[DatasetConfig]) -> list[Requirement]:
    """What the dataset job's catalog sync needs for each dataset, in its zone's database (:func:`_hudi_syncs`)."""
    targets = [(d.database, d.name, d.table_type, d.partition_by, f"dataset {d.name}") for d in datasets]
    return _hudi_syncs(resolver, DATASET_JOB, targets)


# The streaming job's Kinesis source is read by Glue's Spark connector, not by our code (nothing to
# record). AWS Glue's "Kinesis connections" page asks for Read access level IAM permissions on the
# stream; its options name the calls the connector makes: ListShards (describeShardInterval: "the
# minimum time interval between two ListShards API calls") and GetRecords (maxFetchTimeInMs: "multiple
# GetRecords API calls"). AWS's open-source connector with the same options (awslabs/
# spark-sql-kinesis-connector README) asks for DescribeStreamSummary, ListShards, GetShardIterator and
# GetRecords; Kinesis Data Streams' "Permissions to use user-generated KMS keys" gives a consumer of a
# stream encrypted with a customer-managed key kinesis:GetRecords, kinesis:DescribeStream and kms:Decrypt.
# emitConsumerLagMetrics and --enable-metrics publish under the "Glue" namespace.
_KINESIS_CONSUMER = (
    "kinesis:DescribeStream",
    "kinesis:DescribeStreamSummary",
    "kinesis:ListShards",
    "kinesis:GetShardIterator",
    "kinesis:GetRecords",
)


def streaming_runtime_requirements(resolver: Resolver, tables: Iterable[TableConfig]) -> list[Requirement]:
    """What Glue does with the streaming jobs' role: read the job's Kinesis stream (and decrypt it),
    publish Glue's metrics, and Hudi's catalog sync of the streamed tables (not recorded)."""
    d = resolver.deployment
    by_id = {table.table_id: table for table in tables}
    found: list[Requirement] = []
    for job in resolver.of_type("AWS::Glue::Job").values():
        properties = resolver.resolve(job["Properties"])
        if glue_job_principal(resolver, properties["Name"]) != STREAMING_JOB:
            continue
        args = StreamingJobArgs.from_arguments(properties["DefaultArguments"])
        reason = f"Glue's Kinesis connector reads {args.stream_arn} for job {properties['Name']} (Glue, not our code)"
        found += [Requirement(STREAMING_JOB, action, args.stream_arn, reason=reason) for action in _KINESIS_CONSUMER]
        stream = next(
            (s for s in resolver.of_type("AWS::Kinesis::Stream") if resolver.get_att(s, "Arn") == args.stream_arn), None
        )
        key = None if stream is None else encryption_key_arn(resolver, stream)
        if key is not None:
            via = ("kms:ViaService", f"kinesis.{d.region}.amazonaws.com")
            found.append(Requirement(STREAMING_JOB, "kms:Decrypt", key, (SECURE_TRANSPORT, via), reason))
        metrics = f"Glue's job metrics and consumer lag of {properties['Name']} (emitConsumerLagMetrics)"
        found.append(
            Requirement(
                STREAMING_JOB,
                "cloudwatch:PutMetricData",
                "*",
                (SECURE_TRANSPORT, ("cloudwatch:namespace", "Glue")),
                metrics,
            )
        )
        if args.catalog_sync:
            found += catalog_sync_requirements(resolver, [by_id[t] for t in args.table_ids], STREAMING_JOB)
    return found


SCHEDULER = "scheduler"  # with the schedule's name: EventBridge Scheduler's role for it
EVENTS_RULE = "events-rule"  # with the rule's name: the role EventBridge assumes for a target
# A target's service -> what EventBridge (or Scheduler) does with the role, or with the resource's policy.
_TARGET_ACTIONS = {"states": "states:StartExecution", "sqs": "sqs:SendMessage", "sns": "sns:Publish"}


@dataclass(frozen=True)
class Delivery:
    """EventBridge delivering a rule's events to a target with no role: the target's resource policy (and
    its key's policy) must admit ``service`` for ``action`` from ``source_arn``."""

    rule: str  # the rule's name, for messages
    source_arn: str
    action: str
    resource: str  # the target (queue, topic) ARN
    service: str = "events.amazonaws.com"

    @property
    def principal(self) -> str:
        return f"{EVENTS_RULE} {self.rule}"


def _target_action(principal: str, arn: str) -> str:
    service = arn.split(":")[2]
    if service not in _TARGET_ACTIONS:
        raise UnmappedCallError(f"{principal}: a target on {service} ({arn}) has no IAM mapping")
    return _TARGET_ACTIONS[service]


def scheduler_requirements(resolver: Resolver) -> list[tuple[str, Any, Requirement]]:
    """(principal, role reference, requirement): each schedule's target, started with its role."""
    found = []
    for logical, schedule in resolver.of_type("AWS::Scheduler::Schedule").items():
        target = schedule["Properties"]["Target"]
        principal = f"{SCHEDULER} {resolver.physical_name(logical)}"
        arn = str(resolver.resolve(target["Arn"]))
        reason = f"EventBridge Scheduler starts the target of schedule {resolver.physical_name(logical)}"
        found.append(
            (principal, target["RoleArn"], Requirement(principal, _target_action(principal, arn), arn, reason=reason))
        )
    return found


def rule_requirements(resolver: Resolver) -> tuple[list[tuple[str, Any, Requirement]], list[Delivery]]:
    """Each rule target: with a role, (principal, role reference, requirement); without one, a
    :class:`Delivery` through the target's resource policy (and the dead-letter queue's, when it has one)."""
    with_role: list[tuple[str, Any, Requirement]] = []
    deliveries: list[Delivery] = []
    for logical, rule in resolver.of_type("AWS::Events::Rule").items():
        name = resolver.physical_name(logical)
        principal = f"{EVENTS_RULE} {name}"
        source = resolver.get_att(logical, "Arn")
        for target in rule["Properties"].get("Targets", []):
            arn = str(resolver.resolve(target["Arn"]))
            action = _target_action(principal, arn)
            if "RoleArn" in target:
                reason = f"EventBridge starts the target {target['Id']} of rule {name}"
                with_role.append((principal, target["RoleArn"], Requirement(principal, action, arn, reason=reason)))
            else:
                deliveries.append(Delivery(name, source, action, arn))
            dead_letter = target.get("DeadLetterConfig", {}).get("Arn")
            if dead_letter is not None:
                deliveries.append(Delivery(name, source, "sqs:SendMessage", str(resolver.resolve(dead_letter))))
    return with_role, deliveries

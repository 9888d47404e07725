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
``glue:startJobRun[.sync]``, ``emr-serverless:startJobRun.sync`` and ``sns:publish``, with the actions AWS
documents for each pattern.

Derived (not recorded) requirements: what Glue and EMR Serverless do with a job's role (load its code,
write its logs), Hudi's catalog sync, the post-deploy canary's table of each job (its sync, catalog entries, objects and
removal), the lease takeover's GetJobRun on either engine, and, where Lake Formation governs the lake, each job's
``lakeformation:GetDataAccess``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from odp.config.datasets import DatasetConfig, of_engine
from odp.config.items import TABLE_CONFIG_CADENCE_INDEX
from odp.config.models import EngineName, TableConfig, TableType
from odp.contracts.state_machines import EMR_SERVERLESS_RUN_JOB
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import TrackerTableNames, canary_table_name
from odp.tracker.dataset_history import dataset_job_name
from sandbox.aws_calls import BATCH_MANAGER, DATASET_JOB, FILE_MANAGER, FILE_PROCESSOR_JOB, STREAMING_JOB, AwsCall
from tests.infra.permissions.template import (
    EMR_DATASET_JOB,
    Resolver,
    emr_serverless_runs,
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
    lake_grants = _lake_grant_requirements(call, resolver, need)
    if lake_grants is not None:
        return lake_grants
    return _control_plane_requirements(call, resolver, translation, need)


_LAKE_GRANT_OPERATIONS = ("GrantPermissions", "GetDataCellsFilter", "CreateDataCellsFilter", "UpdateDataCellsFilter")


def _lake_grant_requirements(
    call: AwsCall, resolver: Resolver, need: Callable[..., Requirement]
) -> list[Requirement] | None:
    """``python -m odp lake-grants``: Glue's GetTable (does a table exist yet, its columns; Glue checks the catalog,
    the database and the table) and Lake Formation's grant and data cells filter calls (no resource-level
    permission); None for any other call."""
    if call.service == "glue" and call.operation == "GetTable":
        d = resolver.deployment
        catalog = f"arn:{d.partition}:glue:{d.region}:{d.account}"
        database, table = call.params["DatabaseName"], call.params["Name"]
        scopes = (f"{catalog}:catalog", f"{catalog}:database/{database}", f"{catalog}:table/{database}/{table}")
        return [need("glue:GetTable", scope) for scope in scopes]
    if call.service == "lakeformation" and call.operation in _LAKE_GRANT_OPERATIONS:
        return [need(f"lakeformation:{call.operation}", "*")]
    return None


def _control_plane_requirements(
    call: AwsCall, resolver: Resolver, translation: Translation, need: Callable[..., Requirement]
) -> list[Requirement]:
    """CloudWatch metrics, a state machine's description, Glue job runs, EMR Serverless runs, an SNS publish.

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
    if call.service == "emr-serverless" and call.operation in ("StartJobRun", "GetJobRun"):
        # the canary: start a run of the application as its execution role, then poll it
        application = emr_application_arn(resolver, call.params["applicationId"])
        if call.operation == "GetJobRun":
            return [need("emr-serverless:GetJobRun", f"{application}/jobruns/{call.params['jobRunId']}")]
        role = translation.arn(resolver, call.params["executionRoleArn"])
        return [
            need("emr-serverless:StartJobRun", application),
            need("iam:PassRole", role, ("iam:PassedToService", EMR_SERVICE)),
        ]
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
    # Step Functions' "Create and manage Amazon EMR Serverless applications" page: start a run of the application,
    # watch and cancel it, pass the execution role, and the managed rule the .sync pattern learns the end from.
    EMR_SERVERLESS_RUN_JOB: ("emr-serverless:StartJobRun",),
}
_EMR_WATCH = ("emr-serverless:GetJobRun", "emr-serverless:CancelJobRun")
_EMR_SYNC_RULE = ("events:PutTargets", "events:PutRule", "events:DescribeRule")
EMR_SYNC_RULE = "StepFunctionsGetEventsForEMRServerlessJobRule"
EMR_SERVICE = "emr-serverless.amazonaws.com"
EXAMPLE_JOB_RUN = "00example"  # a job run id (AWS assigns it): what the jobruns/* grants must match


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
        elif integration == EMR_SERVERLESS_RUN_JOB:
            found += _emr_serverless_task(principal, parameters, resolver, reason)
            resources = [emr_application_arn(resolver, str(parameters["ApplicationId"]))]
        else:
            resources = [str(parameters["TopicArn"])]
        for resource in resources:
            for action in _INTEGRATIONS[integration]:
                found.append(Requirement(principal, action, resource, reason=reason))
        if integration.endswith("sns:publish"):
            found += _topic_key_requirements(resolver, resources[0], principal, reason)
    for name, state in _distributed_maps(definition["States"]):
        found += _distributed_map_requirements(principal, name, state, resolver, own_arn)
    return found


def _distributed_maps(states: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, state in states.items():
        processor = state.get("ItemProcessor") or {}
        if state["Type"] == "Map" and processor.get("ProcessorConfig", {}).get("Mode") == "DISTRIBUTED":
            yield name, state


def _distributed_map_requirements(
    principal: str, name: str, state: Mapping[str, Any], resolver: Resolver, own_arn: str
) -> list[Requirement]:
    """A Distributed Map (Step Functions' "IAM policies for Distributed Map states"): start child executions of the
    machine itself, describe and stop them; read its items from S3 (ItemReader) and write its results (ResultWriter),
    with the bucket's key. An example object under each prefix stands for the per-execution names.

    Raises:
        UnmappedCallError: the reader or writer is not an S3 object the template's buckets hold.
    """
    reason = f"state {name} (Distributed Map)"
    executions = own_arn.replace(":stateMachine:", ":execution:") + "/example-map-run:example-child"
    found = [
        Requirement(principal, "states:StartExecution", own_arn, reason=reason),
        Requirement(principal, "states:DescribeExecution", executions, reason=reason),
        Requirement(principal, "states:StopExecution", executions, reason=reason),
    ]
    reader, writer = state["ItemReader"], state["ResultWriter"]
    if reader["Resource"] != "arn:aws:states:::s3:getObject" or writer["Resource"] != "arn:aws:states:::s3:putObject":
        raise UnmappedCallError(f"{principal}: state {name} reads or writes its items other than as S3 objects")
    prefix = str(writer["Parameters"]["Prefix"])  # plans/<cadence>/results: the plans are under plans/<cadence>/
    plans = prefix.rsplit("/", 1)[0]
    objects = [
        ("s3:GetObject", "kms:Decrypt", str(reader["Parameters"]["Bucket"]), f"{plans}/example/batches.json"),
        ("s3:PutObject", "kms:GenerateDataKey", str(writer["Parameters"]["Bucket"]), f"{prefix}/example/manifest.json"),
    ]
    for action, key_action, bucket, key in objects:
        logical = find_by_name(resolver, "AWS::S3::Bucket", bucket)
        arn = f"{resolver.get_att(logical, 'Arn')}/{key}"
        found.append(Requirement(principal, action, arn, (SECURE_TRANSPORT, S3_TLS), reason))
        bucket_key = encryption_key_arn(resolver, logical)
        if bucket_key is not None:
            via = ("kms:ViaService", f"s3.{resolver.deployment.region}.amazonaws.com")
            found.append(Requirement(principal, key_action, bucket_key, (SECURE_TRANSPORT, via), reason))
    return found


def emr_application_arn(resolver: Resolver, application_id: str) -> str:
    d = resolver.deployment
    return f"arn:{d.partition}:emr-serverless:{d.region}:{d.account}:/applications/{application_id}"


def _emr_serverless_task(
    principal: str, parameters: Mapping[str, Any], resolver: Resolver, reason: str
) -> list[Requirement]:
    """What emr-serverless:startJobRun.sync needs besides StartJobRun: GetJobRun and CancelJobRun on the runs,
    iam:PassRole of the execution role to EMR Serverless only, and the .sync pattern's managed rule."""
    d = resolver.deployment
    run = f"{emr_application_arn(resolver, str(parameters['ApplicationId']))}/jobruns/{EXAMPLE_JOB_RUN}"
    rule = f"arn:{d.partition}:events:{d.region}:{d.account}:rule/{EMR_SYNC_RULE}"
    passed = (SECURE_TRANSPORT, ("iam:PassedToService", EMR_SERVICE))
    return [
        *(Requirement(principal, action, run, reason=reason) for action in _EMR_WATCH),
        Requirement(principal, "iam:PassRole", str(parameters["ExecutionRoleArn"]), passed, reason),
        *(Requirement(principal, action, rule, reason=reason) for action in _EMR_SYNC_RULE),
    ]


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


def _code_requirements(resolver: Resolver, principal: str, uris: Iterable[str], loader: str) -> Iterator[Requirement]:
    """s3:GetObject (and the bucket key's kms:Decrypt) for each s3:// file ``loader`` loads with the principal's role."""
    for uri in sorted(set(uris)):
        bucket, _, key = uri.removeprefix("s3://").partition("/")
        if not key or key.endswith("/"):
            continue  # a prefix (the raw root), not a file the engine loads
        logical = find_by_name(resolver, "AWS::S3::Bucket", bucket)
        reason = f"{loader} loads {uri}"
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
        uris = re.findall(r"s3://[^\s,]+", " ".join(str(value) for value in values))
        yield from _code_requirements(resolver, principal, uris, f"Glue (job {properties['Name']})")


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


# EMR Serverless's "Logging to Amazon CloudWatch" page: the job runtime role finds the log group, writes its
# streams, and (logs encrypted with a customer-managed key) uses that key.
_EMR_LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams")
_EMR_LOG_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")


def emr_serverless_requirements(resolver: Resolver) -> list[Requirement]:
    """What EMR Serverless does with the execution role of each task on it (File Processor or dataset job: the
    job's own calls are the recorded ones): load the entry point and the ``--py-files`` of its Spark settings, and
    write the application's CloudWatch logs (find the group, write its streams, encrypt with its key)."""
    d = resolver.deployment
    found: list[Requirement] = []
    for run in emr_serverless_runs(resolver):
        submit = run.parameters["JobDriver"]["SparkSubmit"]
        uris = [submit["EntryPoint"], *re.findall(r"s3://[^\s,]+", submit.get("SparkSubmitParameters", ""))]
        loader = f"EMR Serverless (application {run.application}, state machine {run.state_machine})"
        found += _code_requirements(resolver, run.principal, uris, loader)
        properties = resolver.resources[run.application]["Properties"]
        logging = properties.get("MonitoringConfiguration", {}).get("CloudWatchLoggingConfiguration", {})
        if not logging.get("Enabled"):
            continue
        group = str(resolver.resolve(logging["LogGroupName"]))
        reason = f"EMR Serverless writes the logs of application {run.application} to {group}"
        groups = f"arn:{d.partition}:logs:{d.region}:{d.account}:log-group:"
        stream = f"{groups}{group}:log-stream:applications/{run.application}/jobs/{EXAMPLE_JOB_RUN}/SPARK_DRIVER/stdout"
        found.append(Requirement(run.principal, "logs:DescribeLogGroups", f"{groups}{group}", reason=reason))
        found += [Requirement(run.principal, action, stream, reason=reason) for action in _EMR_LOG_ACTIONS]
        if "EncryptionKeyArn" in logging:
            key = str(resolver.resolve(logging["EncryptionKeyArn"]))
            found += [Requirement(run.principal, action, key, reason=reason) for action in _EMR_LOG_KEY_ACTIONS]
    return found


def lease_requirements(resolver: Resolver) -> list[Requirement]:
    """The File Processor takes a table's lease, the dataset job a dataset's (``dataset:<name>``, etl/datasets/
    lease.py), over once the job run holding it has ended, asking the engine that ran the holder
    (odp/tracker/job_runs.py JobRunsByEngine): glue:GetJobRun on any Glue job of the same code (a cadence's File
    Processor job; the dataset job), emr-serverless:GetJobRun on any run of an EMR Serverless application. Derived,
    not recorded: the local flow takes no lease over."""
    d = resolver.deployment
    found: list[Requirement] = []
    principals = {FILE_PROCESSOR_JOB}
    for job in resolver.of_type("AWS::Glue::Job").values():
        name = str(resolver.resolve(job["Properties"]["Name"]))
        principal = glue_job_principal(resolver, name)
        if principal in (FILE_PROCESSOR_JOB, DATASET_JOB):
            principals.add(principal)  # the dataset job, when datasets are configured
            arn = f"arn:{d.partition}:glue:{d.region}:{d.account}:job/{name}"
            reason = f"a lease held by a run of Glue job {name} (lease takeover, odp/tracker/job_runs.py)"
            found.append(Requirement(principal, "glue:GetJobRun", arn, reason=reason))
    for application in resolver.of_type("AWS::EMRServerless::Application"):
        run = f"{emr_application_arn(resolver, application)}/jobruns/{EXAMPLE_JOB_RUN}"
        reason = f"a lease held by a run of EMR Serverless application {application} (odp/tracker/job_runs.py)"
        found += [
            Requirement(principal, "emr-serverless:GetJobRun", run, reason=reason) for principal in sorted(principals)
        ]
    return found


def lake_formation_on(resolver: Resolver) -> bool:
    """Lake Formation governs the lake: its locations are registered (infrastructure/access/lake_formation.py)."""
    return bool(resolver.of_type("AWS::LakeFormation::Resource"))


def lake_formation_requirements(resolver: Resolver, job_principals: Iterable[str]) -> list[Requirement]:
    """With the lake's locations registered in Lake Formation, the Glue Data Catalog and the engines' S3 access
    to a registered location ask Lake Formation for the job's data access: lakeformation:GetDataAccess (no
    resource-level permission) for every job principal whose catalog sync or reads touch the lake."""
    if not lake_formation_on(resolver):
        return []
    reason = "Lake Formation is on: the catalog sync and reads of registered locations (lakeformation:GetDataAccess)"
    return [Requirement(principal, "lakeformation:GetDataAccess", "*", reason=reason) for principal in job_principals]


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
    """What the dataset job's catalog sync needs for each dataset, in its zone's database (:func:`_hudi_syncs`): the
    Glue dataset job's role for every dataset, the EMR Serverless execution role (:data:`EMR_DATASET_JOB`, when the
    datasets state machine runs some there) for the datasets with ``engine: emr_serverless`` only (the role's catalog
    scope is theirs)."""
    datasets = list(datasets)

    def targets(chosen: Iterable[DatasetConfig]) -> list[tuple[str, str, Any, tuple[str, ...], str]]:
        return [(d.database, d.name, d.table_type, d.partition_by, f"dataset {d.name}") for d in chosen]

    found = _hudi_syncs(resolver, DATASET_JOB, targets(datasets))
    if any(run.principal == EMR_DATASET_JOB for run in emr_serverless_runs(resolver)):
        found += _hudi_syncs(resolver, EMR_DATASET_JOB, targets(of_engine(datasets, EngineName.EMR_SERVERLESS)))
    return found


# The post-deploy canary's table (etl/jobs/canary_table.py): each job's harmless mode writes ``_odp_canary_<kind>``
# in a database of its own catalog scope, syncs it, checks its catalog entries, reads it back and removes it. Derived
# for every database the job may pick (its tables' or datasets'), so the requirement does not follow the code's choice.
_CANARY_ENTRY_ACTIONS = ("glue:GetTable", "glue:DeleteTable")
_CANARY_OBJECT_ACTIONS = ("s3:PutObject", "s3:GetObject", "s3:DeleteObject")


def _canary_table(
    resolver: Resolver, principal: str, zone: str, database: str, *, name: str, table_type: Any, tombstones: bool
) -> list[Requirement]:
    """One canary table of ``principal``: Hudi's catalog sync of it (partitioned by ``region``), GetTable and DeleteTable
    of its entries (``<t>``, ``<t>_ro``, ``<t>_rt``), and its objects (and tombstones) in the ``zone`` bucket."""
    d = resolver.deployment
    catalog = f"arn:{d.partition}:glue:{d.region}:{d.account}"
    reason = f"the post-deploy canary's table {database}.{name} (etl/jobs/canary_table.py; derived, not recorded)"
    found = _hudi_syncs(resolver, principal, [(database, name, table_type, ("region",), f"canary table {name}")])
    for entry in (name, f"{name}_ro", f"{name}_rt"):
        for resource in (f"{catalog}:catalog", f"{catalog}:database/{database}", f"{catalog}:table/{database}/{entry}"):
            found += [Requirement(principal, action, resource, reason=reason) for action in _CANARY_ENTRY_ACTIONS]
    bucket = find_bucket(resolver, zone.replace("_", "-"))
    bucket_arn = resolver.get_att(bucket, "Arn")
    key = encryption_key_arn(resolver, bucket)
    via = ("kms:ViaService", f"s3.{d.region}.amazonaws.com")
    prefixes = [f"{database}/{name}/", *([f"{database}/_odp_tombstones/{name}/"] if tombstones else [])]
    for prefix in prefixes:
        listing = (SECURE_TRANSPORT, S3_TLS, ("s3:prefix", prefix))
        found.append(Requirement(principal, "s3:ListBucket", bucket_arn, listing, reason))
        objects = [
            Requirement(
                principal, a, f"{bucket_arn}/{prefix}.hoodie/hoodie.properties", (SECURE_TRANSPORT, S3_TLS), reason
            )
            for a in _CANARY_OBJECT_ACTIONS
        ]
        found += objects
    if key is not None:
        found += [
            Requirement(principal, a, key, (SECURE_TRANSPORT, via), reason)
            for a in ("kms:Decrypt", "kms:GenerateDataKey")
        ]
    return found


def _canary_reads(resolver: Resolver) -> list[Requirement]:
    """The File Processor's harmless mode reads before its canary table: DescribeTable of every tracker table
    (etl/jobs/canary.py), then its cadence's active table ids (table_config's ``active_by_cadence`` index) and the
    first one's item (etl/jobs/canary_table.py ``file_processor_canary``)."""
    d = resolver.deployment
    reason = "the File Processor's harmless mode (etl/jobs/canary.py, canary_table.py; derived, not recorded)"
    via = ("kms:ViaService", f"dynamodb.{d.region}.amazonaws.com")
    names = TrackerTableNames.for_environment(d.environment)
    found: list[Requirement] = []
    for name in names.as_dict().values():
        logical = find_by_name(resolver, "AWS::DynamoDB::GlobalTable", name)
        arn = resolver.get_att(logical, "Arn")
        found.append(Requirement(FILE_PROCESSOR_JOB, "dynamodb:DescribeTable", arn, reason=reason))
        if name == names.table_config:
            index = f"{arn}/index/{TABLE_CONFIG_CADENCE_INDEX}"
            found.append(Requirement(FILE_PROCESSOR_JOB, "dynamodb:Query", index, reason=reason))
            found.append(Requirement(FILE_PROCESSOR_JOB, "dynamodb:GetItem", arn, reason=reason))
            key = encryption_key_arn(resolver, logical)
            if key is not None:
                found.append(Requirement(FILE_PROCESSOR_JOB, "kms:Decrypt", key, (SECURE_TRANSPORT, via), reason))
    return found


def raw_canary_requirements(resolver: Resolver, tables: Iterable[TableConfig]) -> list[Requirement]:
    """The File Processor's harmless-mode reads (:func:`_canary_reads`) and its canary table in the database of any
    active table (it picks its cadence's first), and the streaming job's in any streamed table's database (it picks
    the first): MERGE_ON_READ, in the raw bucket."""
    tables = list(tables)
    found: list[Requirement] = _canary_reads(resolver)
    places = {  # (principal, database, table name): one per cadence and engine, one per stream
        *(
            (FILE_PROCESSOR_JOB, t.database, canary_table_name("file_processor", f"{t.cadence}_{engine.value}"))
            for t in tables
            if t.is_active and t.stream is None
            for engine in EngineName
        ),
        *((STREAMING_JOB, t.database, canary_table_name("streaming_job", t.stream)) for t in tables if t.stream),
    }
    for principal, database, name in sorted(places):
        found += _canary_table(
            resolver, principal, "raw", database, name=name, table_type=TableType.MERGE_ON_READ, tombstones=True
        )
    return found


def dataset_canary_requirements(resolver: Resolver, datasets: Iterable[DatasetConfig]) -> list[Requirement]:
    """The dataset job's canary table (COPY_ON_WRITE) in the zone and database of any dataset of its engine: every
    dataset for the Glue job, the datasets on EMR Serverless for :data:`EMR_DATASET_JOB` (its catalog scope)."""
    datasets = list(datasets)

    def on(principal: str, chosen: Iterable[DatasetConfig]) -> list[Requirement]:
        name = canary_table_name("dataset_job", "emr_serverless" if principal == EMR_DATASET_JOB else "glue")
        places = sorted({(d.zone.value, d.database) for d in chosen})
        return [
            r
            for zone, database in places
            for r in _canary_table(
                resolver, principal, zone, database, name=name, table_type=TableType.COPY_ON_WRITE, tombstones=False
            )
        ]

    found = on(DATASET_JOB, datasets) if datasets else []
    if any(run.principal == EMR_DATASET_JOB for run in emr_serverless_runs(resolver)):
        found += on(EMR_DATASET_JOB, of_engine(datasets, EngineName.EMR_SERVERLESS))
    return found


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

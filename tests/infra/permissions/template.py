"""A synthesized CloudFormation template, read the way IAM will see it once deployed.

:class:`Resolver` turns ``Ref``, ``Fn::GetAtt``, ``Fn::Join``, ``Fn::Sub``, ``Fn::Select`` and
``Fn::Split`` into the strings CloudFormation would produce for the stack's account and region
(physical names from the template's properties, ARNs in each service's documented form); KMS keys,
whose ids AWS assigns, get ``key/<logical id>`` (an EMR Serverless application: ``/applications/<logical id>``). :func:`principals` finds the role of each deployed
principal by what it runs (the function name, the Glue job, the execution role of an EMR Serverless
task, the state machine, the config-loader role name), and :func:`role_policies` collects every policy document attached to a role. Anything
this module cannot resolve raises :class:`TemplateError` naming it: never a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from odp.contracts.state_machines import DATASET_JOB_NAME as EMR_DATASET_JOB_NAME
from odp.contracts.state_machines import FILE_PROCESSOR_JOB as EMR_FILE_PROCESSOR_JOB
from odp.naming import resource_prefix
from odp.tracker.dataset_history import dataset_job_name
from sandbox.aws_calls import (
    BATCH_MANAGER,
    CONFIG_LOADER,
    DATASET_JOB,
    FILE_MANAGER,
    FILE_PROCESSOR_JOB,
    STREAMING_JOB,
)

STATE_MACHINE = "state-machine"  # with the machine's name: its integrations are checked per machine
# The File Processor's code run by EMR Serverless (a cadence with engine: emr_serverless), as its execution role
EMR_FILE_PROCESSOR = f"{FILE_PROCESSOR_JOB}@emr-serverless"
# The dataset job's code run by EMR Serverless (a dataset with engine: emr_serverless), as its execution role
EMR_DATASET_JOB = f"{DATASET_JOB}@emr-serverless"
# principal -> the principal whose code it runs on another engine: the code's calls and needs apply to both roles
RUNS_CODE_OF = {EMR_FILE_PROCESSOR: FILE_PROCESSOR_JOB, EMR_DATASET_JOB: DATASET_JOB}
# etl/jobs/emr_serverless.py's first argument (the job a run starts) -> the principal that runs its code there
_EMR_PRINCIPAL_OF_JOB = {EMR_FILE_PROCESSOR_JOB: EMR_FILE_PROCESSOR, EMR_DATASET_JOB_NAME: EMR_DATASET_JOB}
_ENTRY_POINT_JOB = re.compile(r"^States\.Array\('(\w+)'")


class TemplateError(ValueError):
    """Something in the template could not be resolved or found; the message names it."""


@dataclass(frozen=True)
class Deployment:
    """Where a template is deployed: the environment name, its account and region."""

    environment: str
    account: str
    region: str
    partition: str = "aws"


@dataclass(frozen=True)
class Role:
    """A role of the template: its logical id and, for messages, its physical name when it has one."""

    logical_id: str
    name: str | None

    @property
    def label(self) -> str:
        return f"role {self.name}" if self.name else f"role {self.logical_id}"


_ARN_FORMS = {  # resource type -> (attribute, ARN built from the physical name)
    "AWS::DynamoDB::GlobalTable": ("TableName", "arn:{p}:dynamodb:{r}:{a}:table/{n}"),
    "AWS::DynamoDB::Table": ("TableName", "arn:{p}:dynamodb:{r}:{a}:table/{n}"),
    "AWS::S3::Bucket": ("BucketName", "arn:{p}:s3:::{n}"),
    "AWS::Lambda::Function": ("FunctionName", "arn:{p}:lambda:{r}:{a}:function:{n}"),
    "AWS::IAM::Role": ("RoleName", "arn:{p}:iam::{a}:role/{n}"),
    "AWS::SQS::Queue": ("QueueName", "arn:{p}:sqs:{r}:{a}:{n}"),
    "AWS::SNS::Topic": ("TopicName", "arn:{p}:sns:{r}:{a}:{n}"),
    "AWS::StepFunctions::StateMachine": ("StateMachineName", "arn:{p}:states:{r}:{a}:stateMachine:{n}"),
    "AWS::Logs::LogGroup": ("LogGroupName", "arn:{p}:logs:{r}:{a}:log-group:{n}:*"),
    "AWS::KMS::Key": (None, "arn:{p}:kms:{r}:{a}:key/{n}"),
    "AWS::Kinesis::Stream": ("Name", "arn:{p}:kinesis:{r}:{a}:stream/{n}"),
    "AWS::Events::Rule": ("Name", "arn:{p}:events:{r}:{a}:rule/{n}"),
    "AWS::Scheduler::Schedule": ("Name", "arn:{p}:scheduler:{r}:{a}:schedule/default/{n}"),
    # AWS assigns the application id: the logical id stands in for it (as for a KMS key)
    "AWS::EMRServerless::Application": (None, "arn:{p}:emr-serverless:{r}:{a}:/applications/{n}"),
}
# Resource types whose Ref is the ARN (the others' Ref is the physical name).
_REF_IS_ARN = {"AWS::SNS::Topic", "AWS::StepFunctions::StateMachine", "AWS::KMS::Key"}


class Resolver:
    """Resolves intrinsic functions of one template for one deployment."""

    def __init__(self, template: Mapping[str, Any], deployment: Deployment) -> None:
        self.template = template
        self.resources: Mapping[str, Any] = template.get("Resources", {})
        self.deployment = deployment
        self._pseudo = {
            "AWS::AccountId": deployment.account,
            "AWS::Region": deployment.region,
            "AWS::Partition": deployment.partition,
            "AWS::URLSuffix": "amazonaws.com",
        }

    def resolve(self, value: Any) -> Any:
        """``value`` with every intrinsic function replaced by its string (recursively).

        Raises:
            TemplateError: an intrinsic or reference this resolver does not know.
        """
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((name, argument),) = value.items()
            if name == "Ref" or name.startswith("Fn::") or name == "Condition":
                return self._intrinsic(name, argument)
        return {k: self.resolve(v) for k, v in value.items()}

    def _intrinsic(self, name: str, argument: Any) -> Any:
        if name == "Ref":
            return self.ref(argument)
        if name == "Fn::GetAtt":
            logical, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
            return self.get_att(logical, attribute)
        if name == "Fn::Join":
            separator, parts = argument
            return separator.join(str(self.resolve(part)) for part in parts)
        if name == "Fn::Select":
            index, items = argument
            return self.resolve(items)[int(self.resolve(index))]
        if name == "Fn::Split":
            separator, text = argument
            return str(self.resolve(text)).split(separator)
        if name == "Fn::Sub":
            return self._sub(argument)
        raise TemplateError(f"intrinsic {name} is not supported: {argument}")

    def _sub(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else argument

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(self.resolve(variables[name]))
            if "." in name:
                return str(self.get_att(*name.split(".", 1)))
            return str(self.ref(name))

        return re.sub(r"\$\{([^}!]+)\}", replace, text)

    def ref(self, name: str) -> str:
        if name in self._pseudo:
            return self._pseudo[name]
        resource = self._resource(name)
        if resource["Type"] in _REF_IS_ARN:
            return self.get_att(name, "Arn")
        if resource["Type"] == "AWS::SQS::Queue":
            queue = self.physical_name(name)
            return f"https://sqs.{self.deployment.region}.amazonaws.com/{self.deployment.account}/{queue}"
        return self.physical_name(name)

    def get_att(self, logical: str, attribute: str) -> str:
        resource = self._resource(logical)
        kind = resource["Type"]
        if attribute in ("Arn", "TopicArn", "QueueArn") and kind in _ARN_FORMS:
            d = self.deployment
            return _ARN_FORMS[kind][1].format(p=d.partition, r=d.region, a=d.account, n=self.physical_name(logical))
        if attribute == "QueueName" and kind == "AWS::SQS::Queue":
            return self.physical_name(logical)
        if attribute == "ApplicationId" and kind == "AWS::EMRServerless::Application":
            return logical
        raise TemplateError(f"Fn::GetAtt {logical}.{attribute} ({kind}) is not supported")

    def physical_name(self, logical: str) -> str:
        """The resource's name property, or (no name set, or a KMS key) its logical id."""
        kind = self._resource(logical)["Type"]
        attribute = _ARN_FORMS.get(kind, ("Name", ""))[0]
        name = self._resource(logical).get("Properties", {}).get(attribute) if attribute else None
        return logical if name is None else str(self.resolve(name))

    def _resource(self, logical: str) -> Mapping[str, Any]:
        try:
            return self.resources[logical]
        except KeyError as error:
            raise TemplateError(f"no resource {logical!r} in the template") from error

    def of_type(self, kind: str) -> dict[str, Mapping[str, Any]]:
        return {logical: r for logical, r in self.resources.items() if r["Type"] == kind}

    def logical_id_of(self, value: Any) -> str:
        """The logical id a ``Ref`` / ``Fn::GetAtt`` points at.

        Raises:
            TemplateError: the value is not a reference to a resource.
        """
        if isinstance(value, dict) and "Ref" in value:
            return value["Ref"]
        if isinstance(value, dict) and "Fn::GetAtt" in value:
            return value["Fn::GetAtt"][0]
        raise TemplateError(f"expected a Ref or Fn::GetAtt to a resource, found {value!r}")


def role_of(resolver: Resolver, logical: str) -> Role:
    properties = resolver.resources[logical].get("Properties", {})
    name = properties.get("RoleName")
    return Role(logical, None if name is None else str(resolver.resolve(name)))


def principals(resolver: Resolver) -> dict[str, list[Role]]:
    """Principal -> its roles: the two functions' roles, the Glue jobs' role(s), for a cadence (a dataset) on EMR
    Serverless the execution role its job runs assume (:data:`EMR_FILE_PROCESSOR`, :data:`EMR_DATASET_JOB`), each state machine's
    role, the config-loader role (``odp-<env>-config-loader``) and, when datasets or streams are
    configured, the dataset job's role and the streaming jobs' role.

    Raises:
        TemplateError: a principal has no role in the template.
    """
    prefix = resource_prefix(resolver.deployment.environment)
    found: dict[str, list[Role]] = {name: [] for name in (FILE_MANAGER, BATCH_MANAGER, FILE_PROCESSOR_JOB)}
    found[CONFIG_LOADER] = []
    found[STATE_MACHINE] = []

    def add(principal: str, reference: Any) -> None:
        role = role_of(resolver, resolver.logical_id_of(reference))
        if role not in found[principal]:
            found[principal].append(role)

    for resource in resolver.of_type("AWS::Lambda::Function").values():
        name = resolver.resolve(resource["Properties"].get("FunctionName"))
        for principal in (FILE_MANAGER, BATCH_MANAGER):
            if name == f"{prefix}-{principal}":
                add(principal, resource["Properties"]["Role"])
    for resource in resolver.of_type("AWS::Glue::Job").values():
        job_name = str(resolver.resolve(resource["Properties"]["Name"]))
        if job_name.startswith(f"{prefix}-file-processor-"):
            add(FILE_PROCESSOR_JOB, resource["Properties"]["Role"])
        if job_name == dataset_job_name(resolver.deployment.environment):
            found.setdefault(DATASET_JOB, [])
            add(DATASET_JOB, resource["Properties"]["Role"])
        if job_name.startswith(f"{prefix}-stream-"):
            found.setdefault(STREAMING_JOB, [])
            add(STREAMING_JOB, resource["Properties"]["Role"])
    for resource in resolver.of_type("AWS::StepFunctions::StateMachine").values():
        add(STATE_MACHINE, resource["Properties"]["RoleArn"])
    for run in emr_serverless_runs(resolver):
        found.setdefault(run.principal, [])
        add(run.principal, {"Ref": run.execution_role})
    for logical in resolver.of_type("AWS::IAM::Role"):
        if role_of(resolver, logical).name == f"{prefix}-config-loader":
            add(CONFIG_LOADER, {"Ref": logical})
    missing = sorted(name for name, roles in found.items() if not roles)
    if missing:
        raise TemplateError(f"no role found in the template for {', '.join(missing)}")
    return found


@dataclass(frozen=True)
class EmrServerlessRun:
    """A state machine task starting a job on EMR Serverless, from its state machine's substitutions: the File
    Processor of a cadence (``RunFileProcessor``) or the dataset job of the datasets state machine
    (``RefreshDatasetsOnEmr``)."""

    state_machine: str  # logical id
    application: str  # logical id of the AWS::EMRServerless::Application
    execution_role: str  # logical id of the role the job run assumes
    parameters: Mapping[str, Any]  # the task's resolved Parameters (JobDriver.SparkSubmit: entry point, settings)
    principal: str = EMR_FILE_PROCESSOR  # whose code the run runs (:data:`RUNS_CODE_OF`), by its first argument


def _emr_tasks(resolver: Resolver, values: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The parameters of the ``emr-serverless:startJobRun.sync`` task a state machine's substitutions fill: the engine
    fields of ``odp.contracts.state_machines.EmrServerlessRun``, each JSON-escaped text inside its definition."""
    if "ApplicationId" not in values:
        return []

    def text(name: str) -> str:
        return json.loads('"' + str(resolver.resolve(values[name])) + '"')

    submit = {
        "EntryPoint": text("EntryPoint"),
        "EntryPointArguments.$": text("EntryPointArguments"),
        "SparkSubmitParameters": text("SparkSubmitParameters"),
    }
    return [
        {
            "ApplicationId": text("ApplicationId"),
            "ExecutionRoleArn": text("ExecutionRoleArn"),
            "ExecutionTimeoutMinutes": int(str(resolver.resolve(values["ExecutionTimeoutMinutes"]))),
            "JobDriver": {"SparkSubmit": submit},
        }
    ]


def emr_serverless_runs(resolver: Resolver) -> list[EmrServerlessRun]:
    """Every state machine task starting ``emr-serverless:startJobRun.sync`` (a cadence or a dataset with ``engine:
    emr_serverless``): its application, its execution role (found by the ARNs its parameters name) and whose code it
    runs (the job its entry point's first argument names).

    Raises:
        TemplateError: the parameters name an application, a role or a job that is not in the template.
    """
    applications = {logical: logical for logical in resolver.of_type("AWS::EMRServerless::Application")}
    roles = {resolver.get_att(logical, "Arn"): logical for logical in resolver.of_type("AWS::IAM::Role")}
    found = []
    for logical, machine in resolver.of_type("AWS::StepFunctions::StateMachine").items():
        for parameters in _emr_tasks(resolver, machine["Properties"].get("DefinitionSubstitutions", {})):
            application, role = parameters["ApplicationId"], parameters["ExecutionRoleArn"]
            if application not in applications or role not in roles:
                raise TemplateError(
                    f"state machine {logical} runs application {application} as {role}: not in the template"
                )
            arguments = parameters["JobDriver"]["SparkSubmit"].get("EntryPointArguments.$", "")
            job = _ENTRY_POINT_JOB.match(arguments)
            if job is None or job.group(1) not in _EMR_PRINCIPAL_OF_JOB:
                raise TemplateError(f"state machine {logical} starts an EMR Serverless job this test does not know")
            principal = _EMR_PRINCIPAL_OF_JOB[job.group(1)]
            found.append(EmrServerlessRun(logical, application, roles[role], parameters, principal))
    return found


def role_policies(resolver: Resolver, role: Role) -> list[dict[str, Any]]:
    """Every policy document of the role, resolved: inline policies, AWS::IAM::Policy and template
    managed policies that attach to it.

    Raises:
        TemplateError: the role has a managed policy that is not in the template (its document is unknown).
    """
    documents: list[dict[str, Any]] = []
    properties = resolver.resources[role.logical_id].get("Properties", {})
    for inline in properties.get("Policies", []):
        documents.append(resolver.resolve(inline["PolicyDocument"]))
    for arn in properties.get("ManagedPolicyArns", []):
        if isinstance(arn, dict) and "Ref" in arn and arn["Ref"] in resolver.resources:
            documents.append(resolver.resolve(resolver.resources[arn["Ref"]]["Properties"]["PolicyDocument"]))
        else:
            raise TemplateError(f"{role.label}: managed policy {resolver.resolve(arn)} is not in the template")
    for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
        for resource in resolver.of_type(kind).values():
            attached = resource["Properties"].get("Roles", [])
            if any(isinstance(r, dict) and r.get("Ref") == role.logical_id for r in attached):
                documents.append(resolver.resolve(resource["Properties"]["PolicyDocument"]))
    return documents


def encryption_key_arn(resolver: Resolver, logical: str) -> str | None:
    """The customer-managed KMS key ARN that encrypts a table, bucket, topic, queue or Kinesis stream
    (None: AWS-owned)."""
    resource = resolver.resources[logical]
    properties = resource.get("Properties", {})
    kind = resource["Type"]
    key: Any = None
    if kind == "AWS::DynamoDB::GlobalTable":
        replicas = [r for r in properties.get("Replicas", []) if r.get("Region") == resolver.deployment.region]
        key = replicas[0].get("SSESpecification", {}).get("KMSMasterKeyId") if replicas else None
    elif kind == "AWS::DynamoDB::Table":
        key = properties.get("SSESpecification", {}).get("KMSMasterKeyId")
    elif kind == "AWS::S3::Bucket":
        rules = properties.get("BucketEncryption", {}).get("ServerSideEncryptionConfiguration", [])
        key = next((r["ServerSideEncryptionByDefault"].get("KMSMasterKeyID") for r in rules), None)
    elif kind in ("AWS::SNS::Topic", "AWS::SQS::Queue"):
        key = properties.get("KmsMasterKeyId")
    elif kind == "AWS::Kinesis::Stream":
        key = properties.get("StreamEncryption", {}).get("KeyId")
    return None if key is None else str(resolver.resolve(key))


def find_by_name(resolver: Resolver, kind: str, name: str) -> str:
    """The logical id of the resource of ``kind`` whose physical name is ``name``.

    Raises:
        TemplateError: none has that name.
    """
    for logical in resolver.of_type(kind):
        if resolver.physical_name(logical) == name:
            return logical
    raise TemplateError(f"no {kind} named {name!r} in the template")


def find_bucket(resolver: Resolver, purpose: str) -> str:
    """The logical id of the bucket ``odp-<env>-<purpose>-...`` (staging, raw, artifacts).

    Raises:
        TemplateError: no such bucket, or more than one.
    """
    prefix = f"{resource_prefix(resolver.deployment.environment)}-{purpose}-"
    matches = [
        logical for logical in resolver.of_type("AWS::S3::Bucket") if resolver.physical_name(logical).startswith(prefix)
    ]
    if len(matches) != 1:
        raise TemplateError(f"expected one bucket named {prefix}..., found {matches}")
    return matches[0]


def resource_policy(resolver: Resolver, arn: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The policy of the resource an ARN names, as ("key policy of <logical id>", documents): a KMS
    key's key policy, a bucket policy (for the bucket and its objects), a queue or topic policy.
    None: the resource has no policy in the template (or is not in it)."""
    for logical, resource in resolver.resources.items():
        kind = resource["Type"]
        if kind == "AWS::KMS::Key" and resolver.get_att(logical, "Arn") == arn:
            return f"the key policy of {logical}", [resolver.resolve(resource["Properties"]["KeyPolicy"])]
        if kind == "AWS::S3::Bucket":
            bucket = resolver.get_att(logical, "Arn")
            if arn == bucket or arn.startswith(f"{bucket}/"):
                return _attached(resolver, "AWS::S3::BucketPolicy", "Bucket", logical, "bucket")
        if kind in ("AWS::SQS::Queue", "AWS::SNS::Topic") and resolver.get_att(logical, "Arn") == arn:
            if kind == "AWS::SQS::Queue":
                return _attached(resolver, "AWS::SQS::QueuePolicy", "Queues", logical, "queue")
            return _attached(resolver, "AWS::SNS::TopicPolicy", "Topics", logical, "topic")
    return None


def _attached(resolver: Resolver, kind: str, attribute: str, logical: str, noun: str) -> tuple[str, list[dict]] | None:
    documents = [
        resolver.resolve(policy["Properties"]["PolicyDocument"])
        for policy in resolver.of_type(kind).values()
        if any(isinstance(r, dict) and r.get("Ref") == logical for r in _listed(policy["Properties"][attribute]))
    ]
    return (f"the {noun} policy of {resolver.physical_name(logical)}", documents) if documents else None


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]

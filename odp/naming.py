"""Resource names, spelled in one place.

Physical names are derived from the environment name so that the CDK stacks, the Lambdas, the
Glue job, the Configuration Manager and the sandbox all agree without passing names around by hand.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

PROJECT = "odp"


def resource_prefix(environment: str) -> str:
    """``odp-<environment>``: the prefix of every physical name in an environment."""
    return f"{PROJECT}-{environment}"


@dataclass(frozen=True)
class TrackerTableNames:
    """Physical names of the six DynamoDB tables of ARCHITECTURE.md section 3: the ones the File
    Processor and the Lambdas are given. :func:`tracker_table_names` adds the seventh tracker table,
    the dataset run history (given to the dataset job only)."""

    file_tracker: str
    file_tracker_history: str
    processing_tracker: str
    processing_tracker_history: str
    batch_config: str
    table_config: str

    @classmethod
    def for_environment(cls, environment: str) -> TrackerTableNames:
        prefix = resource_prefix(environment)
        return cls(
            file_tracker=f"{prefix}-file-tracker",
            file_tracker_history=f"{prefix}-file-tracker-history",
            processing_tracker=f"{prefix}-processing-tracker",
            processing_tracker_history=f"{prefix}-processing-tracker-history",
            batch_config=f"{prefix}-batch-config",
            table_config=f"{prefix}-table-config",
        )

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


DATASET_RUN_HISTORY = "dataset_run_history"  # logical name of the dataset job's run history table
DATASET_CONFIG = "dataset_config"  # logical name of the datasets' configuration (the Configuration Manager's)
PROCESSING_TRACKER = "processing_tracker"  # logical name: each table's (and dataset's, dataset:<name>) lease
PROCESSING_TRACKER_HISTORY = "processing_tracker_history"  # logical name: every run of the ledger (odp.tracker.ledger)


def tracker_table_names(environment: str) -> dict[str, str]:
    """Logical -> physical name of every tracker table odp/tracker/schema.py declares (and
    infrastructure/ingest/tracking.py creates): the six of :class:`TrackerTableNames`, the dataset run history and
    dataset_config (both given to the dataset job only)."""
    prefix = resource_prefix(environment)
    return TrackerTableNames.for_environment(environment).as_dict() | {
        DATASET_RUN_HISTORY: f"{prefix}-dataset-run-history",
        DATASET_CONFIG: f"{prefix}-dataset-config",
    }


def file_processor_job_name(environment: str, cadence: str) -> str:
    """The Glue job of one cadence (worker type and count differ per cadence)."""
    return f"{resource_prefix(environment)}-file-processor-{cadence}"


def state_machine_name(environment: str, cadence: str) -> str:
    return f"{resource_prefix(environment)}-file-processor-{cadence}"


def datasets_state_machine_name(environment: str) -> str:
    """The datasets state machine (infrastructure/jobs/datasets.py): the dataset job after each File Processor
    execution."""
    return f"{resource_prefix(environment)}-datasets"


TOMBSTONE_FOLDER = "_odp_tombstones"  # beside the tables of a database; target names starting _odp are reserved
# Each job kind's canary table (etl/jobs/canary_table.py), beside the tables of a database its role syncs into: its
# files and catalog entries (``<name>``, ``<name>_ro``, ``<name>_rt``) are the only ones a job role may delete.
CANARY_TABLE_PREFIX = "_odp_canary_"


def canary_table_name(job_kind: str, unit: str = "") -> str:
    """A job's canary table: ``_odp_canary_<job kind>_<unit>``, ``unit`` naming what runs it (a cadence and its
    engine, a stream, an engine), so the canary runs started together never write the same table; lower case, any
    other character than a letter, digit or ``_`` as ``_`` (a Glue table name). ``_odp`` names are reserved: no
    configured table or dataset takes one."""
    name = CANARY_TABLE_PREFIX + job_kind + (f"_{unit}" if unit else "")
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


def table_base_path(raw_root: str, database: str, target_table: str) -> str:
    """Where a table's Hudi files live: ``<raw_root>/<database>/<table>``."""
    return f"{raw_root.rstrip('/')}/{database}/{target_table}"


def tombstone_path(raw_root: str, database: str, target_table: str) -> str:
    """Where a table's tombstones live: beside the table, in the database's ``_odp_tombstones`` folder."""
    return f"{raw_root.rstrip('/')}/{database}/{TOMBSTONE_FOLDER}/{target_table}"


def schedule_name(environment: str, cadence: str) -> str:
    """The EventBridge Scheduler schedule of one cadence."""
    return f"{resource_prefix(environment)}-file-processor-{cadence}"


def bucket_name(environment: str, purpose: str, account: str, region: str) -> str:
    """``odp-<env>-<purpose>-<account>-<region>``: globally unique, readable in the console."""
    return f"{resource_prefix(environment)}-{purpose.replace('_', '-')}-{account}-{region}"


# --------------------------------------------------------------------------------------------
# AWS name rules: every physical name ODP derives from an environment or cadence name, and the rule
# of the service that receives it. Config validation checks each (odp.config.loader); a test
# synthesizes a worst-case configuration and checks every name in the templates against these rules.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NameRule:
    """What one AWS service accepts as a name: length bounds and allowed characters."""

    service: str
    max_length: int
    pattern: str
    min_length: int = 1
    allowed: str = ""  # the characters, in words, for the error message

    def problem(self, name: str) -> str | None:
        """Why ``name`` is refused, or None."""
        if not self.min_length <= len(name) <= self.max_length:
            return (
                f"the {self.service} name {name!r} has {len(name)} characters; "
                f"AWS allows {self.min_length} to {self.max_length}"
            )
        if re.fullmatch(self.pattern, name) is None:
            return f"the {self.service} name {name!r} may contain only {self.allowed}"
        return None


NAME_RULES: dict[str, NameRule] = {
    "s3_bucket": NameRule(
        "S3 bucket", 63, r"[a-z0-9][a-z0-9.-]*[a-z0-9]", 3, "lower-case letters, digits, '.' and '-' (no '_')"
    ),
    "state_machine": NameRule("Step Functions state machine", 80, r"[A-Za-z0-9_-]+", 1, "letters, digits, '_', '-'"),
    "schedule": NameRule("EventBridge Scheduler schedule", 64, r"[0-9A-Za-z_.-]+", 1, "letters, digits, '_', '.', '-'"),
    "glue_job": NameRule("Glue job", 255, r"[A-Za-z0-9_.-]+", 1, "letters, digits, '_', '.', '-'"),
    "glue_connection": NameRule("Glue connection", 255, r"[A-Za-z0-9_.-]+", 1, "letters, digits, '_', '.', '-'"),
    "glue_security_configuration": NameRule(
        "Glue security configuration", 255, r"[A-Za-z0-9_.-]+", 1, "letters, digits, '_', '.', '-'"
    ),
    "iam_role": NameRule("IAM role", 64, r"[\w+=,.@-]+", 1, "letters, digits and +=,.@_-"),
    "dynamodb_table": NameRule("DynamoDB table", 255, r"[A-Za-z0-9_.-]+", 3, "letters, digits, '_', '.', '-'"),
    "log_group": NameRule("CloudWatch Logs log group", 512, r"[\w./#-]+", 1, "letters, digits and _-./#"),
    "lambda_function": NameRule("Lambda function", 64, r"[A-Za-z0-9_-]+", 1, "letters, digits, '_', '-'"),
    "sqs_queue": NameRule("SQS queue", 80, r"[A-Za-z0-9_-]+", 1, "letters, digits, '_', '-'"),
    "events_rule": NameRule("EventBridge rule", 64, r"[A-Za-z0-9_.-]+", 1, "letters, digits, '_', '.', '-'"),
    "sns_topic": NameRule("SNS topic", 256, r"[A-Za-z0-9_-]+", 1, "letters, digits, '_', '-'"),
    "cloudwatch_alarm": NameRule("CloudWatch alarm", 255, r"[ -~]+", 1, "printable ASCII"),
    "dashboard": NameRule("CloudWatch dashboard", 255, r"[A-Za-z0-9_-]+", 1, "letters, digits, '_', '-'"),
    "pipeline": NameRule("CodePipeline pipeline", 100, r"[A-Za-z0-9.@_-]+", 1, "letters, digits and .@_-"),
    "athena_workgroup": NameRule("Athena workgroup", 128, r"[A-Za-z0-9._-]+", 1, "letters, digits, '.', '_', '-'"),
    "kms_alias": NameRule("KMS alias", 256, r"alias/[A-Za-z0-9/_-]+", 7, "letters, digits and /_- after alias/"),
    "kinesis_stream": NameRule("Kinesis data stream", 128, r"[A-Za-z0-9_.-]+", 1, "letters, digits, '_', '.', '-'"),
    # botocore's models: emr-serverless ApplicationName, ecr RepositoryName
    "emr_application": NameRule("EMR Serverless application", 64, r"[A-Za-z0-9._/#-]+", 1, "letters, digits and ._/#-"),
    "ecr_repository": NameRule(
        "ECR repository",
        256,
        r"[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*",
        2,
        "lower-case letters, digits and separators ('.', '_', '-', '/') between them",
    ),
}

BUCKET_PURPOSES = ("staging", "raw", "conformed", "purpose_built", "artifacts", "athena_results", "access_logs")
KEY_PURPOSES = ("staging", "raw", "conformed", "purpose-built", "state", "state-replica")
FUNCTIONS = ("file-manager", "batch-manager")
# The function that stops the EMR Serverless application before its update (infrastructure/jobs/engines/
# emr_application_stop.py): created when a cadence or a dataset runs on EMR Serverless.
EMR_APPLICATION_STOP = "emr-application-stop"
# The EMR Serverless application, its image's repository and its failed-run rule (infrastructure/jobs/engines/
# emr_serverless.py, emr_image.py): names after "<prefix>-", created when a cadence or a dataset runs on it.
EMR_APPLICATION = "spark"
EMR_IMAGE_REPOSITORY = "emr-spark"
EMR_JOB_RUN_FAILED_RULE = "emr-job-run-failed"
ENVIRONMENT_ALARMS = (
    "file-manager-dlq-depth",
    "file-manager-errors",
    "file-manager-throttles",
    "batch-manager-errors",
    "batch-manager-throttles",
    "glue-job-failed",
)


@dataclass(frozen=True)
class PhysicalName:
    """One physical name, the rule it must follow, and the cadence it derives from (None: the environment)."""

    kind: str
    name: str
    cadence: str | None = None
    stream: str | None = None  # the stream (streams.yaml) it derives from

    def problem(self) -> str | None:
        return NAME_RULES[self.kind].problem(self.name)


# The environment's single resources: (kind, name after "<prefix>-"; "" is the prefix itself).
ENVIRONMENT_RESOURCES = (
    ("sqs_queue", "file-manager"),
    ("sqs_queue", "file-manager-dlq"),
    ("events_rule", "staging-object-created"),
    ("events_rule", "glue-job-failed"),
    ("sns_topic", "alerts"),
    ("dashboard", "overview"),
    ("athena_workgroup", ""),
    ("glue_connection", "vpc"),
    ("glue_connection", "vpc-2"),
    ("glue_security_configuration", "file-processor"),
    ("iam_role", "config-loader"),
    ("iam_role", "post-deploy"),
    ("pipeline", "pipeline"),
    # The datasets (infrastructure/jobs/datasets.py, odp.tracker.dataset_history): created when config/datasets/ has
    # any.
    ("glue_job", "dataset-job"),
    ("glue_security_configuration", "datasets"),
    ("state_machine", "datasets"),
    ("events_rule", "datasets-after-file-processor"),
    ("cloudwatch_alarm", "datasets-failed"),
    ("lambda_function", EMR_APPLICATION_STOP),
    ("emr_application", EMR_APPLICATION),
    ("ecr_repository", EMR_IMAGE_REPOSITORY),
    ("events_rule", EMR_JOB_RUN_FAILED_RULE),
)
# The alarms of each cadence: names after "<prefix>-".
CADENCE_ALARMS = (
    "file-processor-{cadence}-failed",
    "file-processor-{cadence}-timed-out",
    "freshness-{cadence}",
    "quarantined-{cadence}",
)


# The alarms of each stream: names after "<prefix>-stream-<stream>-" (infrastructure/jobs/streaming.py).
STREAM_ALARMS = ("iterator-age", "batch-duration", "bad-records", "failed-tables")


def environment_resource_name(environment: str, suffix: str) -> str:
    """One of :data:`ENVIRONMENT_RESOURCES`' names: ``odp-<env>-<suffix>``, or the prefix itself for ``""``."""
    prefix = resource_prefix(environment)
    return f"{prefix}-{suffix}" if suffix else prefix


def stream_job_name(environment: str, stream: str) -> str:
    """The Glue streaming job of a stream: ``odp-<env>-stream-<stream>``."""
    return f"{resource_prefix(environment)}-stream-{stream}"


def kinesis_stream_name(environment: str, stream: str) -> str:
    """The Kinesis data stream of a stream: ``odp-<env>-<stream>``."""
    return f"{resource_prefix(environment)}-{stream}"


def stream_physical_names(environment: str, stream: str) -> list[PhysicalName]:
    """Every physical name one stream of an environment creates (the job, the Kinesis stream, the alarms and
    the job-stopped rule, whose 64 characters are the tightest)."""
    job = stream_job_name(environment, stream)
    names = [
        PhysicalName("glue_job", job, stream=stream),
        PhysicalName("kinesis_stream", kinesis_stream_name(environment, stream), stream=stream),
        PhysicalName("events_rule", f"{job}-job-stopped", stream=stream),
    ]
    names += [PhysicalName("cloudwatch_alarm", f"{job}-{alarm}", stream=stream) for alarm in STREAM_ALARMS]
    return names


def physical_names(environment: str, account: str, region: str, cadences: list[str]) -> list[PhysicalName]:
    """Every physical name an environment's stage and pipeline create from its name and its cadences."""
    prefix = resource_prefix(environment)
    names = [PhysicalName("s3_bucket", bucket_name(environment, p, account, region)) for p in BUCKET_PURPOSES]
    names += [PhysicalName("kms_alias", f"alias/{prefix}-{purpose}") for purpose in KEY_PURPOSES]
    names += [PhysicalName("dynamodb_table", table) for table in tracker_table_names(environment).values()]
    names += [PhysicalName("lambda_function", f"{prefix}-{function}") for function in FUNCTIONS]
    names += [PhysicalName("log_group", f"/aws/lambda/{prefix}-{function}") for function in FUNCTIONS]
    names += [PhysicalName("cloudwatch_alarm", f"{prefix}-{alarm}") for alarm in ENVIRONMENT_ALARMS]
    names += [
        PhysicalName(kind, environment_resource_name(environment, suffix)) for kind, suffix in ENVIRONMENT_RESOURCES
    ]
    names.append(PhysicalName("log_group", f"/aws/vendedlogs/states/{prefix}-datasets"))
    names.append(PhysicalName("log_group", f"/aws/lambda/{prefix}-{EMR_APPLICATION_STOP}"))
    for cadence in cadences:
        machine = state_machine_name(environment, cadence)
        names += [
            PhysicalName("state_machine", machine, cadence),
            PhysicalName("log_group", f"/aws/vendedlogs/states/{machine}", cadence),
            PhysicalName("schedule", schedule_name(environment, cadence), cadence),
            PhysicalName("glue_job", file_processor_job_name(environment, cadence), cadence),
        ]
        names += [
            PhysicalName("cloudwatch_alarm", f"{prefix}-{alarm.format(cadence=cadence)}", cadence)
            for alarm in CADENCE_ALARMS
        ]
    return names

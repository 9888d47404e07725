"""Every kind of Spark job ODP runs, declared once: the registry the stage, the canary, the EMR Serverless entry point,
Lake Formation's job families, the sandbox and the permission tests loop over.

A :class:`JobKind` says what the job is (its contract, its entry point module), where it may run (its engines),
how many jobs a configuration deploys of it and what each is called (:meth:`JobKind.units`, :meth:`JobKind.job_name`),
the static arguments each gets from the deployment (:attr:`JobKind.static_arguments`, the same function on AWS, in
the sandbox and in the canary), the arguments of its harmless run (the post-deploy canary) and, when a state machine
orchestrates it, the stem of its definitions (``stepfunctions/<stem>.<engine>.asl.json``).

Adding a job kind: a contract (``odp/contracts/<kind>.py``), an entry point (``etl/jobs/<kind>.py`` with ``main(argv,
engine)``) and one entry in :data:`JOB_KINDS`; the infrastructure deploys it as a Glue job family of its own
(``infrastructure/jobs/``) unless a builder of its own is registered there. odp/contracts/README.md has the checklist.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odp.config.datasets import of_engine
from odp.config.loader import OdpConfig
from odp.config.models import Cadence, EngineName
from odp.config.streams import Stream, streamed_tables
from odp.contracts.base import JobContract, LedgerTables
from odp.contracts.datasets import DatasetJobArgs, LakeRoots
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.streaming import StreamingJobArgs
from odp.naming import TrackerTableNames, resource_prefix

STEPFUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "stepfunctions"
CANARY_BATCH_ID = "canary"
DATASETS_CODE_PREFIX = "glue/datasets/"  # where the dataset job's family deploys its script
STREAMING_PREFIX = "streaming/"  # each stream's checkpoint and bad records, in the artifacts bucket


@dataclass(frozen=True)
class JobDeployment:
    """What a deployment gives every job's static arguments: where the zones and the artifacts live, the tracker
    tables, the alerts topic. On AWS the values are CDK tokens (rendered as ``Ref``s in the template); in the sandbox
    and the canary they are plain names."""

    environment: str
    roots: LakeRoots
    artifacts_root: str  # s3://<artifacts bucket>
    tracker_tables: TrackerTableNames
    dataset_history_table: str
    dataset_config_table: str  # the datasets' configuration (the Configuration Manager's)
    ledger: LedgerTables  # processing_tracker (each run's summary, each dataset's lease) and its history
    alerts_topic_arn: str
    history_retention_days: int = 365
    catalog_sync: bool = True
    hudi_profile: str = "glue"


@dataclass(frozen=True)
class JobUnit:
    """One deployed job of a kind: ``key`` names it within the kind (a cadence, a stream, or the kind's own name),
    ``engine`` is where its runs go (a File Processor cadence on EMR Serverless), ``settings`` its own configuration
    (a cadence's, a stream's), ``table_ids`` the tables it is given for good (a stream's), ``values`` what only its
    construct knows (a stream's ARN)."""

    key: str
    engine: EngineName = EngineName.GLUE
    settings: Any = None
    table_ids: tuple[str, ...] = ()
    values: Mapping[str, str] = field(default_factory=dict)


StaticArguments = Callable[[JobDeployment, JobUnit], dict[str, str]]


@dataclass(frozen=True)
class JobKind:
    """One kind of job (see the module docstring).

    Attributes:
        name: the kind's name: the EMR Serverless entry point's first argument, the stem of its job names.
        title: how people call it.
        contract: its job arguments (:class:`odp.contracts.base.JobContract`).
        entry_module: its entry point (``main(argv, engine)``); the Glue script is the module's file.
        static_arguments: a unit's arguments every run gets (a Glue job's DefaultArguments).
        canary_arguments: the per-run arguments of its harmless run (the post-deploy canary).
        units: the jobs a configuration deploys of it (default: one, named after the kind, on Glue).
        engines: where it may run.
        state_machine: the stem of its state machine definitions, or None (a streaming job runs on its own).
        streaming: a Glue streaming job (``gluestreaming``), which runs until stopped.
        job_name_stem: the stem of its physical job names (default: the kind's name, ``_`` as ``-``).
        run_inputs: on EMR Serverless, each per-run argument as a Step Functions intrinsic expression over the
            state's input (a Glue run takes them from the state's ``Arguments`` instead).
    """

    name: str
    title: str
    contract: type[JobContract]
    entry_module: str
    static_arguments: StaticArguments
    canary_arguments: Mapping[str, str]
    units: Callable[[OdpConfig], tuple[JobUnit, ...]] | None = None
    engines: tuple[EngineName, ...] = (EngineName.GLUE,)
    state_machine: str | None = None
    streaming: bool = False
    job_name_stem: str | None = None
    run_inputs: Mapping[str, str] = field(default_factory=dict)

    @property
    def script(self) -> str:
        """The entry point's file name (the Glue job's script under its family's code prefix)."""
        return self.entry_module.rsplit(".", 1)[-1] + ".py"

    def units_of(self, config: OdpConfig) -> tuple[JobUnit, ...]:
        """The jobs ``config`` deploys of this kind."""
        return self.units(config) if self.units is not None else (JobUnit(self.name),)

    def job_name(self, environment: str, unit: JobUnit) -> str:
        """A unit's physical job name: ``odp-<env>-<stem>``, then ``-<key>`` unless the key is the kind's name."""
        stem = f"{resource_prefix(environment)}-{self.job_name_stem or self.name.replace('_', '-')}"
        return stem if unit.key == self.name else f"{stem}-{unit.key}"

    def definition(self, engine: EngineName) -> Path:
        """The state machine definition of this kind on ``engine``: ``stepfunctions/<stem>.<engine>.asl.json``.

        Raises:
            ValueError: the kind has no state machine, or may not run on ``engine``.
        """
        if self.state_machine is None or engine not in self.engines:
            raise ValueError(f"job kind {self.name} has no state machine on {engine.value}")
        return STEPFUNCTIONS_DIR / f"{self.state_machine}.{engine.value}.asl.json"


def _file_processor_units(config: OdpConfig) -> tuple[JobUnit, ...]:
    return tuple(JobUnit(name, cadence.engine, cadence) for name, cadence in config.cadences.cadences.items())


def _file_processor_arguments(deployment: JobDeployment, unit: JobUnit) -> dict[str, str]:
    cadence: Cadence = unit.settings
    return FileProcessorJobArgs.static_arguments(
        environment=deployment.environment,
        cadence=unit.key,
        raw_root=deployment.roots.raw,
        tracker_tables=deployment.tracker_tables,
        catalog_sync=deployment.catalog_sync,
        history_retention_days=deployment.history_retention_days,
        table_concurrency=cadence.table_concurrency,
        hudi_profile=deployment.hudi_profile,
        job_dpus=cadence.job_dpus,
        table_metrics=cadence.table_metrics,
    )


def _dataset_units(config: OdpConfig) -> tuple[JobUnit, ...]:
    """One dataset job while datasets are configured; its state machine also runs the datasets that say ``engine:
    emr_serverless`` on EMR Serverless (after the Glue run), so its engine is then EMR Serverless."""
    if not config.datasets:
        return ()
    on_emr = bool(of_engine(config.datasets, EngineName.EMR_SERVERLESS))
    return (JobUnit(DATASET_JOB_NAME, EngineName.EMR_SERVERLESS if on_emr else EngineName.GLUE),)


def _dataset_arguments(deployment: JobDeployment, unit: JobUnit) -> dict[str, str]:
    return DatasetJobArgs(
        deployment.roots,
        deployment.tracker_tables.table_config,
        deployment.dataset_config_table,
        catalog_sync=deployment.catalog_sync,
        history_table=deployment.dataset_history_table,
        topic_arn=deployment.alerts_topic_arn,
        ledger=deployment.ledger,
    ).to_arguments()


def _streaming_units(config: OdpConfig) -> tuple[JobUnit, ...]:
    return tuple(
        JobUnit(name, settings=stream, table_ids=tuple(t.table_id for t in streamed_tables(config.tables, name)))
        for name, stream in config.streams.streams.items()
    )


def _streaming_arguments(deployment: JobDeployment, unit: JobUnit) -> dict[str, str]:
    stream: Stream = unit.settings
    return StreamingJobArgs(
        environment=deployment.environment,
        stream=unit.key,
        stream_arn=unit.values["stream_arn"],
        table_ids=unit.table_ids,
        raw_root=deployment.roots.raw,
        error_root=f"{deployment.artifacts_root}/{STREAMING_PREFIX}errors",
        checkpoint_location=f"{deployment.artifacts_root}/{stream.checkpoint_key_prefix(unit.key)}",
        table_config_table=deployment.tracker_tables.table_config,
        ledger=deployment.ledger,
        window_seconds=stream.window_seconds,
        starting_position=stream.starting_position.value,
        catalog_sync=deployment.catalog_sync,
    ).to_arguments()


DATASET_JOB_NAME = "dataset_job"

FILE_PROCESSOR = JobKind(
    name="file_processor",
    title="File Processor",
    contract=FileProcessorJobArgs,
    entry_module="etl.jobs.file_processor",
    static_arguments=_file_processor_arguments,
    # no tables: the harmless batch (etl/jobs/file_processor.py)
    canary_arguments=FileProcessorJobArgs.run_arguments([], CANARY_BATCH_ID),
    units=_file_processor_units,
    engines=(EngineName.GLUE, EngineName.EMR_SERVERLESS),
    state_machine="file_processor",
    # the Map item (odp.contracts.batches.Batch): its table ids as JSON text, its batch id
    run_inputs={
        FileProcessorJobArgs.option("table_ids"): "States.JsonToString($.table_ids)",
        FileProcessorJobArgs.option("batch_id"): "$.batch_id",
    },
)
DATASET_JOB = JobKind(
    name=DATASET_JOB_NAME,
    title="dataset job",
    contract=DatasetJobArgs,
    entry_module="etl.jobs.dataset_job",
    static_arguments=_dataset_arguments,
    canary_arguments=DatasetJobArgs.canary_arguments(),
    units=_dataset_units,
    engines=(EngineName.GLUE, EngineName.EMR_SERVERLESS),
    state_machine="datasets",
    # after the Glue run of the datasets on Glue: the datasets on EMR Serverless, downstream of the changed tables
    run_inputs={
        DatasetJobArgs.option("engine"): "'emr_serverless'",
        DatasetJobArgs.option("changed_tables"): "States.JsonToString($.table_ids)",
    },
)
STREAMING_JOB = JobKind(
    name="streaming_job",
    title="streaming job",
    contract=StreamingJobArgs,
    entry_module="etl.jobs.streaming_job",
    static_arguments=_streaming_arguments,
    canary_arguments=StreamingJobArgs.canary_arguments(),
    units=_streaming_units,
    streaming=True,
    job_name_stem="stream",
)
JOB_KINDS: tuple[JobKind, ...] = (FILE_PROCESSOR, DATASET_JOB, STREAMING_JOB)


def job_kind(name: str, kinds: tuple[JobKind, ...] = JOB_KINDS) -> JobKind:
    """The kind called ``name``.

    Raises:
        KeyError: no such kind (the message lists the known ones).
    """
    for kind in kinds:
        if kind.name == name:
            return kind
    raise KeyError(f"no job kind {name!r} (known: {', '.join(kind.name for kind in kinds)})")


def kinds_on(engine: EngineName, kinds: tuple[JobKind, ...] = JOB_KINDS) -> tuple[JobKind, ...]:
    """The kinds that may run on ``engine`` (the EMR Serverless entry point runs these)."""
    return tuple(kind for kind in kinds if engine in kind.engines)


def engines_in_use(config: OdpConfig, kinds: tuple[JobKind, ...] = JOB_KINDS) -> set[EngineName]:
    """Every engine some deployed job of ``config`` runs on (an EMR Serverless application exists only when used)."""
    return {unit.engine for kind in kinds for unit in kind.units_of(config)}

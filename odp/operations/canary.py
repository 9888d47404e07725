"""Post-deploy canary: run every deployed Glue job once in its harmless mode (boto3 only).

python -m odp canary --env ENV [--config-dir DIR] [--timeout-minutes N]

Starts, in harmless mode (etl/jobs/canary.py says what each checks):
- every cadence's File Processor job with ``--odp_table_ids []`` and ``--odp_batch_id canary`` (a warm cadence's
  only when its warm run is not running: its job allows one run);
- the dataset job (when datasets are configured) with ``--odp_canary true``;
- each configured stream's streaming job with ``--odp_canary true``, unless a run of it is already in
  progress (the job allows one run: its checkpoint has one writer), which is reported, not started;
- for each cadence on EMR Serverless, the File Processor on the EMR Serverless application, started exactly as
  the cadence's state machine starts it (its RunFileProcessor task's parameters, read with
  states:DescribeStateMachine) with the canary's batch: no tables, batch id ``canary``;
- when a dataset runs on EMR Serverless, the dataset job on the application, started as the datasets state
  machine's RefreshDatasetsOnEmr task starts it, with ``--odp_canary true`` appended.
Each job installs its offline dependencies, starts Spark in the VPC, reaches every service it needs
(tracker tables, history table, Glue catalog, SNS, Kinesis) read-only, then writes, syncs, reads back and removes a
canary table of its own on its engine (etl/jobs/canary_table.py), touching no configured table. Waits
for every run; exit 0 when all succeeded, 1 naming each run that did not, with the engine's error message. A
packaging, network, class path or permission error then stops the promotion instead of failing the first run.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3

from odp.config.datasets import of_engine
from odp.config.loader import OdpConfig
from odp.config.models import Cadence, CadenceMode, EngineName
from odp.contracts.job_kinds import CANARY_BATCH_ID, DATASET_JOB, FILE_PROCESSOR, JOB_KINDS, JobKind, JobUnit
from odp.contracts.state_machines import EMR_SERVERLESS_RUN_JOB, emr_serverless_start_request
from odp.naming import datasets_state_machine_name, state_machine_name
from odp.operations.smoke import config_and_environment, environment_parser, report

CANARY_ARGUMENTS = FILE_PROCESSOR.canary_arguments
TERMINAL_STATES = {"SUCCEEDED", "FAILED", "STOPPED", "TIMEOUT", "ERROR", "EXPIRED"}
EMR_TERMINAL_STATES = {"SUCCESS", "FAILED", "CANCELLED"}
# The canary's Map item (odp.contracts.batches.Batch's per-run fields): no tables, batch id "canary".
CANARY_ITEM = {"table_ids": [], "batch_id": CANARY_BATCH_ID}
POLL_SECONDS = 20
# etl/jobs/emr_serverless.py's job -> what the canary appends to its run's arguments (its harmless mode).
EMR_CANARY_ARGUMENTS = {DATASET_JOB.name: DATASET_JOB.canary_arguments}


@dataclass(frozen=True)
class CanaryJob:
    """One job the canary runs: its name, the Arguments of its harmless run, and whether a run already in
    progress stands in for it (a streaming job runs until stopped and allows one run)."""

    name: str
    arguments: Mapping[str, str]
    single_run: bool = False


def canary_jobs(config: OdpConfig, environment: str, kinds: tuple[JobKind, ...] = JOB_KINDS) -> list[CanaryJob]:
    """Every job the environment deploys, kind by kind (odp.contracts.job_kinds): its harmless run's arguments, and
    whether a run in progress stands in for it (a streaming job's; a warm cadence's File Processor, whose job allows
    one run: docs/decisions/032)."""
    return [
        CanaryJob(kind.job_name(environment, unit), kind.canary_arguments, single_run=kind.streaming or _warm(unit))
        for kind in kinds
        for unit in kind.units_of(config)
    ]


def _warm(unit: JobUnit) -> bool:
    return isinstance(unit.settings, Cadence) and unit.settings.mode is CadenceMode.WARM


def emr_canary_machines(config: OdpConfig, environment: str, account: str, region: str) -> list[str]:
    """The state machine ARN of each cadence on EMR Serverless (the canary starts its File Processor run) and, when a
    dataset runs on EMR Serverless, of the datasets state machine (the canary starts its dataset job run)."""
    names = [
        state_machine_name(environment, name)
        for name, cadence in config.cadences.cadences.items()
        if cadence.engine is EngineName.EMR_SERVERLESS
    ]
    if of_engine(config.datasets, EngineName.EMR_SERVERLESS):
        names.append(datasets_state_machine_name(environment))
    return [f"arn:aws:states:{region}:{account}:stateMachine:{name}" for name in names]


def emr_canary_request(definition: str) -> dict[str, Any]:
    """Pure: the emr-serverless StartJobRun a state machine's definition starts, for the canary's item
    (:data:`CANARY_ITEM`: the File Processor's harmless batch, no tables) and with the job's canary arguments
    appended (:data:`EMR_CANARY_ARGUMENTS`: the dataset job's ``--odp_canary true``).

    Raises:
        LookupError: the definition has no emr-serverless:startJobRun.sync task.
    """

    def tasks(states: Mapping[str, Any]) -> Any:
        for state in states.values():
            if state.get("Type") == "Task":
                yield state
            for nested in ("ItemProcessor", "Iterator"):
                if nested in state:
                    yield from tasks(state[nested]["States"])

    for task in tasks(json.loads(definition)["States"]):
        if task["Resource"] == EMR_SERVERLESS_RUN_JOB:
            request = emr_serverless_start_request(task["Parameters"], CANARY_ITEM)
            arguments = request["jobDriver"]["sparkSubmit"]["entryPointArguments"]
            for name, value in EMR_CANARY_ARGUMENTS.get(arguments[0], {}).items():
                arguments += [name, value]
            return request
    raise LookupError("the state machine starts no EMR Serverless job run")


def run_emr_canary(
    emr: Any,
    requests: Iterable[Mapping[str, Any]],
    *,
    timeout_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[str]:
    """Start each EMR Serverless job run and wait; every run that did not succeed, as a sentence."""
    pending = {}
    for request in requests:
        run = emr.start_job_run(**request)
        pending[run["jobRunId"]] = (request["applicationId"], f"EMR Serverless {request['applicationId']}")
    failures: list[str] = []
    deadline = clock() + timeout_seconds
    while pending:
        for run_id, (application, label) in list(pending.items()):
            run = emr.get_job_run(applicationId=application, jobRunId=run_id)["jobRun"]
            if run["state"] in EMR_TERMINAL_STATES:
                del pending[run_id]
                if run["state"] != "SUCCESS":
                    failures.append(
                        f"{label} run {run_id} ended {run['state']}: {run.get('stateDetails') or 'no message'}"
                    )
        if pending and clock() >= deadline:
            failures += [
                f"{label} run {run_id} still running after {timeout_seconds:.0f} s"
                for run_id, (_, label) in pending.items()
            ]
            break
        if pending:
            sleep(POLL_SECONDS)
    return failures


def _active_run(glue: Any, name: str) -> str | None:
    """The id of a run of ``name`` that has not ended, or None."""
    runs = glue.get_job_runs(JobName=name, MaxResults=10)["JobRuns"]
    return next((run["Id"] for run in runs if run["JobRunState"] not in TERMINAL_STATES), None)


def run_canary(
    glue: Any,
    jobs: Iterable[CanaryJob],
    *,
    timeout_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    report: Callable[[str], None] = print,
) -> list[str]:
    """Start each job in harmless mode and wait; every run that did not succeed, as a sentence."""
    pending: dict[str, str] = {}
    for job in jobs:
        active = _active_run(glue, job.name) if job.single_run else None
        if active is not None:
            report(f"{job.name}: run {active} is in progress (one run at a time): not started, its alarms watch it")
            continue
        pending[job.name] = glue.start_job_run(JobName=job.name, Arguments=dict(job.arguments))["JobRunId"]
    failures: list[str] = []
    deadline = clock() + timeout_seconds
    while pending:
        for name, run_id in list(pending.items()):
            run = glue.get_job_run(JobName=name, RunId=run_id)["JobRun"]
            state = run["JobRunState"]
            if state in TERMINAL_STATES:
                del pending[name]
                if state != "SUCCEEDED":
                    failures.append(f"{name} run {run_id} ended {state}: {run.get('ErrorMessage', 'no message')}")
        if pending and clock() >= deadline:
            failures.extend(
                f"{name} run {run_id} still running after {timeout_seconds:.0f} s" for name, run_id in pending.items()
            )
            break
        if pending:
            sleep(POLL_SECONDS)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = environment_parser("python -m odp canary", __doc__)
    parser.add_argument("--timeout-minutes", type=float, default=30)
    args = parser.parse_args(argv)
    loaded = config_and_environment(args.config_dir, args.env)
    if isinstance(loaded, int):
        return loaded
    config, environment = loaded
    session = boto3.session.Session(region_name=environment.region)
    jobs = canary_jobs(config, args.env)
    machines = emr_canary_machines(config, args.env, environment.account, environment.region)
    stepfunctions = session.client("stepfunctions")
    requests = [
        emr_canary_request(stepfunctions.describe_state_machine(stateMachineArn=arn)["definition"]) for arn in machines
    ]
    failures = run_canary(session.client("glue"), jobs, timeout_seconds=args.timeout_minutes * 60)
    if requests:
        failures += run_emr_canary(
            session.client("emr-serverless"), requests, timeout_seconds=args.timeout_minutes * 60
        )
    return report(f"canary of {args.env} ({len(jobs) + len(requests)} job run(s))", failures)


if __name__ == "__main__":
    sys.exit(main())

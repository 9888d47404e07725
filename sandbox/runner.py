"""One sandbox ``run``: announce new staging files, register them, run each cadence's state machine.

The File Manager and the Batch Manager are the real Lambda handlers, called in-process; the Glue
job is the real File Processor on the one local SparkSession. Job runs of a Map execute one at a
time here (one SparkSession; see moto_patches.ServiceBindings.job_lock), where Glue runs up to the
cadence's max_concurrency at once.
"""

from __future__ import annotations

import importlib
import json
import logging
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import unquote_plus

from boto3.dynamodb.conditions import Attr

from odp.config.loader import OdpConfig
from odp.config.models import CadenceMode
from odp.config.store import TableConfigStore
from odp.contracts.arguments import JobArgumentError
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.contracts.lambda_env import batch_manager_environment, lambda_environment
from odp.dynamodb import table_items
from odp.faults import fault_point
from odp.naming import file_processor_job_name
from odp.tracker import JobRunRef, TableRun, TableState, Trackers, classify_staging_object
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.statuses import FileStatus, RunStatus
from sandbox import aws_calls, state_store
from sandbox.account import (
    ENVIRONMENT,
    RAW_BUCKET,
    REGION,
    STAGING_BUCKET,
    LocalAccount,
    SandboxLayout,
    environment_variables,
    function_name,
)
from sandbox.moto_patches import GlueRunResult, LambdaContext, ServiceBindings, bound_services
from sandbox.report import CadenceReport, RunReport, TableReport, left_undone
from sandbox.spark_on_demand import session_of
from sandbox.staging import BucketMap, list_objects, new_objects, object_created_event, sqs_batches
from sandbox.warm_run import WarmTicks, run_warm_cadence

LOG = logging.getLogger("sandbox")
FILE_EVENTS_QUEUE = "odp-sandbox-file-events"

# Where the real code lives (imported when a run starts, so the sandbox imports without Spark).
FILE_MANAGER = "lambdas.file_manager.handler"
BATCH_MANAGER = "lambdas.batch_manager.handler"
FILE_PROCESSOR = "etl.file_processor.processor"

# Environment of the process while the account is up: a region, and Powertools quiet and offline
# (no X-Ray daemon; metrics would print EMF documents on stdout).
PROCESS_ENVIRONMENT = {
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


class SandboxRunError(RuntimeError):
    """The run could not start (unknown cadence, missing staging folder); the message says which."""


@dataclass
class RunHooks:
    """Points where tests and the demo look in or change delivery; the defaults do nothing."""

    redeliver_keys: Collection[str] = ()  # keys whose event SQS delivers twice (at-least-once delivery)
    bindings: ServiceBindings = field(default_factory=ServiceBindings)  # its call logs are read by tests


def _handler(module: str) -> Callable[[dict[str, Any], Any], Any]:
    """The module's ``handler``, cold: a process-wide instance cached by an earlier run (possibly
    built against other table names or another moto account) is dropped, as a new Lambda
    execution environment would start without it."""
    loaded = importlib.import_module(module)
    if hasattr(loaded, "default_manager"):
        loaded.default_manager.cache_clear()  # the handler's lazily built instance: a cold start
    return loaded.handler


def _with_environment(variables: dict[str, str], handler: Callable[..., Any]) -> Callable[..., Any]:
    def call(event: dict[str, Any], context: Any) -> Any:
        with environment_variables(variables):
            return handler(event, context)

    return call


def _job_binding(
    spark: Any, account: LocalAccount, bucket_map: BucketMap, outcomes: dict[str, TableRun]
) -> Callable[[str, str, dict[str, str]], GlueRunResult]:
    """The File Processor Glue job as a local call: parse the merged arguments, run, report."""
    run_file_processor = importlib.import_module(FILE_PROCESSOR).run_file_processor

    def run(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        try:
            args = FileProcessorJobArgs.from_arguments(arguments)
        except JobArgumentError as error:
            return GlueRunResult("FAILED", str(error))
        LOG.info("  batch %s: %d table(s): %s", args.batch_id, len(args.table_ids), ", ".join(args.table_ids))
        # Its calls are the job role's (sandbox/aws_calls.py); Spark's bucket access is reported from the files.
        raw_folder = aws_calls.observing_folder(RAW_BUCKET, account.layout.raw_dir)
        with aws_calls.acting_as(aws_calls.FILE_PROCESSOR_JOB), raw_folder:
            outcome = run_file_processor(
                session_of(spark),
                args,
                dynamodb=account.dynamodb(),
                resolve_uri=aws_calls.reporting_reads(bucket_map.resolve),
                job_run=JobRunRef(job_name, run_id),
            )
        for table in outcome.tables:
            outcomes[table.table_id] = table
            LOG.debug("    %s", describe_outcome(table))
        if outcome.failed:
            failed = [t for t in outcome.tables if _outcome_failed(t)]
            message = "; ".join(f"{t.table_id}: {t.error}" for t in failed) or "the job reported a failure"
            return GlueRunResult("FAILED", message)
        return GlueRunResult("SUCCEEDED")

    return run


def _outcome_failed(outcome: TableRun) -> bool:
    """Failed, or skipped (another run held the lease: its files were not processed)."""
    return left_undone(outcome.status) or bool(outcome.error)


def _outcome_error(outcome: TableRun) -> str | None:
    if outcome.status is RunStatus.SKIPPED and not outcome.error:
        lease = FileProcessorJobArgs.option("lease_seconds")
        return f"skipped: another run holds the table's lease (it expires after {lease})"
    return outcome.error


def describe_outcome(outcome: TableRun) -> str:
    """One line for the console: what a table's run did."""
    if _outcome_failed(outcome):
        return f"{outcome.table_id}: FAILED after {outcome.seconds:.1f} s: {_outcome_error(outcome)}"
    return (
        f"{outcome.table_id}: {outcome.files} file(s), +{outcome.inserts} ~{outcome.updates} -{outcome.deletes}, "
        f"{outcome.rows} rows, {outcome.seconds:.1f} s"
    )


def announce_new_files(
    account: LocalAccount, layout: SandboxLayout, file_manager: Callable[..., Any], hooks: RunHooks
) -> tuple[int, int, dict[str, str]]:
    """Send S3 events for new staging objects to the File Manager; returns (announced, registered, not applied).

    An object whose message the File Manager reports as failed is not marked announced, so the next
    run sends it again (as SQS would redeliver it). "Not applied" maps each announced object the File
    Manager skipped, or kept as unregistered, to the reason (the same decision the File Manager makes).
    """
    announced = state_store.load_announced(layout.lake)
    fresh = new_objects(list_objects(layout.staging, STAGING_BUCKET), announced)
    if not fresh:
        return 0, 0, {}
    now = datetime.now(UTC)
    base = int(now.timestamp() * 1_000_000)
    events = [object_created_event(obj, sequencer=base + i, region=REGION, now=now) for i, obj in enumerate(fresh)]
    redeliveries = [e for e, obj in zip(events, fresh, strict=True) if obj.key in set(hooks.redeliver_keys)]
    failed_keys: set[str] = set()
    before = _count_items(account, account.names.file_tracker)
    deliveries = [*sqs_batches(events, queue_arn=account.queue_arn(FILE_EVENTS_QUEUE), region=REGION)]
    deliveries += sqs_batches(redeliveries, queue_arn=account.queue_arn(FILE_EVENTS_QUEUE), region=REGION)
    for batch in deliveries:
        context = LambdaContext(
            function_name=function_name("file-manager"),
            invoked_function_arn=account.function_arn("file-manager"),
        )
        response = file_manager(batch, context) or {}
        by_id = {record["messageId"]: record for record in batch["Records"]}
        for failure in response.get("batchItemFailures", []):
            record = by_id.get(failure.get("itemIdentifier"))
            if record is not None:
                key = _event_key(record)
                failed_keys.add(key)
                LOG.error("File Manager failed on %s; it will be sent again on the next run", key)
    for obj in fresh:
        if obj.key not in failed_keys:
            announced[obj.key] = obj.etag
    state_store.save_announced(layout.lake, announced)
    registered = _count_items(account, account.names.file_tracker) - before
    LOG.info("announced %d new staging file(s); %d registered in file_tracker", len(fresh), registered)
    not_applied = _not_applied(account, fresh)
    for key, reason in not_applied.items():
        LOG.warning("not applied: %s: %s", key, reason)
    return len(fresh), registered, not_applied


def _not_applied(account: LocalAccount, fresh: list[Any]) -> dict[str, str]:
    """Announced objects that will not be applied, with the reason: skipped, or of no active table."""
    reasons: dict[str, str] = {}
    for obj in fresh:
        staging_key, reason = classify_staging_object(obj.key, obj.size)
        if staging_key is None:
            reasons[obj.key] = f"skipped by the File Manager: {reason}"
    keys = {obj.key for obj in fresh}
    for item in _tracked_files(account, FileStatus.UNREGISTERED):
        if item.get("bucket") == STAGING_BUCKET and item["key"] in keys:
            reasons[item["key"]] = (
                f"table {item['table_id']} has no active configuration: kept as unregistered in file_tracker"
            )
    for item in _tracked_files(account, FileStatus.UNMATCHED):
        if item.get("bucket") == STAGING_BUCKET and item["key"] in keys:
            reasons[item["key"]] = (
                f"table {item['table_id']} has no entry and no include or from glob of its source matches it: "
                "kept as unmatched in file_tracker (python -m odp status --unmatched)"
            )
    return dict(sorted(reasons.items()))


def _tracked_files(account: LocalAccount, status: FileStatus) -> Iterator[dict[str, Any]]:
    """file_tracker items with this status (a scan: the sandbox's tables are small)."""
    table = account.dynamodb().Table(account.names.file_tracker)
    return table_items(table, "scan", FilterExpression=Attr("status").eq(status.value))


def _event_key(record: dict[str, Any]) -> str:
    return unquote_plus(json.loads(record["body"])["detail"]["object"]["key"])


def _count_items(account: LocalAccount, table_name: str) -> int:
    return len(state_store.scan_typed(account.client("dynamodb"), table_name))


def withdraw_deleted_files(account: LocalAccount, layout: SandboxLayout) -> list[str]:
    """Drop landed or quarantined files whose object was deleted from staging before it was processed.

    ODP has no handler for S3 "Object Deleted": on AWS an operator removes such an item by hand.
    The sandbox does it for them, so deleting a bad file from --staging and running again works.
    """
    table = account.dynamodb().Table(account.names.file_tracker)
    withdrawn: list[str] = []
    items = [*_tracked_files(account, FileStatus.LANDED), *_tracked_files(account, FileStatus.QUARANTINED)]
    for item in items:
        if item.get("bucket") == STAGING_BUCKET and not (layout.staging / item["key"]).is_file():
            table.delete_item(Key={"table_id": item["table_id"], "file_id": item["file_id"]})
            withdrawn.append(item["key"])
    announced = state_store.load_announced(layout.lake)
    for key in withdrawn:
        announced.pop(key, None)
        LOG.warning("withdrew %s: deleted from staging before it was processed", key)
    if withdrawn:
        state_store.save_announced(layout.lake, announced)
    return sorted(withdrawn)


def cadences_to_run(config: OdpConfig, layout: SandboxLayout, cadence: str | None) -> list[str]:
    """The cadences a run executes, in configuration order.

    Raises:
        SandboxRunError: the cadence is unknown or the staging folder is missing.
    """
    names = list(config.cadences.cadences)
    if cadence is not None and cadence not in names:
        raise SandboxRunError(f"unknown cadence {cadence!r}; the configuration has {', '.join(names)}")
    if not layout.staging.is_dir():
        raise SandboxRunError(f"staging folder {layout.staging} does not exist")
    return [cadence] if cadence is not None else names


def run_sandbox(
    config: OdpConfig,
    layout: SandboxLayout,
    spark: Any,
    *,
    cadence: str | None = None,
    hooks: RunHooks | None = None,
    refresh_datasets: bool = False,
    warm: WarmTicks | None = None,
) -> RunReport:
    """Announce, register, process; returns the report (``report.ok`` decides the exit code).

    ``spark``: the session the jobs run on, or a :class:`sandbox.spark_on_demand.SparkOnDemand` that starts it when
    the first job runs (a run without work starts no JVM). ``refresh_datasets``, when the configuration has
    datasets: after each File Processor execution that succeeded, the datasets state machine runs with that execution's
    event, as the deployed EventBridge rule starts it (sandbox/datasets_flow.py): the datasets
    downstream of the tables it processed are refreshed. ``warm``: how a cadence of ``mode: warm`` runs here (its
    ticks in this JVM, sandbox/warm_run.py; default one tick); a scheduled cadence runs its state machine.

    Raises:
        SandboxRunError: the cadence is unknown or the staging folder is missing.
    """
    hooks = hooks or RunHooks()
    started = time.monotonic()
    cadences = cadences_to_run(config, layout, cadence)
    layout.raw_dir.mkdir(parents=True, exist_ok=True)
    outcomes: dict[str, TableRun] = {}
    with environment_variables(PROCESS_ENVIRONMENT), LocalAccount(config, layout) as account:
        if account.config_plan is not None:
            LOG.info("configuration loaded: %s", account.config_plan.render().splitlines()[0])
        bucket_map = BucketMap(layout.bucket_folders())
        bindings = hooks.bindings
        bindings.lambdas[function_name("batch-manager")] = aws_calls.as_principal(
            aws_calls.BATCH_MANAGER,
            _with_environment(
                batch_manager_environment(ENVIRONMENT, account.names, plan_bucket=account.plan_bucket),
                _handler(BATCH_MANAGER),
            ),
        )
        file_manager = aws_calls.as_principal(
            aws_calls.FILE_MANAGER,
            _with_environment(
                lambda_environment(ENVIRONMENT, account.names, service="file-manager"), _handler(FILE_MANAGER)
            ),
        )
        announced, registered, not_applied = announce_new_files(account, layout, file_manager, hooks)
        fault_point("sandbox.after_file_manager")
        withdrawn = withdraw_deleted_files(account, layout)
        executions: list[CadenceReport] = []
        with bound_services(bindings):
            job = _job_binding(spark, account, bucket_map, outcomes)
            for name in cadences:
                bindings.glue_jobs[file_processor_job_name(ENVIRONMENT, name)] = job
            for name in cadences:
                if config.cadences.cadences[name].mode is CadenceMode.WARM:  # its ticks in this JVM, no execution
                    announce = partial(announce_new_files, account, layout, file_manager, hooks)
                    executions.append(
                        run_warm_cadence(
                            session_of(spark),
                            account,
                            bucket_map,
                            cadence=name,
                            outcomes=outcomes,
                            warm=warm,
                            between_ticks=announce,
                        )
                    )
                    continue
                LOG.info("cadence %s: running the File Processor state machine", name)
                calls_before = len(bindings.glue_calls)
                result = account.run_state_machine(name)
                executions.append(
                    CadenceReport(
                        cadence=name,
                        execution_arn=result.execution_arn,
                        status=result.status,
                        error=result.error,
                        cause=result.cause,
                        glue_runs=len(bindings.glue_calls) - calls_before,
                        alerts=result.alerts,
                        output=result.output,
                    )
                )
                LOG.info("cadence %s: execution %s", name, result.status)
        tables = _table_reports(config, account, cadences, outcomes, executions)
        dataset_executions, dataset_runs = (
            _refresh_datasets(account, spark, executions) if refresh_datasets and config.datasets else ([], [])
        )
    return RunReport(
        announced_files=announced,
        registered_files=registered,
        withdrawn_files=withdrawn,
        cadences=executions,
        tables=tables,
        seconds=time.monotonic() - started,
        skipped_files=not_applied,
        dataset_executions=dataset_executions,
        datasets=dataset_runs,
    )


def _refresh_datasets(
    account: LocalAccount, spark: Any, executions: list[CadenceReport]
) -> tuple[list[CadenceReport], list[DatasetRun]]:
    """The datasets state machine once per File Processor execution that succeeded and ran a batch (its
    EventBridge event). The deployed rule also starts it after an execution without batches, which its HasPlan
    choice ends (no ``$.output.summary.changed_tables``); the sandbox does not start those."""
    from sandbox.datasets_flow import DatasetsStateMachine, file_processor_event

    machine = DatasetsStateMachine(account, spark)
    machine.create()
    reports = []
    for execution in executions:
        if execution.status != "SUCCEEDED" or not (execution.output or {}).get("summary", {}).get("changed_tables"):
            continue
        LOG.info("datasets: after the %s execution", execution.cadence)
        result = machine.run(file_processor_event(execution.execution_arn, execution.output))
        reports.append(
            CadenceReport(
                cadence=execution.cadence,
                execution_arn=result.execution_arn,
                status=result.status,
                error=result.error,
                cause=result.cause,
                alerts=result.alerts,
                output=result.output,
            )
        )
        LOG.info("datasets after %s: execution %s", execution.cadence, result.status)
    return reports, machine.runs


def _table_reports(
    config: OdpConfig,
    account: LocalAccount,
    cadences: list[str],
    outcomes: dict[str, TableRun],
    executions: list[CadenceReport],
) -> list[TableReport]:
    """One line per active table of the cadences run: its outcome, or unchanged when it had no work. The tables are
    those of table_config, as the Batch Manager plans them: the configured ones (in the configuration's order), then
    the ones an include rule onboarded (by id)."""
    processing = Trackers.build(account.dynamodb(), account.names).processing
    store = TableConfigStore(account.dynamodb().Table(account.names.table_config))
    failed_execution = {e.cadence: e for e in executions if e.status != "SUCCEEDED"}
    reports: list[TableReport] = []
    for name in cadences:
        configured = config.tables_for_cadence(name)
        known = {table.table_id for table in configured}
        onboarded = [store.get(table_id) for table_id in sorted(set(store.active_ids(name)) - known)]
        for table in [*configured, *onboarded]:
            base_path = f"{account.layout.raw_root}/{table.database}/{table.target_table}"
            outcome = outcomes.get(table.table_id)
            if outcome is not None:
                reports.append(
                    TableReport(
                        table_id=table.table_id,
                        cadence=name,
                        status=outcome.status,
                        run=outcome,
                        base_path=outcome.base_path or base_path,
                        error=_outcome_error(outcome),
                    )
                )
                continue
            state = processing.state(table.table_id)
            pending = _pending_files(account, table.table_id)
            execution = failed_execution.get(name)
            cause = _not_run_cause(name, state, execution, outcomes) if pending else None
            if cause is not None:
                status, error = cause
                reports.append(
                    TableReport(table.table_id, name, status, pending_files=pending, base_path=base_path, error=error)
                )
                continue
            finished = state.finished_run()
            last_error = finished.error if finished is not None and finished.status.failed else None
            status = RunStatus.REFRESH_ERROR if pending and last_error else RunStatus.NOT_RUN
            reports.append(TableReport(table.table_id, name, status, base_path=base_path, error=last_error))
    return reports


def _not_run_cause(
    cadence: str, state: TableState, execution: CadenceReport | None, outcomes: dict[str, TableRun]
) -> tuple[RunStatus, str] | None:
    """Why a table with pending files was not run by any job (skipped: a lease; batch_failed: its
    execution failed), or None when nothing stopped it.

    The real cause: another run's lease, or the tables whose failure ended the execution before a
    job reached this one (never just "execution FAILED", which blames the table for another's error).
    """
    if state.lease_is_held(int(time.time())):
        job = state.lease_job_run
        holder = f"{state.lease_owner}" + (f" (job run {job.run_id} of {job.job_name})" if job else "")
        until = datetime.fromtimestamp(state.lease_expires_at or 0, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return RunStatus.SKIPPED, f"not processed: leased by another run: {holder} holds the table until {until}"
    if execution is None:
        return None
    failed = sorted(t.table_id for t in outcomes.values() if _outcome_failed(t))
    cause = f"failed: {', '.join(failed)}" if failed else f"{execution.error}: {execution.cause}"
    return RunStatus.BATCH_FAILED, (
        f"not processed: the {cadence} execution ended {execution.status} before a job ran this table ({cause}); "
        "its files stay landed for the next run"
    )


def _pending_files(account: LocalAccount, table_id: str) -> int:
    return len(Trackers.build(account.dynamodb(), account.names).files.landed_files(table_id))

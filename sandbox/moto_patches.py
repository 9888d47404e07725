"""Narrow patches to moto's Step Functions interpreter, so the real ASL runs against local code.

Written against moto 5.2.5 (``moto/stepfunctions/parser/``). Each patch replaces one function or
method and is installed only inside :func:`bound_services` (the originals come back on exit):

1. ``lambda:invoke``: moto calls its own Lambda service, which runs functions in Docker (not
   available here) and knows nothing of our handlers. We replace
   ``lambda_eval_utils._invoke_lambda_function`` (the one place moto turns the task's parameters into
   an Invoke call) with an in-process call of the bound handler. A handler exception becomes what
   Lambda returns: ``FunctionError: Unhandled`` and a payload with errorType / errorMessage, so the
   state machine's Retry / Catch see the same error names as on AWS.
2. ``glue:startJobRun.sync``: in moto 5.2.5 ``StateTaskServiceCallback._eval_integration_pattern``
   ends with ``callback_endpoint.interrupt_all()`` in a ``finally`` block; Glue does not support
   ``.waitForTaskToken``, so the endpoint is ``None`` and every ``.sync`` Glue task fails with an
   AttributeError. We give ``StateTaskServiceGlue`` its own ``_eval_integration_pattern`` (the same
   steps without a callback endpoint).
3. The Glue job itself: moto's GetJobRun reports SUCCEEDED without running anything. We replace
   ``StateTaskServiceGlue._sync_to_start_job_run`` with a resolver that runs the bound job with the
   run's arguments (moto has already merged the job's DefaultArguments into them, as Glue does),
   records the final state on moto's job run, and returns GetJobRun's shape (with ``ErrorMessage``);
   a FAILED run raises ``States.TaskFailed`` with the job run as the cause, as Step Functions does.

4. AWS SDK integrations (``arn:aws:states:::aws-sdk:<service>:<action>``, e.g. the File Processor's
   overlap guard ``sfn:listExecutions``): Step Functions takes and returns PascalCase names
   (``StateMachineArn``, ``Executions[].ExecutionArn``); moto passes them to boto3 unchanged (a KeyError in
   botocore's serializer for camelCase APIs) and returns boto3's names. We map parameters onto the
   operation's input members (case-insensitively) and capitalise the response's keys (timestamps as
   ISO 8601 text).

5. A Distributed Map's ResultWriter (``arn:aws:states:::s3:putObject``): moto writes a ``manifest.json`` that lists
   no result file ("TODO: generate result files and upload them to s3"). We write every child execution's output
   to ``SUCCEEDED_0.json`` as Step Functions does (each record's ``Output`` and ``Status``, the fields the Batch
   Manager reads) and the manifest that lists it.

6. ``StateTaskServiceGlue._get_glue_client`` builds a new boto3 client for every Glue task (about 40 ms each); a
   Distributed Map of thousands of batches spends minutes on it. We build one client per region and share it
   (boto3 clients are thread safe); what the client calls is unchanged.

7. moto's ``json_path.extract_json`` builds a new JSONPath parser (PLY tables) for every path it evaluates, about 8 ms
   each: a Distributed Map of thousands of child executions spends most of its time on it. We parse each path once
   (``functools.lru_cache`` over jsonpath_ng's ``parse``; a parsed path is only read by ``find``).

8. ``DistributedItemProcessorWorker._eval_pool`` calls itself once per item: a worker of a Distributed Map dies of
   ``RecursionError`` (silently, in its thread) after about 1,000 items and the Map waits forever. We run the same
   steps in a loop.

SNS publish needs no patch: moto's SNS receives it and tests read it back.
"""

from __future__ import annotations

import datetime
import functools
import json
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from moto.dynamodb.responses import DynamoHandler
from moto.glue.models import glue_backends
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import StatesErrorNameType
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor import (
    distributed_item_processor_worker,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.result_writer.resource_eval.resource_eval_s3 import (
    ResourceEvalS3 as ResultWriterS3,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk import (
    StateTaskServiceAwsSdk,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_glue import (
    StateTaskServiceGlue,
)
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.utils import json_path
from moto.stepfunctions.parser.asl.utils.boto_client import boto_client_for
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

MOTO_VERSION = "5.2.5"

_ZEROS = "0" * 12  # placeholder account of a function named without its ARN
LambdaHandler = Callable[[dict[str, Any], Any], Any]


class BindingError(LookupError):
    """A task names a function or job that the sandbox has not bound."""


@dataclass(frozen=True)
class GlueRunResult:
    """What a bound Glue job reports: SUCCEEDED or FAILED, and why it failed."""

    state: str
    error_message: str | None = None


class GlueJob(Protocol):
    """A bound Glue job: runs one job run with its merged arguments (keys with ``--``)."""

    def __call__(self, job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult: ...


@dataclass(frozen=True)
class LambdaContext:
    """The attributes of the Lambda context object that handlers and Powertools read."""

    function_name: str
    invoked_function_arn: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    memory_limit_in_mb: int = 512
    function_version: str = "$LATEST"
    log_group_name: str = "/aws/lambda/sandbox"
    log_stream_name: str = "sandbox"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


@dataclass
class ServiceBindings:
    """Which local code answers which task: Lambda functions by name or ARN, Glue jobs by name.

    ``glue_calls`` records every job run the state machine started (job name, arguments), so tests
    can assert that no Glue work happened; ``glue_run_sizes`` the worker type and count each run was started with.
    """

    lambdas: dict[str, LambdaHandler] = field(default_factory=dict)
    glue_jobs: dict[str, GlueJob] = field(default_factory=dict)
    glue_calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    glue_run_sizes: list[tuple[str | None, int | None]] = field(default_factory=list)
    lambda_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # One job run at a time: the sandbox shares one SparkSession and Map iterations run in threads.
    job_lock: threading.Lock = field(default_factory=threading.Lock)

    def lambda_handler(self, function_name: str) -> tuple[str, LambdaHandler]:
        """The handler bound to a function name or ARN (``arn:...:function:<name>[:qualifier]``).

        Raises:
            BindingError: no handler is bound to that function.
        """
        name = function_name
        if function_name.startswith("arn:"):
            parts = function_name.split(":")
            name = parts[6] if len(parts) > 6 else function_name
        for candidate in (function_name, name):
            if candidate in self.lambdas:
                return name, self.lambdas[candidate]
        raise BindingError(f"no local handler bound to Lambda function {function_name!r}")

    def glue_job(self, job_name: str) -> GlueJob:
        """Raises: BindingError: no job bound to that name."""
        try:
            return self.glue_jobs[job_name]
        except KeyError as error:
            raise BindingError(f"no local job bound to Glue job {job_name!r}") from error


_ACTIVE: list[ServiceBindings] = []


def _active() -> ServiceBindings:
    if not _ACTIVE:
        raise BindingError("the sandbox's moto patches are used outside bound_services()")
    return _ACTIVE[-1]


def invoke_bound_lambda(parameters: dict, region: str, state_credentials: Any) -> dict[str, Any]:
    """Replacement of ``lambda_eval_utils._invoke_lambda_function`` (moto 5.2.5): call the handler in-process."""
    bindings = _active()
    function_name = str(parameters["FunctionName"])
    name, handler = bindings.lambda_handler(function_name)
    raw = parameters.get("Payload")
    event = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw or "{}")
    bindings.lambda_calls.append((name, event))
    arn = function_name if function_name.startswith("arn:") else f"arn:aws:lambda:{region}:{_ZEROS}:function:{name}"
    context = LambdaContext(function_name=name, invoked_function_arn=arn)
    try:
        result = handler(event, context)
    except Exception as error:  # noqa: BLE001 - an unhandled Lambda error is data for the state machine
        payload = {
            "errorMessage": str(error),
            "errorType": type(error).__name__,
            "stackTrace": traceback.format_exception(error),
        }
        return {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": payload, "ExecutedVersion": "$LATEST"}
    # What Lambda returns is JSON: round-trip it so a non-JSON result fails here, as it would on AWS.
    return {"StatusCode": 200, "Payload": json.loads(json.dumps(result)), "ExecutedVersion": "$LATEST"}


def _eval_glue_integration_pattern(
    self: StateTaskServiceGlue,
    env: Any,
    resource_runtime_part: Any,
    normalised_parameters: dict,
    state_credentials: Any,
) -> None:
    """``.sync`` for Glue without moto 5.2.5's ``callback_endpoint.interrupt_all()`` on ``None``."""
    task_output = env.stack.pop()
    self.timeout.eval(env=env)
    timeout_seconds = env.stack.pop()
    env.stack.append(task_output)
    sync_resolver = self._build_sync_resolver(
        env=env,
        resource_runtime_part=resource_runtime_part,
        normalised_parameters=normalised_parameters,
        state_credentials=state_credentials,
    )
    outcome = self._eval_sync(
        env=env,
        sync_resolver=sync_resolver,
        timeout_seconds=timeout_seconds,
        callback_endpoint=None,
        heartbeat_endpoint=None,
    )
    env.stack.append(outcome)


def _sync_to_start_job_run(
    self: StateTaskServiceGlue,
    env: Any,
    resource_runtime_part: Any,
    normalised_parameters: dict,
    state_credentials: Any,
) -> Callable[[], Any]:
    """Replacement resolver of ``glue:startJobRun.sync``: run the bound job, report like GetJobRun."""
    start_output: dict = env.stack.pop()
    job_name: str = start_output["JobName"]
    run_id: str = start_output["JobRunId"]
    glue = self._get_glue_client(resource_runtime_part=resource_runtime_part, state_credentials=state_credentials)

    def _resolve() -> dict[str, Any]:
        bindings = _active()
        job_run: dict[str, Any] = glue.get_job_run(JobName=job_name, RunId=run_id)["JobRun"]
        arguments = {str(k): str(v) for k, v in (job_run.get("Arguments") or {}).items()}
        bindings.glue_calls.append((job_name, arguments))
        bindings.glue_run_sizes.append((job_run.get("WorkerType"), job_run.get("NumberOfWorkers")))
        job = bindings.glue_job(job_name)
        with bindings.job_lock:
            try:
                result = job(job_name, run_id, arguments)
            except Exception as error:  # noqa: BLE001 - a crashed job is a FAILED run, as on Glue
                result = GlueRunResult("FAILED", f"{type(error).__name__}: {error}")
        _set_moto_job_run_state(resource_runtime_part, job_name, run_id, result.state)
        job_run = {**job_run, "JobName": job_name, "JobRunState": result.state}
        for key in ("StartedOn", "LastModifiedOn", "CompletedOn"):
            job_run.pop(key, None)  # datetimes: not JSON, and not used by the definition
        if result.error_message:
            job_run["ErrorMessage"] = result.error_message
        if result.state == "SUCCEEDED":
            return job_run
        raise FailureEventException(
            FailureEvent(
                env=env,
                error_name=StatesErrorName(typ=StatesErrorNameType.StatesTaskFailed),
                event_type=HistoryEventType.TaskFailed,
                event_details=EventDetails(
                    taskFailedEventDetails=TaskFailedEventDetails(
                        resource=self._get_sfn_resource(),
                        resourceType=self._get_sfn_resource_type(),
                        error=StatesErrorNameType.StatesTaskFailed.to_name(),
                        cause=to_json_str(job_run),
                    )
                ),
            )
        )

    return _resolve


def _set_moto_job_run_state(resource_runtime_part: Any, job_name: str, run_id: str, state: str) -> None:
    """Make moto's GetJobRun report the bound job's final state too."""
    backend = glue_backends[resource_runtime_part.account][resource_runtime_part.region]
    backend.get_job_run(job_name, run_id).status = state


def _aws_sdk_operation(task: Any) -> Any:
    import botocore.session
    from botocore import xform_name

    model = botocore.session.get_session().get_service_model(task._get_boto_service_name())
    action = task._get_boto_service_action()
    return next(model.operation_model(name) for name in model.operation_names if xform_name(name) == action)


def _aws_sdk_parameters_as_boto(
    self: Any, parameters: dict, boto_service_name: str | None = None, service_action_name: str | None = None
) -> None:
    """Rename the task's PascalCase parameters to the operation's own member names (in place)."""
    members = {name.lower(): name for name in _aws_sdk_operation(self).input_shape.members}
    for key in list(parameters):
        parameters[members.get(key.lower(), key)] = parameters.pop(key)


def _pascal_case(value: Any) -> Any:
    if isinstance(value, dict):
        return {key[:1].upper() + key[1:]: _pascal_case(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_pascal_case(item) for item in value]
    if isinstance(value, datetime.datetime):
        return value.isoformat()  # the state's JSON cannot hold a datetime
    return value


def _aws_sdk_response_as_step_functions(
    self: Any, response: Any, boto_service_name: str | None = None, service_action_name: str | None = None
) -> None:
    """Capitalise the response's keys (in place), as Step Functions returns them."""
    if isinstance(response, dict):
        renamed = _pascal_case(response)
        response.clear()
        response.update(renamed)


_GLUE_CLIENTS: dict[str, Any] = {}
_GLUE_CLIENTS_LOCK = threading.Lock()


def _shared_glue_client(resource_runtime_part: Any, state_credentials: Any) -> Any:
    """One boto3 Glue client per region for every Glue task (moto builds one per task)."""
    region = resource_runtime_part.region
    with _GLUE_CLIENTS_LOCK:
        if region not in _GLUE_CLIENTS:
            _GLUE_CLIENTS[region] = boto_client_for(service="glue", region=region, state_credentials=state_credentials)
        return _GLUE_CLIENTS[region]


def _write_map_results(env: Any, resource_runtime_part: Any, state_credentials: Any) -> None:
    """The ResultWriter's S3 write as Step Functions does it: the child executions' outputs in a result file under
    ``<Prefix>/<map run id>/``, the manifest beside it; the state's result is ``ResultWriterDetails``."""
    parameters = env.stack.pop()
    outputs = env.stack.pop()  # the Map's results, one per child execution
    s3 = boto_client_for(service="s3", region=resource_runtime_part.region, state_credentials=state_credentials)
    map_run_arn = env.map_run_record_pool_manager.get_all().pop().map_run_arn
    bucket, prefix = parameters["Bucket"], parameters.get("Prefix", "")
    folder = f"{prefix.rstrip('/')}/{map_run_arn.split(':')[-1]}/".lstrip("/")
    records = [{"Output": json.dumps(output), "Status": "SUCCEEDED"} for output in outputs]
    body = json.dumps(records).encode()
    s3.put_object(Bucket=bucket, Key=f"{folder}SUCCEEDED_0.json", Body=body)
    manifest = {
        "DestinationBucket": bucket,
        "MapRunArn": map_run_arn,
        "ResultFiles": {
            "FAILED": [],
            "PENDING": [],
            "SUCCEEDED": [{"Key": f"{folder}SUCCEEDED_0.json", "Size": len(body)}],
        },
    }
    s3.put_object(Bucket=bucket, Key=f"{folder}manifest.json", Body=json.dumps(manifest).encode())
    env.stack.append(
        {"MapRunArn": map_run_arn, "ResultWriterDetails": {"Bucket": bucket, "Key": f"{folder}manifest.json"}}
    )


_DYNAMODB_CALL_ACTION = DynamoHandler.call_action
_DYNAMODB_LOCK = threading.RLock()


def _serialised_dynamodb_call_action(self: DynamoHandler) -> Any:
    """moto's DynamoDB backend is not thread safe: a Scan iterating an item while another thread updates it
    raises "dictionary changed size during iteration". DynamoDB serves each request atomically, and the
    job writes the tables of a batch concurrently (etl.file_processor.concurrency), so the sandbox serves one
    request at a time."""
    with _DYNAMODB_LOCK:
        return _DYNAMODB_CALL_ACTION(self)


def _eval_pool_in_a_loop(self: Any, job: Any, worker_frame: Any) -> None:
    """moto 5.2.5's ``_eval_pool`` (patch 8) as a loop: evaluate a job, close it, take the next, until none is left,
    a job fails or the worker is stopped."""
    while job is not None:
        job_frame = worker_frame.open_inner_frame()
        self._eval_job(env=job_frame, job=job)
        worker_frame.delete_frame(job_frame)
        next_job = None
        if not (isinstance(job.job_output, Exception) or self.stopped()):
            next_job = self._job_pool.next_job()
        if next_job is None:
            # the frame is closed before the job: the Map awaits its jobs, not its workers (as moto does)
            self._env.delete_frame(worker_frame)
            self._job_pool.close_job(job)
            return
        self._job_pool.close_job(job)
        job = next_job
    self._env.delete_frame(worker_frame)


# jsonpath_ng's parser, each path parsed once (patch 7); bound at import, before any patch replaces the name
_parse_json_path_once = functools.lru_cache(maxsize=4096)(json_path.parse)


_PATCHES: tuple[tuple[Any, str, Any], ...] = (
    (DynamoHandler, "call_action", _serialised_dynamodb_call_action),
    (StateTaskServiceAwsSdk, "_normalise_parameters", _aws_sdk_parameters_as_boto),
    (StateTaskServiceAwsSdk, "_normalise_response", _aws_sdk_response_as_step_functions),
    (lambda_eval_utils, "_invoke_lambda_function", invoke_bound_lambda),
    (StateTaskServiceGlue, "_eval_integration_pattern", _eval_glue_integration_pattern),
    (StateTaskServiceGlue, "_sync_to_start_job_run", _sync_to_start_job_run),
    (ResultWriterS3, "_handle_put_object", staticmethod(_write_map_results)),
    (StateTaskServiceGlue, "_get_glue_client", staticmethod(_shared_glue_client)),
    (json_path, "parse", _parse_json_path_once),
    (distributed_item_processor_worker.DistributedItemProcessorWorker, "_eval_pool", _eval_pool_in_a_loop),
)
_INSTALL_LOCK = threading.Lock()


@contextmanager
def bound_services(bindings: ServiceBindings) -> Iterator[ServiceBindings]:
    """Install the patches with these bindings for the duration of the block.

    Raises:
        RuntimeError: moto is not the version these patches were written for.
    """
    check_moto_version()
    with _INSTALL_LOCK:
        saved = [(owner, name, owner.__dict__.get(name)) for owner, name, _ in _PATCHES]
        for owner, name, replacement in _PATCHES:
            setattr(owner, name, replacement)
        _ACTIVE.append(bindings)
    try:
        yield bindings
    finally:
        with _INSTALL_LOCK:
            _ACTIVE.remove(bindings)
            if not _ACTIVE:
                _GLUE_CLIENTS.clear()
                for owner, name, original in saved:
                    if original is None:
                        delattr(owner, name)
                    else:
                        setattr(owner, name, original)


def check_moto_version() -> None:
    """Raises: RuntimeError: the installed moto differs from the version the patches target."""
    import moto

    if moto.__version__ != MOTO_VERSION:
        raise RuntimeError(
            f"sandbox/moto_patches.py targets moto {MOTO_VERSION} but moto {moto.__version__} is installed; "
            "re-read moto/stepfunctions/parser/ and re-check each patch before changing the pin"
        )


def patched_names() -> Mapping[str, str]:
    """Where each patch goes, for the README and tests."""
    return {
        f"{getattr(owner, '__name__', owner)}.{name}": getattr(new, "__func__", new).__name__
        for owner, name, new in _PATCHES
    }

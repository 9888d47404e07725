"""Which AWS API calls each deployed principal's code makes while the sandbox runs.

The sandbox runs the real File Manager, Batch Manager, Glue job and Configuration Manager in this
process (and, for tests/infra/permissions, the dataset job under the datasets state machine and a
micro-batch of the streaming job). Each component runs inside :func:`acting_as` (a context variable
names the principal whose code is running: the function's or the job's role); a botocore
``provide-client-params`` handler, registered for every botocore session like moto's own stubber,
records each call made while a
:class:`CallRecorder` is open and a principal is set. Calls of the sandbox itself (creating tables,
polling executions) run without a principal and are not recorded.

Spark reads and writes the buckets through Hadoop (``file://`` here, S3A on Glue), not boto3: the
job bindings report those as S3 calls of the same shape (:meth:`CallRecorder.add`): one GetObject per
landed file resolved, the objects of a table folder read (:func:`report_folder_reads`), and the
objects of a bucket folder created, changed or deleted (:func:`observing_folder`).

tests/infra/permissions checks every recorded call against the principal's IAM policies in the
synthesized templates.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.handlers import BUILTIN_HANDLERS

# The deployed principals whose code runs in the sandbox (tests/infra/permissions maps each to its role).
FILE_MANAGER = "file-manager"
BATCH_MANAGER = "batch-manager"
FILE_PROCESSOR_JOB = "file-processor-job"
CONFIG_LOADER = "config-loader"  # the post-deploy step: Configuration Manager and smoke check
DATASET_JOB = "dataset-job"
STREAMING_JOB = "streaming-job"  # the Glue streaming job of a stream (all streams share its role)

_PRINCIPAL: ContextVar[str | None] = ContextVar("odp_aws_principal", default=None)
_REPOSITORY = Path(__file__).resolve().parents[1]
_OWN_PACKAGES = ("odp", "lambdas", "etl", "infrastructure")
_TRANSPORT_HELPERS = frozenset({"odp/dynamodb.py"})  # shared plumbing: the origin is who called it


@dataclass(frozen=True)
class AwsCall:
    """One API call: who made it, the boto3 service and operation, its parameters, where in our code."""

    principal: str
    service: str  # boto3 service name (``dynamodb``, ``s3``, ``stepfunctions``)
    operation: str  # API operation name (``PutItem``, ``TransactWriteItems``)
    params: dict[str, Any]
    origin: str = ""  # ``odp/config/manager.py (_scan_all)``: the innermost frame of our own code

    def describe(self) -> str:
        where = f" from {self.origin}" if self.origin else ""
        return f"{self.service}.{self.operation}{where}"


@dataclass
class CallRecorder:
    """Records the calls made while it is open (use as a context manager); ``calls`` in call order."""

    calls: list[AwsCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> CallRecorder:
        _RECORDERS.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _RECORDERS.remove(self)

    def add(self, service: str, operation: str, params: dict[str, Any], *, principal: str | None = None) -> None:
        """Record a call for ``principal`` or the current one (Spark's S3 access, or a boto3 call).

        Raises:
            ValueError: no principal is given or set (the call would belong to nobody).
        """
        who = principal or _PRINCIPAL.get()
        if who is None:
            raise ValueError(f"{service}.{operation} recorded outside acting_as(...): whose call is it?")
        with self._lock:  # Map iterations run in moto's threads
            self.calls.append(AwsCall(who, service, operation, params, _origin()))


_RECORDERS: list[CallRecorder] = []


@contextmanager
def acting_as(principal: str) -> Iterator[None]:
    """Calls made in this block (this thread or task) are the ``principal``'s."""
    token = _PRINCIPAL.set(principal)
    try:
        yield
    finally:
        _PRINCIPAL.reset(token)


@contextmanager
def as_the_sandbox() -> Iterator[None]:
    """Calls made in this block are the sandbox's own (e.g. saving its state), never a principal's."""
    token = _PRINCIPAL.set(None)
    try:
        yield
    finally:
        _PRINCIPAL.reset(token)


def as_principal(principal: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` wrapped so that every call of it runs :func:`acting_as` ``principal``."""

    def call(*args: Any, **kwargs: Any) -> Any:
        with acting_as(principal):
            return function(*args, **kwargs)

    return call


def recording() -> bool:
    """True when a recorder is open: callers skip the work of reporting non-boto3 access otherwise."""
    return bool(_RECORDERS)


def add_call(service: str, operation: str, params: dict[str, Any]) -> None:
    """Report a non-boto3 call of the current principal to every open recorder."""
    for recorder in list(_RECORDERS):
        recorder.add(service, operation, params)


def _origin() -> str:
    """``path (function)`` of the innermost frame in the repository's own packages (not botocore, not tests),
    past the shared transport helpers (``odp/dynamodb.py``'s paginator): the code that wanted the call."""
    for frame in reversed(traceback.extract_stack()):
        path = Path(frame.filename)
        try:
            relative = path.resolve().relative_to(_REPOSITORY)
        except ValueError:
            continue
        if relative.as_posix() in _TRANSPORT_HELPERS:
            continue
        if relative.parts and relative.parts[0] in _OWN_PACKAGES:
            return f"{relative.as_posix()} ({frame.name})"
    return ""


def _on_client_params(params: dict[str, Any], model: Any, **_: Any) -> None:
    """botocore ``provide-client-params``: record the call; returns None so the params are unchanged."""
    principal = _PRINCIPAL.get()
    if principal is None or not _RECORDERS:
        return
    for recorder in list(_RECORDERS):
        recorder.add(model.service_model.service_name, model.name, dict(params), principal=principal)


# Like moto's stubber: every botocore session created from now on (moto's mock_aws resets boto3's
# default session, so every client of a sandbox run) emits to this handler.
BUILTIN_HANDLERS.append(("provide-client-params", _on_client_params))


def reporting_reads(resolve_uri: Callable[[str], str]) -> Callable[[str], str]:
    """``resolve_uri`` that also reports an S3 GetObject for each ``s3://bucket/key`` it resolves (a
    landed file the job is about to read through Spark)."""

    def resolve(uri: str) -> str:
        if recording() and uri.startswith("s3://"):
            bucket, _, key = uri.removeprefix("s3://").partition("/")
            add_call("s3", "GetObject", {"Bucket": bucket, "Key": key})
        return resolve_uri(uri)

    return resolve


@contextmanager
def observing_folder(bucket: str, folder: Path) -> Iterator[None]:
    """Report what the block did to the files of a bucket-as-folder (see :func:`report_folder_changes`)."""
    if not recording():
        yield
        return
    before = folder_snapshot(folder)
    try:
        yield
    finally:
        report_folder_changes(bucket, before, folder_snapshot(folder))


def report_folder_reads(bucket: str, folder: Path, prefix: str) -> None:
    """What a Hadoop reader of the table folder ``prefix`` (``<database>/<table>/``) asks S3 for: a
    ListBucket on the prefix and a GetObject of every object under it (Hudi's timeline and file groups)."""
    if not recording():
        return
    add_call("s3", "ListObjectsV2", {"Bucket": bucket, "Prefix": prefix})
    for key in sorted(folder_snapshot(folder / prefix)):
        add_call("s3", "GetObject", {"Bucket": bucket, "Key": f"{prefix}{key}"})


def folder_snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Relative path -> (size, mtime_ns) of every file under ``folder`` (empty when it does not exist)."""
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix(): (stat.st_size, stat.st_mtime_ns)
        for path in folder.rglob("*")
        if path.is_file() and (stat := path.stat())
    }


def report_folder_changes(bucket: str, before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> None:
    """What a Hadoop writer did to a bucket-as-folder, as the S3 calls S3A would make for it.

    Created or changed objects: PutObject; deleted: DeleteObject; every object still there under a
    table folder that changed: GetObject (Hudi reads its timeline and the file groups it merges);
    each changed table folder (``<database>/<table>/``): ListBucket on that prefix. Objects created
    and deleted between the two snapshots (Hudi's markers) are not seen: they live under the same
    table folder, so the grants that cover the rest cover them.
    """
    changed = {key for key in after if before.get(key) != after[key]}
    deleted = set(before) - set(after)
    prefixes = sorted({"/".join(key.split("/")[:2]) + "/" for key in changed | deleted})
    for prefix in prefixes:
        add_call("s3", "ListObjectsV2", {"Bucket": bucket, "Prefix": prefix})
    for key in sorted(changed):
        add_call("s3", "PutObject", {"Bucket": bucket, "Key": key})
    for key in sorted(deleted):
        add_call("s3", "DeleteObject", {"Bucket": bucket, "Key": key})
    for key in sorted(after):
        if any(key.startswith(prefix) for prefix in prefixes):
            add_call("s3", "GetObject", {"Bucket": bucket, "Key": key})

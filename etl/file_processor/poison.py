"""Poison files: which landed file a table's failure names, and whether it would fail the same way again.

Every reader error names its file by key (``ChangeFileError``, readers' messages ``<key>: <reason>``).

- A **deterministic** failure (:func:`deterministic_failure`: a ``ChangeFileError`` naming one file whose
  reason is about the file's content: parse, layout, type, event time, unknown op, a file Spark cannot
  decode) would fail every run the same way: the run quarantines that file at once and applies the
  table's other files (etl.file_processor.quarantine).
- A read failure that may pass on a later try (throttling, a timeout, a connection or permission error:
  :data:`TRANSIENT_CAUSE`) or any other error naming one file is counted against that file
  (:func:`files_named_by`); it is quarantined after ``max_file_attempts`` such runs.
- A failure of the read that names no file, or several (Spark's ``AnalysisException`` planning a scan, an
  executor's error without a path, a merge of the files' columns; :func:`traceable_failure`), is traced to its
  file by reading the files apart (:func:`trace_failure`, by bisection: :mod:`etl.culprits`); the file it is
  traced to is then judged like any file a reader names.
- An error that is the table's (its configuration, a schema change, a Hudi write, a lost lease, S3 unavailable:
  :data:`TABLE_ERRORS`, :data:`TRANSIENT_CAUSE`), or a read failure no file is the difference for
  (:class:`etl.errors.UntracedReadError`), counts against no file: the table fails, and its failed runs are counted
  (``max_table_attempts``); nothing is set aside.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from botocore.exceptions import ClientError

from etl.culprits import Trace, find_culprit
from etl.errors import (
    ChangeFileError,
    CommitNotFoundError,
    SchemaEvolutionError,
    TableConfigError,
    TransformError,
    UnstorableChangeError,
    UntracedReadError,
)
from etl.readers.common import java_cause, traced_file_error
from odp.tracker import LeaseLostError, TrackedFile

# Causes of a failed read that are about the path to the bytes (S3 / Hadoop / KMS / the executor), not the
# bytes: the same file may read on the next try, so it is not quarantined at its first failure.
TRANSIENT_CAUSE = re.compile(
    r"slow ?down|throttl|\b50[0-4]\b|service ?unavailable|internal ?error|request ?time ?out|timed? ?out|timeout"
    r"|connection (?:reset|refused|closed|pool)|broken pipe|unknown ?host|socket|sdk ?client|access ?denied"
    r"|forbidden|\b403\b|kms|expired ?token|security token|credential|no ?such ?key|file ?not ?found"
    r"|no such file|does not exist|interrupted|out ?of ?memory|no space left|executor lost|lost executor",
    re.IGNORECASE,
)
# Readers' reasons for a file that could not be read at all (etl.readers): the cause follows.
READ_FAILURE = "unreadable "


def _names(text: str, key: str) -> bool:
    """Whether ``text`` names ``key`` whole, alone or at the end of a URI (``a/11.csv`` does not name ``a/1.csv``)."""
    return re.search(r"(?<![\w.-])" + re.escape(key) + r"(?![\w./-])", text) is not None


def files_named_by(error: BaseException, landed: Sequence[TrackedFile]) -> list[TrackedFile]:
    """Pure: the one landed file an error names, as a list; empty when it names none or several.

    An error naming several files (a reader that cannot tell which one failed) counts against none:
    quarantining them all could set good files aside.
    """
    if isinstance(error, ChangeFileError):
        named = [f for f in landed if error.file in (f.key, f.uri) or error.file.endswith("/" + f.key)]
        if named:
            return named if len(named) == 1 else []
    named = [f for f in landed if _names(f"{error}", f.key)]
    return named if len(named) == 1 else []


def deterministic_failure(error: BaseException, landed: Sequence[TrackedFile]) -> TrackedFile | None:
    """Pure: the one landed file a failure convicts at once, or None (the failure is counted as before).

    A ``ChangeFileError`` naming exactly one of ``landed`` whose reason is about the file's content. A read
    failure (``unreadable <kind>: <cause>``) whose cause (paths left out) matches :data:`TRANSIENT_CAUSE` is not: it may
    pass on the next try, and quarantining at the first throttled read would set good files aside.
    """
    if not isinstance(error, ChangeFileError):
        return None
    named = files_named_by(error, landed)
    if len(named) != 1:
        return None
    # paths are left out: a table named socket_events or a key holding 503 says nothing about the cause
    cause = re.sub(r"\S*/\S*", " ", error.reason)
    if error.reason.startswith(READ_FAILURE) and TRANSIENT_CAUSE.search(cause):
        return None
    return named[0]


# Errors that are the table's whatever its files: never traced to a file.
TABLE_ERRORS = (
    TableConfigError,
    SchemaEvolutionError,
    TransformError,
    CommitNotFoundError,
    UntracedReadError,
    UnstorableChangeError,
    LeaseLostError,
    ClientError,
)
FileProbe = Callable[[list[TrackedFile]], BaseException | None]


def traceable_failure(error: BaseException, landed: Sequence[TrackedFile]) -> bool:
    """Pure: whether a failed read of ``landed`` is traced to a file by reading the files apart: any error that
    names none of them, or several, unless it is the table's (:data:`TABLE_ERRORS`) or may pass on the next try
    (:data:`TRANSIENT_CAUSE`). An error naming one file is judged as it is (:func:`deterministic_failure`)."""
    if isinstance(error, TABLE_ERRORS) or len(files_named_by(error, landed)) == 1:
        return False
    # the cause in one line, paths left out: a stack's line numbers (FileScanRDD.scala:503) say nothing
    return not TRANSIENT_CAUSE.search(re.sub(r"\S*/\S*", " ", java_cause(error)))


def _one_named(error: BaseException, files: list[TrackedFile]) -> TrackedFile | None:
    named = files_named_by(error, files) if isinstance(error, ChangeFileError) else []
    return named[0] if len(named) == 1 else None


def trace_failure(
    error: BaseException, landed: Sequence[TrackedFile], probe: FileProbe, *, table_id: str
) -> tuple[BaseException, Trace[TrackedFile]]:
    """Pure but for ``probe`` (a read of some of the files: the error it raised, None if it read): the failure of a
    read of ``landed`` as the error of the file it is traced to (:func:`etl.culprits.find_culprit`), and the trace.

    The file's error is its own reader's message when a read names it (``ChangeFileError``), else ``<key>:
    unreadable file: <cause>`` (``unreadable file beside N other file(s) of the run (it reads alone): <cause>`` when
    it fails only with the others). No file traced: an :class:`etl.errors.UntracedReadError` naming the table, the
    reads and the cause.
    """
    trace = find_culprit(list(landed), probe, error, convicts=_one_named)
    culprit = trace.culprit
    if culprit is None:
        cause = f"{type(error).__name__}: {java_cause(error)}"
        untraced = UntracedReadError(
            f"{table_id}: reading its {len(landed)} landed file(s) failed, and reading them apart ({trace.reads} "
            f"reads) traced the failure to no file: {cause}"
        )
        return untraced, trace
    if _one_named(culprit.error, [culprit.item]) is not None:
        return culprit.error, trace
    return traced_file_error(culprit.item.key, "file", culprit), trace

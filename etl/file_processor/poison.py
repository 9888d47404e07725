"""Poison files: which landed file a table's failure names, and whether it would fail the same way again.

Every reader error names its file by key (``ChangeFileError``, readers' messages ``<key>: <reason>``).

- A **deterministic** failure (:func:`deterministic_failure`: a ``ChangeFileError`` naming one file whose
  reason is about the file's content: parse, layout, type, event time, unknown op, a file Spark cannot
  decode) would fail every run the same way: the run quarantines that file at once and applies the
  table's other files (etl.file_processor.processor).
- A read failure that may pass on a later try (throttling, a timeout, a connection or permission error:
  :data:`TRANSIENT_CAUSE`) or any other error naming one file is counted against that file
  (:func:`files_named_by`); it is quarantined after ``max_file_attempts`` such runs.
- An error that names no file (a Hudi write, a lost lease, S3 unavailable) is the table's, not a
  file's, and counts against no file: the table fails and retries as before, nothing is set aside.
  An error naming several files counts against none (it cannot tell which one is bad).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from etl.errors import ChangeFileError
from odp.tracker import TrackedFile

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

"""What every reader shares: the file descriptor, the row an error names, and the validation pass.

Typed values (the strict cast and its message) live in :mod:`etl.readers.typed_values`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from etl.change_frame import OP, OPS, ROW
from etl.culprits import Culprit
from etl.errors import ChangeFileError
from etl.readers.event_horizon import EventTimeHorizon
from etl.readers.typed_values import placed_error
from odp.config.models import MissingColumns, TableConfig

ERROR = "_odp_error"


@dataclass(frozen=True)
class SourceFile:
    """One landed file as the readers see it."""

    uri: str  # what Spark reads (s3://... on Glue, file:///... locally)
    key: str  # the staging key: names the file in errors, orders files
    order: int  # position among the batch's files (key order)
    is_full_load: bool = False
    file_id: str = ""

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class TableRead:
    """What a format's reader is given besides the files: the table's ``config``; the event times a time ordering
    may hold (``horizon``, :mod:`etl.readers.event_horizon`; None: any); the stored table's data columns
    (``stored_columns``), which a file declaring its columns must carry when the table configures none."""

    config: TableConfig
    horizon: EventTimeHorizon | None = None
    stored_columns: Sequence[str] = ()


def lower_keys(names: list[str]) -> dict[str, str]:
    """lower-case name -> name as found: sources (DMS upper-cases) and config may differ in case."""
    return {name.lower(): name for name in names}


def row_error(errors: Sequence[Column]) -> Column:
    """``row N, <the first error>`` (N: the record's 1-based number in its file), or NULL when there is none."""
    return placed_error(F.concat(F.lit("row "), (F.col(ROW) + 1).cast("string")), errors)


def validation_errors(frame: DataFrame, keys: tuple[str, ...]) -> Column:
    """One error message per bad change (null key, missing or unknown op), else null."""
    checks = [F.when(F.col(OP).isNull(), F.lit("missing Op"))]
    checks.append(
        F.when(~F.col(OP).isin(*OPS), F.concat(F.lit("unknown Op '"), F.col(OP), F.lit("' (expected I, U or D)")))
    )
    checks += [F.when(F.col(name).isNull(), F.lit(f"null key column {name}")) for name in keys]
    return F.coalesce(*checks)


def first_error(frame: DataFrame, keys: tuple[str, ...], files: Sequence[SourceFile] = ()) -> None:
    """Raise for the first bad change of a change frame (one Spark job over every change).

    Raises:
        ChangeFileError: see :func:`etl.change_counts.count_changes`, which does the same pass and also counts.
    """
    from etl.change_counts import count_changes  # noqa: PLC0415 - change_counts builds on this module

    count_changes(frame, keys, files)


# A Python worker's error inside a Java one: the traceback's last line is the error (``RecursionError: ...``).
_PYTHON_ERROR = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t][^\n]*\n)*([^\s][^\n]*)")


def java_cause(error: BaseException) -> str:
    """The innermost cause of a Spark / Java error in one line (no stack); of a Python worker's error, its last
    line (``RecursionError: maximum recursion depth exceeded ...``)."""
    text = str(error)
    python = _PYTHON_ERROR.findall(text)
    causes = python or re.findall(r"Caused by: ([^\n]+)", text)
    line = causes[-1] if causes else next((ln for ln in text.splitlines() if ln.strip()), type(error).__name__)
    line = re.sub(r"^(org\.apache\.spark\.SparkException|py4j\.protocol\.Py4JJavaError): ", "", line.strip())
    return line[:300]


def executor_error(error: Exception, files: Sequence[SourceFile]) -> ChangeFileError:
    """The file an executor-side error belongs to (the one file read, or the first whose path its message holds),
    with a human cause; else every file's key (``reading failed, the error names no single file``), which the File
    Processor traces to its file by reading them apart."""
    text = str(error)
    cause = java_cause(error)
    if len(files) == 1:  # the one file read (a cause that may pass next time is judged by etl.file_processor.poison)
        kind = "Parquet" if files[0].name.lower().endswith(".parquet") else "file"
        return ChangeFileError(files[0].key, f"unreadable {kind}: {cause}")
    for source in files:
        path = source.uri.removeprefix("file://")
        if source.uri in text or path in text or source.key in text:
            kind = "Parquet" if source.name.lower().endswith(".parquet") else "file"
            return ChangeFileError(source.key, f"unreadable {kind}: {cause}")
    names = ", ".join(source.key for source in files) or "(no file list)"
    return ChangeFileError(names, f"reading failed, the error names no single file: {cause}")


def traced_file_error(key: str, kind: str, culprit: Culprit) -> ChangeFileError:
    """The error of the file a failing read was traced to (:func:`etl.culprits.find_culprit`): ``unreadable <kind>:
    <cause>`` when it fails read alone, ``unreadable <kind> beside N other file(s) of the run (it reads alone):
    <cause>`` when it fails only with them."""
    cause = java_cause(culprit.error)
    if culprit.alone:
        return ChangeFileError(key, f"unreadable {kind}: {cause}")
    return ChangeFileError(
        key, f"unreadable {kind} beside {culprit.beside} other file(s) of the run (it reads alone): {cause}"
    )


def expected_columns(config: TableConfig, stored: Sequence[str] = ()) -> tuple[str, ...]:
    """The lower-case columns every file of the table declaring its columns should carry: the configured
    ``columns``, else ``stored`` (the stored table's data columns; none for a table with a transform, whose
    stored columns are the transform's output). Key and ordering columns are left out: their absence has
    its own error."""
    own = {name.lower() for name in (*config.primary_key, config.ordering_column or "")}
    if config.columns:
        names = list(config.columns)
    elif config.transform:
        names = []
    else:
        names = list(stored)
    return tuple(dict.fromkeys(name.lower() for name in names if name.lower() not in own))


def missing_columns_of(file: str, present: Sequence[str], expected: Sequence[str], config: TableConfig) -> list[str]:
    """The expected columns a file's declared columns (``present``, any case) lack that its changes keep stored
    (``missing_columns: keep``; ``null``: none, the columns stay NULL).

    Raises:
        ChangeFileError: ``missing_columns: refuse`` (the default) and a column is missing; names the file and it.
    """
    have = {name.lower() for name in present}
    missing = [name for name in expected if name not in have]
    if not missing or config.missing_columns is MissingColumns.NULL:
        return []
    if config.missing_columns is MissingColumns.REFUSE:
        shown = ", ".join(missing)
        raise ChangeFileError(
            file,
            f"missing column(s) {shown}: the file does not carry them, so its changes would set them to NULL "
            "(set the table's missing_columns to keep to leave the stored values, or null to store NULL)",
        )
    return missing


def keep_marks(names: Sequence[str]) -> Column:
    """:data:`etl.change_frame.KEEP` for every change of a file: the columns whose stored value stays."""
    return F.array(*[F.lit(name) for name in names]).cast("array<string>")

"""What every reader shares: the file descriptor, strict typed columns, and the validation pass."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from etl.change_frame import OP, OPS, ROW
from etl.errors import ChangeFileError
from etl.schema import is_widening

ERROR = "_odp_error"
SHOWN_VALUE_CHARS = 100

_SIMPLE_TYPES: dict[str, T.DataType] = {
    "string": T.StringType(),
    "boolean": T.BooleanType(),
    "tinyint": T.ByteType(),
    "smallint": T.ShortType(),
    "int": T.IntegerType(),
    "bigint": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "date": T.DateType(),
    "timestamp": T.TimestampType(),
    "timestamp_ntz": T.TimestampNTZType(),
    "binary": T.BinaryType(),
}
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_INTEGRAL_TEXT = r"^[+-]?[0-9]+(\.0*)?$"
_FLOAT_TEXT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$|^[+-]?(NaN|Infinity)$"


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


def lower_keys(names: list[str]) -> dict[str, str]:
    """lower-case name -> name as found: sources (DMS upper-cases) and config may differ in case."""
    return {name.lower(): name for name in names}


def spark_type(declared: str) -> T.DataType:
    """The Spark type of a declared column type (the names config validation accepts)."""
    decimal = _DECIMAL.match(declared)
    if decimal:
        return T.DecimalType(int(decimal.group(1)), int(decimal.group(2)))
    return _SIMPLE_TYPES[declared]


def _text_fits(text: Column, target: T.DataType) -> Column | None:
    """Text that converts to ``target`` without losing anything (Spark's lenient cast would truncate)."""
    if isinstance(target, T.IntegralType):
        return text.rlike(_INTEGRAL_TEXT)
    if isinstance(target, T.FractionalType) and not isinstance(target, T.DecimalType):
        return text.rlike(_FLOAT_TEXT)
    if isinstance(target, T.DecimalType):
        return text.rlike(rf"^[+-]?([0-9]+\.?[0-9]{{0,{target.scale}}}0*|\.[0-9]{{1,{target.scale}}}0*)$")
    return None


def strict_cast(value: Column, source: T.DataType, declared: str, name: str) -> tuple[Column, Column]:
    """(``value`` as the declared type, an error text or NULL): a value that does not convert is never NULLed.

    Text must spell a value of the type (``1.5`` is not a bigint, ``1.234`` not a decimal(12,2)) and fit it;
    a typed value must survive the round trip (a double 1.5 is not a bigint); widenings always pass.
    """
    target = spark_type(declared)
    typed = value.cast(target)
    if source == target or isinstance(target, T.StringType) or is_widening(source, target):
        return typed, F.lit(None).cast("string")
    if isinstance(source, T.StringType):
        fits = _text_fits(value, target)
        ok = typed.isNotNull() if fits is None else fits & typed.isNotNull()
    else:
        ok = typed.isNotNull() & (typed.cast(source) == value)
    shown = F.substring(value.cast("string"), 1, SHOWN_VALUE_CHARS)
    error = F.when(
        value.isNotNull() & ~ok,
        F.concat(F.lit(f"column {name}: value '"), shown, F.lit(f"' is not a valid {declared}")),
    )
    return typed, error


def row_error(errors: Sequence[Column]) -> Column:
    """``row N, <the first error>`` (N: the record's 1-based number in its file), or NULL when there is none."""
    if not errors:
        return F.lit(None).cast("string")
    return F.concat(F.lit("row "), (F.col(ROW) + 1).cast("string"), F.lit(", "), F.coalesce(*errors))


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


def java_cause(error: Exception) -> str:
    """The innermost cause of a Spark / Java error in one line (no stack)."""
    text = str(error)
    causes = re.findall(r"Caused by: ([^\n]+)", text)
    line = causes[-1] if causes else next((ln for ln in text.splitlines() if ln.strip()), type(error).__name__)
    line = re.sub(r"^(org\.apache\.spark\.SparkException|py4j\.protocol\.Py4JJavaError): ", "", line.strip())
    return line[:300]


def executor_error(error: Exception, files: Sequence[SourceFile]) -> ChangeFileError:
    """The file an executor-side error belongs to (the first whose path its message holds), with a human cause."""
    text = str(error)
    cause = java_cause(error)
    for source in files:
        path = source.uri.removeprefix("file://")
        if source.uri in text or path in text or source.key in text:
            kind = "Parquet" if source.name.lower().endswith(".parquet") else "file"
            return ChangeFileError(source.key, f"unreadable {kind}: {cause}")
    names = ", ".join(source.key for source in files) or "(no file list)"
    return ChangeFileError(names, f"reading failed, the error names no single file: {cause}")

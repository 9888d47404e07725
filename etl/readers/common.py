"""What every reader shares: the file descriptor, typed columns, and the validation pass."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from etl.change_frame import FILE, OP, OPS, ROW
from etl.errors import ChangeFileError

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


def lower_keys(names: list[str]) -> dict[str, str]:
    """lower-case name -> name as found: sources (DMS upper-cases) and config may differ in case."""
    return {name.lower(): name for name in names}


def validation_errors(frame: DataFrame, keys: tuple[str, ...]) -> Column:
    """One error message per bad change (null key, missing or unknown op), else null."""
    checks = [F.when(F.col(OP).isNull(), F.lit("missing Op"))]
    checks.append(
        F.when(~F.col(OP).isin(*OPS), F.concat(F.lit("unknown Op '"), F.col(OP), F.lit("' (expected I, U or D)")))
    )
    checks += [F.when(F.col(name).isNull(), F.lit(f"null key column {name}")) for name in keys]
    return F.coalesce(*checks)


def first_error(frame: DataFrame, keys: tuple[str, ...]) -> None:
    """Raise for the first bad change of a change frame (one small Spark job).

    Raises:
        ChangeFileError: names the file, the row and the reason.
    """
    message = validation_errors(frame, keys)
    if ERROR in frame.columns:
        message = F.coalesce(F.col(ERROR), message)
    bad = frame.select(FILE, ROW, message.alias("reason")).where("reason IS NOT NULL").limit(1).collect()
    if bad:
        raise ChangeFileError(bad[0][FILE], f"{bad[0]['reason']} (row {bad[0][ROW]})")

"""One pass over a batch's change frame: validate it and count what the run needs counted."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from etl.change_frame import DELETE, FILE, OP, ROW
from etl.errors import ChangeFileError
from etl.readers.common import ERROR, validation_errors


@dataclass(frozen=True)
class ChangeCounts:
    rows: int  # changes read (every row of every file)
    deletes: int  # of which deletes: none = no tombstone write


def count_changes(frame: DataFrame, keys: tuple[str, ...]) -> ChangeCounts:
    """Count the changes and the deletes, and raise for a bad change, in one Spark job.

    Raises:
        ChangeFileError: a change is bad (null key, missing or unknown op, a reader's error); names the
            file, the row and the reason.
    """
    reason = validation_errors(frame, keys)
    if ERROR in frame.columns:
        reason = F.coalesce(F.col(ERROR), reason)
    bad = F.when(reason.isNotNull(), F.struct(F.col(FILE).alias("file"), F.col(ROW).alias("row"), reason.alias("why")))
    summary = frame.select(
        F.count(F.lit(1)).alias("rows"),
        F.count(F.when(F.col(OP) == F.lit(DELETE), True)).alias("deletes"),
        F.first(bad, ignorenulls=True).alias("bad"),
    ).first()
    if summary["bad"] is not None:
        raise ChangeFileError(summary["bad"]["file"], f"{summary['bad']['why']} (row {summary['bad']['row']})")
    return ChangeCounts(rows=int(summary["rows"]), deletes=int(summary["deletes"]))

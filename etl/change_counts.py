"""One pass over a batch's change frame: validate it and count what the run needs counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from etl.change_frame import DELETE, FILE, KEEP, OP, ROW
from etl.errors import ChangeFileError
from etl.readers.common import ERROR, SourceFile, executor_error, validation_errors
from etl.readers.new_columns import DROPPED, DROPPED_TYPE


@dataclass(frozen=True)
class ChangeCounts:
    rows: int  # changes read (every row of every file)
    deletes: int  # of which deletes: none = no tombstone write
    # new_columns: ignore (etl.readers.new_columns): (file, column) pairs dropped, and the values dropped
    dropped: tuple[tuple[str, str], ...] = ()
    dropped_values: int = 0
    kept_columns: tuple[str, ...] = ()  # columns some change keeps stored (etl.change_frame.fill_kept): none = no fill

    @property
    def dropped_columns(self) -> tuple[str, ...]:
        """The names of the columns dropped, sorted, each once."""
        return tuple(sorted({name for _, name in self.dropped}))


def count_changes(frame: DataFrame, keys: tuple[str, ...], files: Sequence[SourceFile] = ()) -> ChangeCounts:
    """Count the changes, the deletes and what ``new_columns: ignore`` dropped, name the columns changes keep
    stored, and raise for a bad change, in one Spark job.

    Errors found while reading (``_odp_error``: a parse, layout, type or event-time problem) carry their own
    place (``row N`` / ``line N``); the checks here add ``row N`` (1-based record number in the file).

    Raises:
        ChangeFileError: a change is bad (null key, missing or unknown op, a reader's error): names the file,
            the row and the reason. An error raised on an executor (a corrupt Parquet page, an unreadable
            object) is mapped back to the file its message names (:func:`etl.readers.common.executor_error`).
    """
    reason = F.concat(F.lit("row "), (F.col(ROW) + 1).cast("string"), F.lit(": "), validation_errors(frame, keys))
    if ERROR in frame.columns:
        reason = F.coalesce(F.col(ERROR), reason)
    bad = F.when(reason.isNotNull(), F.struct(F.col(FILE).alias("file"), reason.alias("why")))
    dropped = F.col(DROPPED) if DROPPED in frame.columns else F.lit(None).cast(DROPPED_TYPE)
    pairs = F.transform(dropped, lambda name: F.struct(F.col(FILE).alias("file"), name.alias("name")))
    # distinct lists of kept columns: few (one per file shape or TOAST pattern), flattened here
    kept = F.flatten(F.collect_set(F.col(KEEP))) if KEEP in frame.columns else F.array().cast("array<string>")
    try:
        summary = frame.select(
            F.count(F.lit(1)).alias("rows"),
            F.count(F.when(F.col(OP) == F.lit(DELETE), True)).alias("deletes"),
            F.first(bad, ignorenulls=True).alias("bad"),
            F.coalesce(F.sum(F.size(F.coalesce(dropped, F.array().cast(DROPPED_TYPE)))), F.lit(0)).alias("values"),
            F.array_distinct(F.flatten(F.collect_set(pairs))).alias("dropped"),
            kept.alias("kept"),
        ).first()
    except (CapturedException, Py4JJavaError) as error:
        raise executor_error(error, files) from error
    if summary["bad"] is not None:
        raise ChangeFileError(summary["bad"]["file"], summary["bad"]["why"])
    return ChangeCounts(
        rows=int(summary["rows"]),
        deletes=int(summary["deletes"]),
        dropped=tuple(sorted((pair["file"], pair["name"]) for pair in summary["dropped"] or [])),
        dropped_values=int(summary["values"]),
        kept_columns=tuple(dict.fromkeys(summary["kept"] or ())),
    )

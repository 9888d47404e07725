"""Status values of files and tables, as stored in the trackers."""

from enum import StrEnum


class FileStatus(StrEnum):
    """Where a file is in its life (file_tracker, then file_tracker_history)."""

    LANDED = "landed"  # registered, waiting for its table's next run
    UNREGISTERED = "unregistered"  # its table has no active configuration; kept, not processed
    PROCESSED = "raw_file_processed"  # applied by a Hudi commit; the item lives in file_tracker_history
    # Failed its table on max_file_attempts runs: kept in file_tracker with its error, not read until an
    # operator releases it (python -m odp file release), which makes it landed again.
    QUARANTINED = "quarantined"
    # Not applied: a historical table already holds a file with the same content (ETag); in history too.
    DUPLICATE_CONTENT = "skipped_duplicate_content"


class TableStatus(StrEnum):
    """The state of a table's last or current run (processing_tracker)."""

    UPDATING = "updating_table"  # a run holds the lease and is working
    COMPLETED = "completed"  # the last run committed (or had nothing to do)
    REFRESH_ERROR = "refresh_error"  # the last run failed; its files stay landed for the next run
    SKIPPED = "skipped"  # history only: another run held the lease


class FileKind(StrEnum):
    FULL_LOAD = "full_load"  # DMS LOAD*.parquet / LOAD*.csv: a full copy of the table
    CDC = "cdc"  # ongoing changes

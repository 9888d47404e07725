"""Status values of files and runs, as stored in the trackers and reported by every component."""

from enum import StrEnum


class FileStatus(StrEnum):
    """Where a file is in its life (file_tracker, then file_tracker_history)."""

    LANDED = "landed"  # registered, waiting for its table's next run
    UNREGISTERED = "unregistered"  # its table's configuration is inactive; kept, not processed
    # Its table has no configuration and no rule of its source (include, from) matches it: kept, not processed,
    # counted (FilesUnmatched) and listed by python -m odp status --unmatched until an entry or a glob takes it.
    UNMATCHED = "unmatched"
    PROCESSED = "raw_file_processed"  # applied by a Hudi commit; the item lives in file_tracker_history
    # Set aside: its content failed (at once), or a read of it failed on max_file_attempts runs, or an operator
    # quarantined it. Kept in file_tracker with its reason, not read until an operator releases it (python -m
    # odp file release), which makes it landed again.
    QUARANTINED = "quarantined"
    # Not applied: a historical table already holds a file with the same content (ETag); in history too.
    DUPLICATE_CONTENT = "skipped_duplicate_content"


class RunStatus(StrEnum):
    """The outcome of one run of one table or dataset: the one status vocabulary of ODP.

    Which component sets which status (odp/README.md has the table):

    - File Processor (a table run; processing_tracker and its history): ``updating_table`` while
      a run holds the lease, then ``completed`` or ``refresh_error``; ``skipped`` (history only)
      when another run held the lease or the table is inactive. ``refresh_error`` stays the stored
      value of a failed table run: processing_tracker items written by every release carry it.
    - Batch Manager summary (a table in one execution without a run of its own): ``batch_failed``
      (the Glue run failed before the table's outcome was recorded) or ``not_run``; otherwise the
      table's run status.
    - Streaming micro-batch (a table in one batch): ``completed``, ``replayed`` (this batch was
      already committed to the table) or ``failed`` (its records set aside).
    - Dataset job (a dataset refresh; the dataset run history): ``written``, ``up_to_date``,
      ``waiting_for_sources``, ``quality_failed`` or ``failed``.
    - Sandbox report: a table's run status, or ``not_run`` / ``batch_failed`` / ``skipped`` when
      the run did not reach it.

    "Failed" has one meaning, :attr:`failed`: the run (or the execution that should have run it)
    ended in an error and wrote nothing for it; the next run retries.
    """

    UPDATING = "updating_table"  # a run holds the table's lease and is working
    COMPLETED = "completed"  # committed (or had nothing to do)
    REFRESH_ERROR = "refresh_error"  # a table run failed; its files stay landed for the next run
    SKIPPED = "skipped"  # another run held the lease (or the table is inactive): nothing done
    BATCH_FAILED = "batch_failed"  # the Glue run failed before this table's outcome was recorded
    NOT_RUN = "not_run"  # no run reached the table (nothing pending, or the job left it)
    REPLAYED = "replayed"  # streaming: this micro-batch was already committed to the table
    WRITTEN = "written"  # a dataset commit was made (it may hold warn-rule failures)
    UP_TO_DATE = "up_to_date"  # no source of the dataset changed since its last consumed commits
    WAITING = "waiting_for_sources"  # a source of the dataset has no commit yet: nothing read or written
    QUALITY_FAILED = "quality_failed"  # a dataset's fail rule did not hold: nothing written
    FAILED = "failed"  # an error (SQL, schema, IO, a stream table's write): nothing written

    @property
    def failed(self) -> bool:
        """The one meaning of failed: an error ended the run before it wrote; the next run retries."""
        return self in _FAILED

    @property
    def finished(self) -> bool:
        """A run's recorded end on processing_tracker (odp.tracker.ledger), whichever writer recorded it: every
        status but ``updating_table`` (a File Processor run still holding the lease)."""
        return self is not RunStatus.UPDATING


_FAILED = frozenset({RunStatus.REFRESH_ERROR, RunStatus.BATCH_FAILED, RunStatus.QUALITY_FAILED, RunStatus.FAILED})


class FileKind(StrEnum):
    FULL_LOAD = "full_load"  # DMS LOAD*.parquet / LOAD*.csv: a full copy of the table
    CDC = "cdc"  # ongoing changes


class WriteStrategy(StrEnum):
    """How a table run wrote its changes (etl/raw_table/write_strategy.py chooses; the run's history row records it).

    ``upsert``: the changed rows through Hudi's upsert (the file groups they touch are rewritten, COW; or logged,
    MOR). ``rewrite_table``: the merged snapshot (stored rows, the batch applied in event-time order) written
    with ``insert_overwrite_table``, when rewriting the whole table is estimated cheaper than the upsert.
    ``rewrite_partitions``: the same for the partitions the batch hits (``insert_overwrite``); not chosen by
    the File Processor yet (see etl/hudi/README.md, "Upsert or rewrite").
    """

    UPSERT = "upsert"
    REWRITE_PARTITIONS = "rewrite_partitions"
    REWRITE_TABLE = "rewrite_table"

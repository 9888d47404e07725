"""Step ``read``: the plan's files read and checked in one pass, under the run's quarantine policy.

A file failing deterministically is quarantined at once (etl.file_processor.quarantine) and the rest is read again
without it, until a pass holds no bad change. A failure that names no file, whatever its type, is first traced to
its file by reading the files apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame

from etl.change_counts import count_changes
from etl.file_processor.poison import FileProbe
from etl.file_processor.run_context import ReadChanges, TableRunContext, Then
from etl.file_processor.shards import with_shard
from etl.file_processor.table_plan import source_files
from etl.file_processor.write_budget import input_storage_level
from etl.raw_table.kept_values import stored_data_columns
from etl.readers import SourceFile, read_changes
from odp.tracker import TrackedFile


def read_changes_of_plan(run: TableRunContext) -> Then:
    """Sets ``read`` (None: no file left to apply) and ``plan`` (without the files set aside).

    Raises the table's errors, a failure traced to no file (``UntracedReadError``) and a failure that may pass
    on the next try: the table's run fails (its failed runs counted, max_table_attempts).
    """
    stored = stored_data_columns(run.config, run.stored_state())  # what files must carry without `columns`
    run.read = None
    while run.planned().apply:
        plan = run.planned()
        sources = source_files(plan.apply, run.scope.resolve_uri)
        changes: DataFrame | None = None
        try:
            read = _read_files(run, sources, stored)
            changes = (read.coalesce(1) if plan.one_task else read).persist(input_storage_level(plan.one_task))
            counts = count_changes(changes, tuple(run.config.primary_key), sources)
        except Exception as error:  # noqa: BLE001 - the policy raises it again unless it convicts one file
            if changes is not None:
                changes.unpersist()
            run.plan = run.quarantine.without(plan, error, run.keeper, probe=_probe(run, stored))
            continue
        run.read = ReadChanges(sources, changes, counts, one_task=plan.one_task)
        break
    return Then.NEXT


def _read_files(run: TableRunContext, sources: Sequence[SourceFile], stored: Sequence[str]) -> DataFrame:
    """The change frame of ``sources`` (a merged table's shard added), not yet checked."""
    config = run.config
    read = read_changes(
        run.scope.spark, sources, config.as_read(), run_start=run.scope.run_start, stored_columns=stored
    )
    return read.transform(with_shard(config))


def _probe(run: TableRunContext, stored: Sequence[str]) -> FileProbe:
    """A read and check of some of the plan's files, as the step does it: the error it raises, else None."""

    def probe(files: list[TrackedFile]) -> BaseException | None:
        sources = source_files(files, run.scope.resolve_uri)
        try:
            count_changes(_read_files(run, sources, stored), tuple(run.config.primary_key), sources)
        except Exception as error:  # noqa: BLE001 - a probe reports whatever the read raises
            return error
        return None

    return probe

"""Step ``apply``: the checked changes of the plan's files committed once (etl.hudi.commit.commit_once), within the
job's row budget. A change the write refuses before writing anything (:class:`etl.errors.UnstorableChangeError`)
sets its file aside like a bad read, and the run reads the rest again."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from etl.errors import UnstorableChangeError
from etl.file_processor.run_context import AppliedCommit, ReadChanges, TableRunContext, Then
from etl.file_processor.transform import transform_changes
from etl.hudi.commit import CommitTag, commit_once
from etl.raw_table.batch import ChangeBatch
from etl.raw_table.kept_values import check_kept_columns

logger = logging.getLogger(__name__)


def apply_changes(run: TableRunContext) -> Then:
    """Sets ``applied`` (nothing applied when the read left no file)."""
    read = run.read
    if read is None:
        run.applied = AppliedCommit()
        return Then.NEXT
    try:
        run.applied = _commit(run, read)
    except UnstorableChangeError as error:
        run.plan = run.quarantine.without(run.planned(), error, run.keeper)
        return Then.READ_AGAIN
    finally:
        read.changes.unpersist()
    return Then.NEXT


def _commit(run: TableRunContext, read: ReadChanges) -> AppliedCommit:
    config, state, scope = run.config, run.stored_state(), run.scope
    sources, changes, counts = read.sources, read.changes, read.counts
    _log_dropped(config.table_id, counts.dropped)
    transformed = transform_changes(scope.spark, changes, config)
    check_kept_columns(config, counts.kept_columns, changes.columns, transformed.columns)
    batch = ChangeBatch(
        transformed,
        rows=counts.rows,
        has_full_load=any(s.is_full_load for s in sources),
        has_deletes=counts.deletes > 0,
        kept_columns=counts.kept_columns,
        one_task=read.one_task,
    )
    with scope.row_budget.reserve(counts.rows, config.table_id):
        run.keeper.check()
        commit = commit_once(
            scope.spark,
            state.base_path,
            CommitTag(scope.run_id, tuple(s.file_id for s in sources)),
            lambda tag: scope.writer.write(scope.spark, batch, config, state.base_path, tag, state=state),
            job="etl",
            label=config.table_id,
            seen=state.commits,
        )
    if commit.written is not None:  # a replayed commit wrote nothing now
        for phase, seconds in commit.written.phase_seconds:
            run.add_seconds(f"write.{phase}", seconds)
    return AppliedCommit(len(sources), counts.rows, commit, counts.dropped_columns, counts.dropped_values)


def _log_dropped(table_id: str, dropped: Sequence[tuple[str, str]]) -> None:
    """One WARNING per file whose columns ``new_columns: ignore`` dropped, naming them."""
    by_file: dict[str, list[str]] = {}
    for file, name in dropped:
        by_file.setdefault(file, []).append(name)
    for file, names in by_file.items():
        logger.warning(
            "%s: %s: dropped column(s) outside the table's columns (new_columns: ignore): %s",
            table_id,
            file,
            ", ".join(names),
        )

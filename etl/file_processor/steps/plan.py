"""Step ``plan``: the table's state, read once under the lease (after recovering from a run killed during a first
commit), and the plan of the run from its landed files and timeline (etl.file_processor.table_plan)."""

from __future__ import annotations

from etl.file_processor.run_context import TableRunContext, Then
from etl.file_processor.table_plan import plan_table_run
from etl.hudi.timeline import HudiTableState, discard_uncommitted_table, read_table_state
from odp.config.models import TableMode
from odp.naming import tombstone_path


def plan_run(run: TableRunContext) -> Then:
    """Sets ``state``, ``discarded`` and ``plan``.

    The state is passed down from here: the plan, the read's column check, the write and the commit take it.
    """
    run.state, run.discarded = _recovered_state(run)
    landed = run.files.landed_files(run.table_id)
    historical = run.config.mode is TableMode.HISTORICAL and bool(landed)
    applied = run.files.applied_content(run.table_id) if historical else {}
    run.plan = plan_table_run(run.config, landed, list(run.state.commits), applied)
    return Then.NEXT


def _recovered_state(run: TableRunContext) -> tuple[HudiTableState, tuple[str, ...]]:
    """The table's state after discarding a first commit (of the table, or of its tombstone table) that a killed run
    left uncommitted; and the paths discarded. Runs before anything reads either table."""
    spark, config = run.scope.spark, run.config
    state = read_table_state(spark, run.base_path)
    discarded = []
    if state.uncommitted and discard_uncommitted_table(spark, run.base_path):
        discarded.append(run.base_path)
        state = HudiTableState(run.base_path)
    if config.mode is TableMode.CURRENT:
        tombstones = tombstone_path(run.scope.raw_root, config.database, config.target_table)
        if discard_uncommitted_table(spark, tombstones):
            discarded.append(tombstones)
    return state, tuple(discarded)

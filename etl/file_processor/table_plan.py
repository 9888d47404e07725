"""The plan of one File Processor table run: pure (no Spark, no IO), from what the run found.

Inputs: the table's landed files (file_tracker), the completed commits of its Hudi timeline, its
configuration, and (historical tables) the content already applied. Output: what is already done (files a
completed commit consumed: a previous run crashed between its commit and its tracker update; moved to
history grouped by that commit's instant), what to apply in this run's commit, and which files are
duplicates of content the table holds. The steps of ``etl.file_processor.steps`` apply the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from etl.errors import TableConfigError
from etl.hudi.target import RECORD_INDEX, SIMPLE_INDEX, HudiTarget
from etl.hudi.timeline import CommitSummary, committed_file_ids, stored_index
from etl.readers import SourceFile
from odp.config.models import IndexKind, TableConfig, TableMode
from odp.tracker import FileKind, TrackedFile

# A run whose landed files hold at most this many bytes reads them as one Spark partition: every later step
# (the counts, the last change per key, the tombstones, Hudi's input) then needs no exchange, and under adaptive
# query execution each exchange is a Spark job of its own (3 of a small table's 15 jobs per commit). One task
# reads 32 MiB in about a second; larger inputs keep Spark's parallel read.
ONE_TASK_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class TablePlan:
    """What one table run does.

    ``reconcile``: (instant, files) per completed commit that already consumed landed files, oldest instant
    first. ``apply``: the files of this run's commit, in key order. ``duplicates``: (file, the file that applied
    its content) for each file not applied because the historical table holds its content already.
    ``quarantine``: (file, reason) for each file this run sets aside (:meth:`set_aside`), in the order found.
    """

    reconcile: tuple[tuple[str, tuple[TrackedFile, ...]], ...]
    apply: tuple[TrackedFile, ...]
    duplicates: tuple[tuple[TrackedFile, TrackedFile], ...]
    quarantine: tuple[tuple[TrackedFile, str], ...] = ()

    @property
    def one_task(self) -> bool:
        """Whether the files to apply are small enough to read, check and write as one Spark partition
        (:data:`ONE_TASK_BYTES`): then no step of the run shuffles them (no job per exchange)."""
        return sum(f.size for f in self.apply) <= ONE_TASK_BYTES

    @property
    def reconciled(self) -> int:
        """How many landed files a completed commit had consumed already."""
        return sum(len(files) for _, files in self.reconcile)

    def set_aside(self, bad: TrackedFile, reason: str) -> TablePlan:
        """Pure: the plan without ``bad``, a file of ``apply`` that failed in a way every run would repeat.

        ``bad`` is quarantined with ``reason``; so is each file skipped as a duplicate of its content (the
        same bytes fail the same way; applying none of them is what the table holds). The rest of
        ``apply`` keeps its order: the run's commit names exactly the files it applies.

        Raises:
            ValueError: ``bad`` is not a file this plan applies.
        """
        if bad not in self.apply:
            raise ValueError(f"{bad.key} is not among the files this run applies")
        copies = [(d, o) for d, o in self.duplicates if o.file_id == bad.file_id]
        held = [
            (d, f"same content (ETag {d.content_tag}) as {bad.key}, quarantined by this run: {reason}")
            for d, _ in copies
        ]
        return TablePlan(
            self.reconcile,
            tuple(f for f in self.apply if f.file_id != bad.file_id),
            tuple(pair for pair in self.duplicates if pair not in copies),
            (*self.quarantine, (bad, reason), *held),
        )


def plan_table_run(
    config: TableConfig,
    landed: Sequence[TrackedFile],
    commits: Sequence[CommitSummary],
    applied: Mapping[str, TrackedFile],
) -> TablePlan:
    """Pure: the plan of a table run. ``applied``: ETag -> the processed file that applied it (file_tracker_history,
    read before this run reconciles; historical tables, ignored for current ones). The files reconciled now count
    as applied by their commit too, after those already in history.

    Raises:
        TableConfigError: the configured index is not the one the table was written with (nothing is planned).
    """
    check_index_unchanged(config, stored_index(list(commits)))
    consumed = committed_file_ids(list(commits))
    done = [f for f in landed if f.file_id in consumed]
    reconcile = tuple(
        (instant, tuple(f for f in done if consumed[f.file_id] == instant))
        for instant in sorted({consumed[f.file_id] for f in done})
    )
    todo = [f for f in landed if f.file_id not in consumed]
    duplicates: list[tuple[TrackedFile, TrackedFile]] = []
    if config.mode is TableMode.HISTORICAL and todo:
        held = {
            f.content_tag: f.model_copy(update={"commit_instant": i})
            for i, files in reversed(reconcile)
            for f in files[::-1]
        }
        todo, duplicates = split_duplicate_content(todo, {**held, **applied})
    return TablePlan(reconcile, tuple(sorted(todo, key=_order)), tuple(duplicates))


def _order(tracked: TrackedFile) -> tuple[str, str]:
    return tracked.key, tracked.landed_at


def check_index_unchanged(config: TableConfig, stored: str | None) -> None:
    """Pure: refuse a write whose index differs from the one the table was written with.

    Hudi accepts a bucket index with another bucket count, or one switched from the record index, and then
    places a key where no earlier write of it is looked for: the table would hold it twice. A switch between the
    record and the simple index would leave a record index missing the keys written without it (or a metadata table
    Hudi deletes). ``stored``: the
    index of the table's last ODP commit (None: a new table, any index goes).

    Raises:
        TableConfigError: the configured index is not the stored one (nothing is written; files stay landed).
    """
    wanted = HudiTarget.from_table(config).index
    left_to_size = config.small_table_rows > 0 and config.index is IndexKind.RECORD and config.index_buckets is None
    if left_to_size and stored in (RECORD_INDEX, SIMPLE_INDEX):
        return  # the index was left to the table's size: its first write chose (etl.raw_table.write_strategy)
    if stored is not None and stored != wanted:
        raise TableConfigError(
            f"{config.table_id}: table_config asks for the {wanted} index (index: {config.index.value}, "
            f"index_buckets: {config.index_buckets}), but the table was written with the {stored} index; a table's "
            "index is fixed at its first write (another one would store its keys twice, or miss them). Set index and "
            "index_buckets back, or delete the table's files and tombstones and load it again with the new setting"
        )


def split_duplicate_content(
    landed: list[TrackedFile], applied: dict[str, TrackedFile]
) -> tuple[list[TrackedFile], list[tuple[TrackedFile, TrackedFile]]]:
    """Pure: the files to apply, and each file whose content (ETag) the table holds already, with that file.

    A historical table appends every change, so the same bytes under a new key would double it.
    ``applied`` maps ETag -> the processed file that applied it; within the batch the first file in
    key order is applied and later copies are duplicates. A file with ``replay`` set is always applied.
    """
    seen = dict(applied)
    keep: list[TrackedFile] = []
    duplicates: list[tuple[TrackedFile, TrackedFile]] = []
    for tracked in sorted(landed, key=_order):
        original = seen.get(tracked.content_tag) if tracked.content_tag and not tracked.replay else None
        if original is not None:
            duplicates.append((tracked, original))
            continue
        keep.append(tracked)
        seen.setdefault(tracked.content_tag, tracked)
    return keep, duplicates


def source_files(landed: Sequence[TrackedFile], resolve_uri: Callable[[str], str]) -> list[SourceFile]:
    """Landed files in key order, numbered: the order changes in one batch are applied."""
    return [
        SourceFile(
            uri=resolve_uri(f.uri),
            key=f.key,
            order=index,
            is_full_load=f.file_kind is FileKind.FULL_LOAD,
            file_id=f.file_id,
        )
        for index, f in enumerate(sorted(landed, key=_order))
    ]

"""Refresh one dataset: plan (pure frames) then write (one Hudi commit), exactly once per source commit.

How a run knows what it consumed: every dataset commit carries ``_odp_consumed`` in its extra
metadata, the latest completed commit of each source the run read (taken *before* reading, so a
commit landing during the run is read again next time, never skipped). A run whose sources have
no commit after those is ``up_to_date`` and writes nothing; a crash after the commit and before any
bookkeeping therefore reruns as ``up_to_date``: nothing is applied twice.

incremental (one source, same key, one output row per source row): the SQL runs over the source
rows whose ``_hoodie_commit_time`` is after the consumed commit; source rows deleted since, and
changed rows the SQL now filters out, are deleted from the dataset (found by key against the
current source). full: the SQL runs over the whole sources; dataset keys it no longer produces are
deleted. A first run is always full. Both write upserts and deletes in one commit, only after
every ``fail`` rule holds on the dataset as it would be after the write.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from etl.culprits import find_culprit
from etl.datasets.quality import check_rules
from etl.datasets.sql_check import bind_sources, check_dataset_sql
from etl.hudi.commit import CommitTag, commit_once
from etl.hudi.options import WriteOperation, WriteProfile, hudi_write_options
from etl.hudi.table_version import check_table_version, save_hudi, stored_table_version
from etl.hudi.target import HudiTarget
from etl.hudi.timeline import latest_commit_metadata, latest_instant
from etl.readers.common import java_cause
from odp.config.datasets import DatasetConfig, Refresh
from odp.config.models import TableConfig
from odp.contracts.datasets import LakeRoots
from odp.naming import table_base_path
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.statuses import RunStatus

CONSUMED_METADATA = "_odp_consumed"
COMMIT_TIME = "_hoodie_commit_time"
DELETED = "_hoodie_is_deleted"
JOB = "datasets"  # the fault points' area: a kill right after the commit is AFTER_COMMIT_FAULT
AFTER_COMMIT_FAULT = f"{JOB}.after_commit"


class DatasetSqlInvalidError(ValueError):
    """The dataset's SQL does not fit its sources (the message lists every problem)."""


class DatasetInputError(Exception):
    """One of a dataset's inputs (a raw table or another dataset) does not read: the message names it, what it
    reads and the cause."""


@dataclass(frozen=True)
class DatasetInput:
    """One source of a dataset as the run reads it: the name its SQL uses, what it reads (a raw table id or
    ``dataset:<name>``), where, and its snapshot (``_hoodie_commit_time`` kept)."""

    name: str
    source_id: str
    path: str
    frame: DataFrame

    def failure(self, error: BaseException) -> DatasetInputError:
        return input_failure(self.name, self.source_id, self.path, error)


def input_failure(name: str, source_id: str, path: str, error: BaseException) -> DatasetInputError:
    """``input <name> (<source id> at <path>) does not read: <type>: <cause>``."""
    cause = f"{type(error).__name__}: {java_cause(error)}"
    return DatasetInputError(f"input {name} ({source_id} at {path}) does not read: {cause}")


def read_input(spark: SparkSession, name: str, source_id: str, path: str) -> DatasetInput:
    """The snapshot of one input (:func:`read_table`).

    Raises:
        DatasetInputError: the input's table does not load (names the input).
    """
    try:
        return DatasetInput(name, source_id, path, read_table(spark, path))
    except (CapturedException, Py4JJavaError) as error:
        raise input_failure(name, source_id, path, error) from error


def _read_fully(inputs: list[DatasetInput]) -> BaseException | None:
    """Every row and column of ``inputs``, one Spark job each: the error the first that fails raises, else None."""
    try:
        for source in inputs:
            source.frame.select(F.max(F.hash(*[F.col(f"`{name}`") for name in source.frame.columns]))).collect()
    except (CapturedException, Py4JJavaError) as error:
        return error
    return None


def failing_input(error: Exception, inputs: list[DatasetInput]) -> Exception:
    """``error`` (the dataset's computation failed) as the error of the input it fails on, when one does not read
    (the inputs read apart, :func:`etl.culprits.find_culprit`); else ``error`` itself: the dataset's own failure
    (its SQL on the data)."""
    everything = _read_fully(inputs)
    if everything is None:
        return error
    culprit = find_culprit(inputs, _read_fully, everything).culprit
    return culprit.item.failure(culprit.error) if culprit is not None else error


@dataclass(frozen=True)
class RefreshPlan:
    """What one run writes: upserted rows, deleted rows, and the dataset as it would be after."""

    refresh: Refresh
    upserts: DataFrame
    deletes: DataFrame  # rows of the stored dataset to delete (their key is all that matters)
    after: DataFrame


def consumed_instants(spark: SparkSession, base_path: str) -> dict[str, str] | None:
    """Source id -> commit the dataset's latest commit consumed; ``None`` when the dataset has no commit."""
    metadata = latest_commit_metadata(spark, base_path)
    if metadata is None:
        return None
    raw = metadata.get(CONSUMED_METADATA)
    return json.loads(raw) if raw else {}


def read_table(spark: SparkSession, base_path: str) -> DataFrame:
    """A Hudi snapshot with ``_hoodie_commit_time`` kept and the other meta columns dropped."""
    frame = spark.read.format("hudi").load(base_path)
    meta = [c for c in frame.columns if c.startswith("_hoodie_") and c != COMMIT_TIME]
    return frame.drop(*meta)


def data_columns(frame: DataFrame) -> DataFrame:
    return frame.drop(*[c for c in frame.columns if c.startswith("_hoodie_")])


def plan_full(output: DataFrame, stored: DataFrame | None, key: tuple[str, ...]) -> RefreshPlan:
    """Pure: the SQL over whole sources replaces the dataset; stored keys it no longer produces go."""
    deletes = stored.join(output.select(*key), list(key), "left_anti") if stored is not None else output.limit(0)
    return RefreshPlan(Refresh.FULL, output, deletes, output)


def plan_incremental(
    output: DataFrame, changed: DataFrame, source: DataFrame, stored: DataFrame, key: tuple[str, ...]
) -> RefreshPlan:
    """Pure: ``output`` is the SQL over ``changed`` source rows; ``source`` is the whole current source.

    Deleted: stored keys no longer in the source, and changed keys the SQL no longer produces.
    """
    gone = stored.select(*key).join(source.select(*key), list(key), "left_anti")
    filtered_out = changed.select(*key).join(output.select(*key), list(key), "left_anti")
    delete_keys = gone.unionByName(filtered_out).distinct()
    deletes = stored.join(delete_keys, list(key), "left_semi")
    touched = output.select(*key).unionByName(delete_keys)
    after = stored.join(touched, list(key), "left_anti").unionByName(output, allowMissingColumns=True)
    return RefreshPlan(Refresh.INCREMENTAL, output, deletes, after)


@dataclass(frozen=True)
class CheckedPlan:
    """A refresh plan computed (its frames materialised) and its rules checked: what is written, if anything."""

    refresh: Refresh
    upserts: DataFrame
    deletes: DataFrame
    outcomes: tuple
    counts: dict[str, int]


@dataclass
class DatasetRefresher:
    """Refreshes datasets of one configuration (fault point ``datasets.after_commit`` right after each commit)."""

    spark: SparkSession
    roots: LakeRoots
    tables: Mapping[str, TableConfig]
    datasets: Mapping[str, DatasetConfig]
    catalog_sync: bool = False
    profile: WriteProfile = field(default_factory=WriteProfile)  # production unless a local run says so

    def source_path(self, dataset: DatasetConfig, index: int) -> str:
        source = dataset.sources[index]
        if source.table is not None:
            table = self.tables[source.table]
            return table_base_path(self.roots.raw, table.database, table.target_table)
        return self.roots.dataset_path(self.datasets[source.dataset])

    def refresh(self, dataset: DatasetConfig, *, force_full: bool = False) -> DatasetRun:
        """Refresh one dataset; never raises for the dataset's own problems (they are in the result)."""
        started = time.time()
        run_id = uuid.uuid4().hex
        base = {
            "dataset": dataset.name,
            "zone": dataset.zone.value,
            "run_id": run_id,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        }
        try:
            run = self._refresh(dataset, force_full=force_full, run_id=run_id, base=base)
        except Exception as error:  # noqa: BLE001 - one dataset's failure is its result, never the others'
            run = DatasetRun(
                **base,
                status=RunStatus.FAILED,
                refresh=dataset.refresh.value,
                error=f"{type(error).__name__}: {error}",
            )
        return run.model_copy(update={"duration_seconds": round(time.time() - started, 3)})

    def _refresh(self, dataset: DatasetConfig, *, force_full: bool, run_id: str, base: dict) -> DatasetRun:
        path = self.roots.dataset_path(dataset)
        target = HudiTarget.from_dataset(dataset)
        check_table_version(
            stored_table_version(self.spark, path),
            label=dataset.name,
            base_path=path,
            catalog_name=f"{target.database}.{target.name}",
            replay=False,
        )
        paths = {source.name: self.source_path(dataset, i) for i, source in enumerate(dataset.sources)}
        ids = dict(zip((s.name for s in dataset.sources), dataset.source_ids(), strict=True))
        # Taken before any read: a commit landing during this run is read again next time, never skipped.
        latest = {ids[name]: self._latest_instant(name, ids[name], source_path) for name, source_path in paths.items()}
        missing = tuple(source_id for source_id, instant in latest.items() if instant is None)
        if missing:  # not an error: a source onboarded, not yet written (the refresh after its commit runs it)
            return DatasetRun(**base, status=RunStatus.WAITING, refresh=dataset.refresh.value, waiting_for=missing)
        consumed = consumed_instants(self.spark, path)
        if consumed == latest and not force_full:
            return DatasetRun(**base, status=RunStatus.UP_TO_DATE, refresh=dataset.refresh.value, consumed=latest)
        inputs = [read_input(self.spark, name, ids[name], source_path) for name, source_path in paths.items()]
        sources = {source.name: source.frame for source in inputs}
        issues, _ = check_dataset_sql(
            self.spark, dataset, {name: data_columns(frame).schema for name, frame in sources.items()}
        )
        if issues:
            raise DatasetSqlInvalidError("; ".join(str(issue) for issue in issues))
        stored = data_columns(self.spark.read.format("hudi").load(path)) if consumed is not None else None
        incremental = (
            dataset.refresh is Refresh.INCREMENTAL
            and not force_full
            and stored is not None
            and ids[dataset.sources[0].name] in consumed
        )
        if incremental:
            name = dataset.sources[0].name
            since = consumed[ids[name]]
            changed = data_columns(sources[name].where(F.col(COMMIT_TIME) > F.lit(since)))
            bind_sources(self.spark, dataset, {name: changed})
            plan = plan_incremental(
                self.spark.sql(dataset.sql), changed, data_columns(sources[name]), stored, dataset.key
            )
        else:
            bind_sources(self.spark, dataset, {name: data_columns(frame) for name, frame in sources.items()})
            plan = plan_full(self.spark.sql(dataset.sql), stored, dataset.key)
        try:
            checked = self._checked(dataset, plan)
        except (CapturedException, Py4JJavaError) as error:
            raise failing_input(error, inputs) from error
        return self._write_checked(dataset, checked, latest=latest, run_id=run_id, base=base, path=path)

    def _latest_instant(self, name: str, source_id: str, path: str) -> str | None:
        """An input's latest completed commit (None: none yet).

        Raises:
            DatasetInputError: its timeline does not read (names the input).
        """
        try:
            return latest_instant(self.spark, path)
        except (CapturedException, Py4JJavaError) as error:
            raise input_failure(name, source_id, path, error) from error

    def _checked(self, dataset: DatasetConfig, plan: RefreshPlan) -> CheckedPlan:
        """The plan computed and its rules checked (the frames materialised: a lineage cut, so what is written is
        what the rules saw, even though the write changes the stored dataset these frames were computed from)."""
        upserts = plan.upserts.localCheckpoint()
        deletes = plan.deletes.localCheckpoint()
        after = plan.after if plan.refresh is Refresh.INCREMENTAL else upserts
        row_count, outcomes = check_rules(after, dataset.quality, dataset.key)
        counts = {"rows_upserted": upserts.count(), "rows_deleted": deletes.count(), "row_count": row_count}
        return CheckedPlan(plan.refresh, upserts, deletes, tuple(outcomes), counts)

    def _write_checked(
        self,
        dataset: DatasetConfig,
        checked: CheckedPlan,
        *,
        latest: dict[str, str],
        run_id: str,
        base: dict,
        path: str,
    ) -> DatasetRun:
        upserts, deletes, outcomes, counts = checked.upserts, checked.deletes, checked.outcomes, checked.counts
        common = {**base, "refresh": checked.refresh.value, "consumed": latest, "rules": outcomes, **counts}
        if any(not o.passed and o.severity == "fail" for o in outcomes):
            return DatasetRun(**common, status=RunStatus.QUALITY_FAILED)
        rows = upserts.withColumn(DELETED, F.lit(False)).unionByName(
            deletes.withColumn(DELETED, F.lit(True)), allowMissingColumns=True
        )
        input_rows = counts["rows_upserted"] + counts["rows_deleted"]
        commit = commit_once(
            self.spark,
            path,
            consumed_tag(run_id, latest),
            lambda tag: self.save(rows, dataset, path, tag, input_rows=input_rows),
            job=JOB,
            label=dataset.name,
        )
        return DatasetRun(**common, status=RunStatus.WRITTEN, commit_instant=commit.instant)

    def save(self, rows: DataFrame, dataset: DatasetConfig, path: str, tag: CommitTag, *, input_rows: int) -> None:
        """One dataset commit: upserts and deletes by key, the latest write wins, ``tag`` in its metadata."""
        options = hudi_write_options(
            HudiTarget.from_dataset(dataset),
            operation=WriteOperation.UPSERT,
            profile=self.profile,
            catalog_sync=self.catalog_sync,
            input_rows=input_rows,
            metadata=tag.metadata(),
        )
        save_hudi(rows, path, options)


def consumed_tag(run_id: str, consumed: Mapping[str, str]) -> CommitTag:
    """A dataset commit's tag: its run, and the source commits it consumed (``_odp_consumed``, source id ->
    instant; also as ``<source id>@<instant>`` consumed ids, as every ODP data commit records some)."""
    return CommitTag(
        run_id,
        tuple(f"{source}@{instant}" for source, instant in sorted(consumed.items())),
        extra={CONSUMED_METADATA: json.dumps(dict(consumed), sort_keys=True)},
    )

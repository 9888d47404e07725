"""The dataset job: refresh the selected datasets in dependency order, each in its own error boundary.

Selection: the datasets named, else those downstream of the raw tables that changed (the File
Processor run's tables), else every dataset; with ``--odp_engine glue|emr_serverless`` only those of that
engine (the datasets state machine starts one run per engine). With ``--odp_ledger_tracker`` each dataset is
refreshed under its lease (etl/datasets/lease.py): one refresh of a dataset at a time, on any engine.
One dataset's failure (SQL, IO, a failed quality rule)
is its result: the datasets after it still run (a dataset reading a failed one sees its last good
commit, so at worst it is up to date).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from etl.datasets.lease import DatasetLeases
from etl.datasets.refresh import DatasetRefresher
from etl.hudi.options import HudiProfile, WriteProfile
from odp.config.datasets import DatasetConfig, dependency_order, downstream_of, of_engine
from odp.config.loader import OdpConfig
from odp.config.models import EngineName
from odp.config.store import DatasetJobConfig
from odp.contracts.datasets import DatasetJobArgs
from odp.tracker.dataset_run import DatasetRun
from odp.tracker.statuses import RunStatus

logger = logging.getLogger(__name__)
# What the job runs on (``tables``, ``datasets``): the deployed copy the job reads from DynamoDB, or config/ loaded.
DatasetsConfig = DatasetJobConfig | OdpConfig


@dataclass(frozen=True)
class DatasetJobOutcome:
    runs: tuple[DatasetRun, ...] = field(default_factory=tuple)

    @property
    def failed(self) -> list[DatasetRun]:
        return [r for r in self.runs if r.status.failed]


def select_datasets(config: DatasetsConfig, args: DatasetJobArgs) -> list[DatasetConfig]:
    """The datasets of this run (of ``args.engine`` unless it is ``any``), in dependency order.

    Raises:
        KeyError: a named dataset is not configured.
    """
    selected = _selected(config, args)
    return selected if args.engine == "any" else of_engine(selected, EngineName(args.engine))


def _selected(config: DatasetsConfig, args: DatasetJobArgs) -> list[DatasetConfig]:
    datasets = list(config.datasets)
    if args.datasets:
        known = {d.name for d in datasets}
        unknown = sorted(set(args.datasets) - known)
        if unknown:
            raise KeyError(f"unknown dataset(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return [d for d in dependency_order(datasets) if d.name in set(args.datasets)]
    if args.changed_tables:
        return downstream_of(datasets, args.changed_tables)
    return dependency_order(datasets)


def run_datasets(
    spark: SparkSession,
    config: DatasetsConfig,
    args: DatasetJobArgs,
    *,
    record: Callable[[DatasetRun], None] = lambda run: None,
    leases: DatasetLeases | None = None,
) -> DatasetJobOutcome:
    """Refresh the selected datasets; ``record`` gets each run (history item, notification); ``leases``: each
    dataset is refreshed while this run holds its lease (a dataset whose lease stays held fails, named)."""
    refresher = DatasetRefresher(
        spark,
        args.roots,
        tables={t.table_id: t for t in config.tables},
        datasets={d.name: d for d in config.datasets},
        catalog_sync=args.catalog_sync,
        profile=WriteProfile(HudiProfile(args.hudi_profile)),
    )
    runs: list[DatasetRun] = []
    for dataset in select_datasets(config, args):
        if leases is None:
            run = refresher.refresh(dataset, force_full=args.full_refresh)
        else:
            with leases.held(dataset.name) as refused:
                run = (
                    refresher.refresh(dataset, force_full=args.full_refresh)
                    if refused is None
                    else not_refreshed(dataset, leases.owner, f"not refreshed: {refused}")
                )
        level = logging.ERROR if run.status.failed else logging.INFO
        logger.log(level, "%s", run.summary())
        record(run)
        runs.append(run)
    return DatasetJobOutcome(tuple(runs))


def not_refreshed(dataset: DatasetConfig, run_id: str, error: str) -> DatasetRun:
    """Pure: the failed run of a dataset this run could not refresh (its lease stayed held by another run)."""
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return DatasetRun(
        dataset=dataset.name,
        zone=dataset.zone.value,
        status=RunStatus.FAILED,
        refresh=dataset.refresh.value,
        run_id=run_id,
        started_at=started_at,
        error=error,
    )

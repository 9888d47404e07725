"""The dataset job: refresh the selected datasets in dependency order, each in its own error boundary.

Selection: the datasets named, else those downstream of the raw tables that changed (the File
Processor run's tables), else every dataset. One dataset's failure (SQL, IO, a failed quality rule)
is its result: the datasets after it still run (a dataset reading a failed one sees its last good
commit, so at worst it is up to date).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from etl.datasets.refresh import DatasetRefresher
from etl.hudi.options import HudiProfile, WriteProfile
from odp.config.datasets import DatasetConfig, dependency_order, downstream_of
from odp.config.loader import OdpConfig
from odp.contracts.datasets import DatasetJobArgs
from odp.tracker.dataset_run import DatasetRun

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DatasetJobOutcome:
    runs: tuple[DatasetRun, ...] = field(default_factory=tuple)

    @property
    def failed(self) -> list[DatasetRun]:
        return [r for r in self.runs if r.status.failed]


def select_datasets(config: OdpConfig, args: DatasetJobArgs) -> list[DatasetConfig]:
    """The datasets of this run, in dependency order.

    Raises:
        KeyError: a named dataset is not configured.
    """
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
    config: OdpConfig,
    args: DatasetJobArgs,
    *,
    record: Callable[[DatasetRun], None] = lambda run: None,
) -> DatasetJobOutcome:
    """Refresh the selected datasets; ``record`` gets each run (history item, notification)."""
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
        run = refresher.refresh(dataset, force_full=args.full_refresh)
        level = logging.ERROR if run.status.failed else logging.INFO
        logger.log(level, "%s", run.summary())
        record(run)
        runs.append(run)
    return DatasetJobOutcome(tuple(runs))

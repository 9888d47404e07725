"""The work a piece of driver code makes Spark and Hudi do, counted deterministically (not timed).

``SparkWork`` opens a window on the session: the Spark jobs started in it (the DAG scheduler's job counter,
which every job of the application increments: ODP's own actions and those Hudi runs inside a write), and the
driver's reads of a Hudi table's state (each meta client built: a timeline / ``hoodie.properties`` read, and
each Hudi relation resolved for its schema: a meta client, a timeline and a commit metadata read inside).
Wall-clock time on a shared machine is noise; these counts are the same on every run of the same input.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

HUDI_META_COLUMN = "_hoodie_commit_time"


def job_counter(spark: Any) -> int:
    """The id the next Spark job of the application will get (= jobs started so far)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().numTotalJobs())


@dataclass
class SparkWork:
    """Counts of one window: ``jobs`` started, ``meta_clients`` built, ``hudi_loads`` (Hudi relations resolved)."""

    jobs: int = 0
    meta_clients: int = 0
    hudi_loads: int = 0
    state_reads: list[str] = field(default_factory=list)
    job_names: list[str] = field(default_factory=list)  # where each driver read of a table's state came from

    @property
    def table_state_reads(self) -> int:
        return self.meta_clients + self.hudi_loads


@contextmanager
def spark_work(spark: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[SparkWork]:
    """Count the work done inside the ``with`` block (one table's run, nothing else running on the session)."""
    from pyspark.sql.readwriter import DataFrameReader

    import etl.hudi.timeline

    work = SparkWork()
    build = etl.hudi.timeline._meta_client
    load = DataFrameReader.load

    def counted_build(spark_: Any, base_path: str) -> Any:
        work.meta_clients += 1
        work.state_reads.append(f"meta client {base_path.rsplit('/', 1)[-1]}")
        return build(spark_, base_path)

    def counted_load(reader: DataFrameReader, *args: Any, **options: Any) -> Any:
        frame = load(reader, *args, **options)
        if HUDI_META_COLUMN in frame.columns:  # a Hudi relation: its timeline and schema were read
            work.hudi_loads += 1
            work.state_reads.append(f"hudi load {str(args[0] if args else '').rsplit('/', 1)[-1]}")
        return frame

    with monkeypatch.context() as patch:
        patch.setattr(etl.hudi.timeline, "_meta_client", counted_build)
        patch.setattr(DataFrameReader, "load", counted_load)
        before = job_counter(spark)
        yield work
        work.jobs = job_counter(spark) - before
        work.job_names = job_names(spark, before, before + work.jobs)


def job_names(spark: Any, first: int, end: int) -> list[str]:
    """What each job of ids [first, end) was (its call site or Hudi's description), from Spark's status store."""
    store = spark.sparkContext._jsc.sc().statusStore()
    names = []
    for job_id in range(first, end):
        data = store.job(job_id)
        description = data.description()
        names.append(f"{job_id}: {description.get() if description.isDefined() else ''} | {data.name()}")
    return names

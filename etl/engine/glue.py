"""AWS Glue 5.1: getResolvedOptions, GlueContext, and ``--JOB_NAME`` / ``--JOB_RUN_ID`` as the lease holder.

What Glue does for ODP outside this module: one dataset run at a time (the dataset job's
MaxConcurrentRuns 1; the dataset lease, etl/datasets/lease.py, does it on any engine), the Hudi runtime
(``--datalake-formats hudi``), and the DPUs whose
DPU-seconds the File Processor shares among its tables (``--odp_job_dpus``, etl/file_processor/cost.py).
A lease held by a Glue run is checked with glue:GetJobRun (odp.tracker.job_runs.GlueJobRuns).
"""

from __future__ import annotations

from typing import Any, TypeVar

from odp.contracts.base import JobContract
from odp.tracker import JobRunRef

C = TypeVar("C", bound=JobContract)


def glue_job_run(argv: list[str]) -> JobRunRef | None:
    """Pure: the Glue job run of a command line; Glue passes ``--JOB_NAME`` and ``--JOB_RUN_ID`` to every script."""
    values: dict[str, str] = {}
    for name in ("JOB_NAME", "JOB_RUN_ID"):
        flag = f"--{name}"
        for index, arg in enumerate(argv[:-1]):
            if arg == flag:
                values[name] = argv[index + 1]
    if len(values) < 2:
        return None
    return JobRunRef(values["JOB_NAME"], values["JOB_RUN_ID"])


class GlueEngine:
    name = "glue"

    def parse_arguments(self, contract: type[C], argv: list[str], description: str) -> C:
        from awsglue.utils import getResolvedOptions  # noqa: PLC0415 - only on Glue

        return contract.from_arguments(getResolvedOptions(argv, contract.resolvable_names(argv)))

    def spark_session(self, app_name: str) -> Any:
        from awsglue.context import GlueContext  # noqa: PLC0415 - only on Glue
        from pyspark.context import SparkContext  # noqa: PLC0415

        from etl.jvm import ready_gateway  # noqa: PLC0415 - keep import time free of Spark

        return ready_gateway(GlueContext(SparkContext.getOrCreate()).spark_session)

    def job_run(self, argv: list[str]) -> JobRunRef | None:
        return glue_job_run(argv)

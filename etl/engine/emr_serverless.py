"""Amazon EMR Serverless: the same job contract as Glue, passed as spark-submit's entry point arguments.

EMR Serverless runs ``etl/jobs/emr_serverless.py <job> --odp_... <value> ...`` with spark-submit
(the StartJobRun ``entryPointArguments``); the Spark settings come from ``sparkSubmitParameters``
(:func:`odp.contracts.spark.spark_submit_parameters`). What Glue gives ODP and EMR Serverless does not, and its
replacement:

- getResolvedOptions: argparse over the contract's names (etl.engine.base.argparse_arguments).
- GlueContext: the SparkSession spark-submit configured (Hudi's session settings in ``--conf``).
- ``--JOB_NAME`` / ``--JOB_RUN_ID``: the environment EMR Serverless gives the driver
  (``AWS_EMR_SERVERLESS_APPLICATION_ID``, ``AWS_EMR_SERVERLESS_JOB_RUN_ID``); the lease holder is
  ``emr-serverless/<application id>`` + the job run id, and a lease is taken over early only when
  emr-serverless:GetJobRun says that run ended (odp.tracker.job_runs). Without them: no early takeover,
  the lease expires as usual.
- ``--datalake-formats hudi`` and ``--extra-jars``: the Hudi bundle ODP pins and ODP's jar of Hudi extensions (in
  ODP's image), on the driver's and the executors' class path (``spark.driver.extraClassPath`` /
  ``spark.executor.extraClassPath``), never ``spark.jars`` (the child class loader of spark.jars breaks a record
  index lookup, etl/README.md "How the Hudi bundle is loaded", and Hudi's ``Class.forName`` would not see the
  extensions there).
- DPU-seconds: EMR bills vCPU- and GB-seconds, not DPUs; ``--odp_job_dpus`` stays 0 and the table's
  seconds are published without a DPU-seconds share.
- MaxConcurrentRuns 1 of the dataset job: EMR Serverless has no per-job limit; every dataset job run refreshes a
  dataset under its lease ``dataset:<name>`` in processing_tracker (etl/datasets/lease.py), on either engine.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from etl.engine.base import argparse_arguments
from odp.contracts.base import JobContract
from odp.tracker import JobRunRef
from odp.tracker.job_runs import EMR_SERVERLESS_PREFIX

C = TypeVar("C", bound=JobContract)
EMR_APPLICATION_ENV = "AWS_EMR_SERVERLESS_APPLICATION_ID"
EMR_JOB_RUN_ENV = "AWS_EMR_SERVERLESS_JOB_RUN_ID"


def emr_job_run(environ: dict[str, str] | os._Environ[str]) -> JobRunRef | None:
    """Pure: the lease holder of an EMR Serverless job run, from the driver's environment."""
    application, run = environ.get(EMR_APPLICATION_ENV), environ.get(EMR_JOB_RUN_ENV)
    if not application or not run:
        return None
    return JobRunRef(f"{EMR_SERVERLESS_PREFIX}{application}", run)


class EmrServerlessEngine:
    name = "emr_serverless"

    def parse_arguments(self, contract: type[C], argv: list[str], description: str) -> C:
        return argparse_arguments(contract, argv, description)

    def spark_session(self, app_name: str) -> Any:
        from pyspark.sql import SparkSession  # noqa: PLC0415 - keep import time free of Spark

        from etl.jvm import ready_gateway  # noqa: PLC0415

        # spark-submit set everything (sparkSubmitParameters); getOrCreate keeps it.
        return ready_gateway(SparkSession.builder.appName(app_name).getOrCreate())

    def job_run(self, argv: list[str]) -> JobRunRef | None:
        return emr_job_run(os.environ)

"""Where a job runs: the one place that knows Glue, EMR Serverless or a laptop (see etl/README.md, "Engines").

A job's entry point asks its :class:`~etl.engine.base.Engine` for three things only: the job
contract from the command line, a SparkSession, and the job run this process is (who holds a
table's lease). Everything else in etl/ is engine-neutral.
"""

from __future__ import annotations

import importlib.util
import os

from etl.engine.base import Engine
from etl.engine.emr_serverless import EMR_JOB_RUN_ENV, EmrServerlessEngine
from etl.engine.glue import GlueEngine
from etl.engine.local import LocalEngine

__all__ = ["EmrServerlessEngine", "Engine", "GlueEngine", "LocalEngine", "detect_engine"]


def detect_engine() -> Engine:
    """Glue when ``awsglue`` is importable, EMR Serverless when its job run id is in the environment, else local."""
    if importlib.util.find_spec("awsglue") is not None:
        return GlueEngine()
    if os.environ.get(EMR_JOB_RUN_ENV):
        return EmrServerlessEngine()
    return LocalEngine()

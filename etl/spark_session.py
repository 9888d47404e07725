"""The local SparkSession with the Hudi bundle: tests, the sandbox and local job runs.

On Glue the job gets its session from GlueContext (Glue 5.1 ships Hudi when the job sets
``--datalake-formats hudi``); this module is only for local Spark 3.5.6 with the Hudi 1.0.2 bundle.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

REPO_ROOT = Path(__file__).resolve().parents[1]
HUDI_BUNDLE_ENV = "ODP_HUDI_BUNDLE_JAR"
DEFAULT_HUDI_BUNDLE = REPO_ROOT / ".cache" / "jars" / "hudi-spark3.5-bundle_2.12-1.0.2.jar"


class HudiBundleMissingError(FileNotFoundError):
    """The Hudi Spark bundle jar is not where the session looks for it: run ``make setup``."""


def hudi_bundle_jar() -> Path:
    """The Hudi bundle jar: env ODP_HUDI_BUNDLE_JAR, else the one the Makefile fetches.

    Raises:
        HudiBundleMissingError: the jar does not exist.
    """
    jar = Path(os.environ.get(HUDI_BUNDLE_ENV) or DEFAULT_HUDI_BUNDLE)
    if not jar.is_file():
        raise HudiBundleMissingError(f"Hudi bundle not found at {jar}; run `make setup` or set {HUDI_BUNDLE_ENV}")
    return jar


def local_spark_session(app_name: str = "odp", warehouse_dir: str | None = None) -> SparkSession:
    """A small local[2] session configured for Hudi; reuses the active session if there is one.

    Raises:
        HudiBundleMissingError: no session is active and the Hudi bundle jar is missing.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    jar = hudi_bundle_jar()
    # Python workers import etl.* by reference (parsers run on executors): the repo must be on their path.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(REPO_ROOT) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *paths])
    warehouse = warehouse_dir or tempfile.mkdtemp(prefix="odp-warehouse-")
    return (
        SparkSession.builder.appName(app_name)
        .master("local[2]")
        .config("spark.jars", str(jar))
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # The tables of a batch run in threads (etl.file_processor.concurrency), each in its own FAIR pool.
        .config("spark.scheduler.mode", "FAIR")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .getOrCreate()
    )

"""The local SparkSession with the Hudi bundle: tests, the sandbox and local job runs.

On Glue the job gets its session from GlueContext (Glue 5.1 ships Hudi when the job sets
``--datalake-formats hudi``); this module is only for local Spark 3.5.6 with the Hudi 1.0.2 bundle.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from etl.jvm import ready_gateway
from odp.contracts.spark import HUDI_SESSION_CONF, LOCAL_JVM_OPTIONS_ENV

REPO_ROOT = Path(__file__).resolve().parents[1]
HUDI_BUNDLE_ENV = "ODP_HUDI_BUNDLE_JAR"
DEFAULT_HUDI_BUNDLE = REPO_ROOT / ".cache" / "jars" / "hudi-spark3.5-bundle_2.12-1.0.2.jar"
# ODP's own classes Hudi loads by name (jvm/README.md: the catalog sync's partition extractor, the MERGE_ON_READ
# compaction strategy), built by make setup.
HUDI_EXTENSIONS_ENV = "ODP_HUDI_EXTENSIONS_JAR"
DEFAULT_HUDI_EXTENSIONS = REPO_ROOT / ".cache" / "jars" / "odp-hudi-extensions.jar"
# The local file system ODP's jar provides (jvm/local-filesystem), as the Makefile's ODP_LOCAL_JVM_OPTIONS sets it: a
# Spark setting given as a system property (docs/decisions/035). A JVM without ODP's jar must drop it.
LOCAL_FILE_SYSTEM_OPTION = "-Dspark.hadoop.fs.file.impl="
# ODP's Spark plugin that drops the Hadoop configuration's property sources (jvm/local-profile, docs/decisions/039),
# set the same way.
UNTRACED_HADOOP_CONFIGURATION_OPTION = "-Dspark.plugins="
# The local options that name a class of ODP's jar.
ODP_CLASS_OPTIONS = (LOCAL_FILE_SYSTEM_OPTION, UNTRACED_HADOOP_CONFIGURATION_OPTION)
LOCAL_DRIVER_MEMORY = "2g"  # the local profile's heap: local[2] runs every task in the driver's JVM


class HudiBundleMissingError(FileNotFoundError):
    """The Hudi Spark bundle jar is not where the session looks for it: run ``make setup``."""


def required_jar(env: str, default: Path, what: str) -> Path:
    """A jar ``make setup`` provides: env ``env`` if set, else ``default``.

    Raises:
        HudiBundleMissingError: the jar does not exist (the message names ``what``, where it looked and the fix).
    """
    jar = Path(os.environ.get(env) or default)
    if not jar.is_file():
        raise HudiBundleMissingError(f"{what} not found at {jar}; run `make setup` or set {env}")
    return jar


def hudi_bundle_jar() -> Path:
    """The Hudi bundle jar: env ODP_HUDI_BUNDLE_JAR, else the one the Makefile fetches.

    Raises:
        HudiBundleMissingError: the jar does not exist.
    """
    return required_jar(HUDI_BUNDLE_ENV, DEFAULT_HUDI_BUNDLE, "Hudi bundle")


def hudi_extensions_jar() -> Path:
    """ODP's jar of Hudi extensions (jvm/): env ODP_HUDI_EXTENSIONS_JAR, else the one ``make setup`` compiles.

    Raises:
        HudiBundleMissingError: the jar does not exist.
    """
    return required_jar(
        HUDI_EXTENSIONS_ENV, DEFAULT_HUDI_EXTENSIONS, "ODP's Hudi extensions jar (make setup compiles jvm/)"
    )


def local_spark_conf(
    jar: Path,
    warehouse: str,
    extensions: Path | None = None,
    *,
    driver_memory: str = LOCAL_DRIVER_MEMORY,
    jvm_options: str = "",
) -> dict[str, str]:
    """Pure: the settings of the local session, the Hudi bundle (and ``extensions``, ODP's jar of classes Hudi
    loads by name, beside it) on the driver's class path included.

    ``spark.driver.extraClassPath``: Hudi's Avro classes (``HoodieDeleteRecord`` of a delete block in the
    record index's log files) must be visible to the JVM's system class loader. With the bundle only on
    ``spark.jars`` it sits in a child class loader that a thread of Java's common fork-join pool cannot
    see; a record index lookup over several file groups fans out on those threads, Avro falls back to a
    generic record and Hudi fails with ``ClassCastException: GenericData$Record cannot be cast to
    HoodieDeleteRecord`` (Apache Hudi #10609, #11697, #13410). Class path settings are read when the JVM
    starts: pyspark passes the builder's settings to spark-submit as ``--conf``, which puts them on the
    driver JVM's class path. ``spark.jars`` stays: it is how Spark ships the bundle to executors. The extensions
    jar goes where the bundle goes: Hudi loads its classes by name from its own (the system) class loader.
    ``jvm_options``: more options for the driver JVM (``ODP_LOCAL_JVM_OPTIONS``).
    """
    jars = [str(jar)] if extensions is None else [str(jar), str(extensions)]
    return {
        "spark.jars": ",".join(jars),
        "spark.driver.extraClassPath": os.pathsep.join(jars),
        **HUDI_SESSION_CONF,
        "spark.sql.warehouse.dir": warehouse,
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.memory": driver_memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        # The tables of a batch run in threads (etl.file_processor.concurrency), each in its own FAIR pool.
        "spark.scheduler.mode": "FAIR",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse} {jvm_options}".strip(),
    }


def local_jvm_options() -> str:
    """The local JVM's options of this environment (``ODP_LOCAL_JVM_OPTIONS``, the Makefile's class data archive;
    empty on Glue and EMR)."""
    return os.environ.get(LOCAL_JVM_OPTIONS_ENV, "").strip()


def local_jvm_options_without_odp_classes() -> str:
    """The local JVM's options for a JVM without ODP's jar on its class path (the consumers' Hudi 0.15 reader): all
    but those naming a class of that jar (:data:`ODP_CLASS_OPTIONS`: the local file system, the Spark plugin)."""
    return " ".join(option for option in local_jvm_options().split() if not option.startswith(ODP_CLASS_OPTIONS))


def local_child_jvm_conf() -> dict[str, str]:
    """The settings that start another local JVM (a spark-submit child, a plain session of another program) as the
    local session's JVM starts: ``ODP_LOCAL_JVM_OPTIONS`` as its driver options, and the local session's driver
    class path (the bundle, then ODP's extensions jar), the one the class data archive was made with, so the JVM
    maps its classes from the archive instead of loading them (docs/decisions/023). Empty when the variable is
    unset: on Glue and EMR, and in a real benchmark, which drops it so that every contender starts alike."""
    options = local_jvm_options()
    if not options:
        return {}
    class_path = os.pathsep.join([str(hudi_bundle_jar()), str(hudi_extensions_jar())])
    return {"spark.driver.extraClassPath": class_path, "spark.driver.extraJavaOptions": options}


def local_spark_session(
    app_name: str = "odp",
    warehouse_dir: str | None = None,
    *,
    without: tuple[str, ...] = (),
    driver_memory: str = LOCAL_DRIVER_MEMORY,
    jvm_options: str | None = None,
) -> SparkSession:
    """A small local[2] session configured for Hudi (``local_spark_conf``); reuses the active session if there
    is one (then its JVM keeps the settings it started with). ``without``: settings of ``local_spark_conf`` to
    leave out (tests that show what one of them prevents); ``driver_memory``: the heap every local task runs in
    (the benchmark's ``--driver-memory``); ``jvm_options``: more driver JVM options (default: env
    ``ODP_LOCAL_JVM_OPTIONS``).

    Raises:
        HudiBundleMissingError: no session is active and the Hudi bundle jar or ODP's extensions jar is missing.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    jar, extensions = hudi_bundle_jar(), hudi_extensions_jar()
    # Python workers import etl.* by reference (parsers run on executors): the repo must be on their path.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(REPO_ROOT) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *paths])
    warehouse = warehouse_dir or tempfile.mkdtemp(prefix="odp-warehouse-")
    builder = SparkSession.builder.appName(app_name).master("local[2]")
    options = local_jvm_options() if jvm_options is None else jvm_options
    conf = local_spark_conf(jar, warehouse, extensions, driver_memory=driver_memory, jvm_options=options)
    for key, value in conf.items():
        if key not in without:
            builder = builder.config(key, value)
    return ready_gateway(builder.getOrCreate())

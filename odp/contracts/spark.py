"""The Spark settings every engine gives an ODP job, as data: Hudi's session settings, and their spark-submit form.

Declared here, not in ``etl/``, because the infrastructure (EMR Serverless' ``sparkSubmitParameters``), the sandbox
(spark-submit of the EMR entry point) and the local session all need them, and nothing outside ``etl/`` may import
Spark code (a test imports the CDK app and fails if pyspark is loaded).
"""

from __future__ import annotations

from collections.abc import Sequence

# More options for the local driver JVM (never Glue's): the Makefile exports the class data archive `make setup`
# builds (sandbox/class_archive.py, docs/decisions/023); etl.spark_session reads it, a benchmark drops it
# (bench/measure.py), the test run adds C1 only for its child JVMs (tests/support/jvm_options.py).
LOCAL_JVM_OPTIONS_ENV = "ODP_LOCAL_JVM_OPTIONS"

# Hudi's session settings, wherever the session is built (local, spark-submit on EMR Serverless; Glue's own
# --conf of the Glue jobs repeats them with its own additions: infrastructure/jobs/glue_job.py).
HUDI_SESSION_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}


def spark_submit_parameters(class_path: Sequence[str], conf: dict[str, str] | None = None) -> list[str]:
    """Pure: the spark-submit options of a job on EMR Serverless (and of the sandbox's spark-submit run).

    ``class_path``: the jars on every node that go on the driver's and the executors' class path, the pinned Hudi
    bundle first (a custom image's path, or the release's own bundle), then ODP's jar of Hudi extensions (jvm/): Hudi
    loads the classes its options name with ``Class.forName`` from its own class loader, so they must sit where the
    bundle sits, never in ``spark.jars``' child loader. Empty when the release's Spark already has them on its class
    path. ``conf``: more settings.
    """
    settings = dict(HUDI_SESSION_CONF)
    if class_path:
        joined = ":".join(class_path)
        settings["spark.driver.extraClassPath"] = joined
        settings["spark.executor.extraClassPath"] = joined
    settings.update(conf or {})
    parameters: list[str] = []
    for name, value in settings.items():
        parameters += ["--conf", f"{name}={value}"]
    return parameters

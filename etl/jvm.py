"""JVM classes through Py4J by their full names, without Py4J's walk through packages (docs/decisions/035).

``spark.sparkContext._jvm.org.apache.hadoop.fs.Path`` asks the JVM about ``org``, ``org.apache``, ``org.apache.hadoop``
and ``org.apache.hadoop.fs`` before the class: each is a failed class lookup over every jar of the driver's class path
(about 250 locally; ``org`` alone is tried against each of the gateway's ten imported packages), and PySpark's own
``functions.col`` looks ``functions`` up through the same imports every time it is called. :func:`java_class` names
the class at once; :func:`import_frequent_classes` gives the session's gateway the classes PySpark looks up on every
column expression, so that each is found on its first try.
"""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass, java_import

# The classes PySpark looks up by their short names on every expression: pyspark.sql.functions and Column's
# operators (``functions``), the conversion of argument lists (``PythonUtils``), DataFrame helpers (``PythonSQLUtils``).
FREQUENT_CLASSES = (
    "org.apache.spark.sql.functions",
    "org.apache.spark.api.python.PythonUtils",
    "org.apache.spark.sql.api.python.PythonSQLUtils",
)


def java_class(spark: Any, name: str) -> JavaClass:
    """The JVM class ``name`` (a full name such as ``org.apache.hadoop.fs.Path``) of ``spark``'s gateway: call it to
    construct, take an attribute for a static member."""
    return JavaClass(name, spark.sparkContext._gateway._gateway_client)


def filesystem_path(spark: Any, path: str) -> tuple[Any, Any]:
    """(Hadoop FileSystem, Hadoop Path) of ``path``: the same calls on S3 (Glue) and locally."""
    hadoop_path = java_class(spark, "org.apache.hadoop.fs.Path")(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path


def import_frequent_classes(spark: Any) -> Any:
    """Import :data:`FREQUENT_CLASSES` into the session's gateway view (Py4J's ``java_import``); returns ``spark``."""
    for name in FREQUENT_CLASSES:
        java_import(spark.sparkContext._jvm, name)
    return spark

"""JVM classes through Py4J by their full names, without Py4J's walk through packages (docs/decisions/035).

``spark.sparkContext._jvm.org.apache.hadoop.fs.Path`` asks the JVM about ``org``, ``org.apache``, ``org.apache.hadoop``
and ``org.apache.hadoop.fs`` before the class: each is a failed class lookup over every jar of the driver's class path
(about 250 locally; ``org`` alone is tried against each of the gateway's ten imported packages), and PySpark's own
``functions.col`` looks ``functions`` up through the same imports every time it is called. :func:`java_class` names
the class at once; :func:`import_frequent_classes` gives the session's gateway the classes PySpark looks up on every
column expression, so that each is found on its first try. :func:`ready_gateway`, which every engine's session passes
through, also drops the property sources of the session's Hadoop configuration (:func:`forget_property_sources`,
docs/decisions/050).
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

from py4j.java_gateway import JavaClass, java_import
from py4j.protocol import Py4JError

logger = logging.getLogger(__name__)

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


def ready_gateway(spark: Any) -> Any:
    """The session's gateway made ready for ODP's driver code, as every engine's session is built: the session's
    Hadoop configuration without property sources (:func:`forget_property_sources`), the frequent classes imported
    (:func:`import_frequent_classes`), the gateway's first connection client remembered and this thread's connection
    without delay (:func:`gateway_without_delay`); returns ``spark``."""
    gateway = spark.sparkContext._gateway
    try:
        _FIRST_CLIENTS.setdefault(gateway, gateway.java_gateway_server.getGateway().getCallbackClient())
    except (Py4JError, AttributeError) as error:  # not Py4J's client-server gateway
        logger.debug("no connection client to remember: %s", error)
    forget_property_sources(spark)
    return gateway_without_delay(import_frequent_classes(spark))


UNTRACED_CONFIGURATION_CLASS = "odp.hadoop.UntracedConfiguration"  # jvm/hadoop-configuration, in ODP's jar


def forget_property_sources(spark: Any) -> bool:
    """Drop the record of which file set each property of the session's Hadoop configuration (ODP's jar,
    :data:`UNTRACED_CONFIGURATION_CLASS`), so that the copies Spark and Hudi serialise into every task stop gzipping
    it per property (docs/decisions/039, 050). Values are untouched. False, with a warning, where it cannot be done
    (ODP's jar not on the driver's class path, another Hadoop): the session works as before, only slower."""
    try:
        java_class(spark, UNTRACED_CONFIGURATION_CLASS).forgetSources(spark.sparkContext._jsc.hadoopConfiguration())
    except Py4JError as error:
        logger.warning("the session's Hadoop configuration keeps its property sources: %s", error)
        return False
    return True


_THREAD_GATEWAY = threading.local()  # the gateway whose connection this thread already set without delay
# Per gateway, its connection client when the session was built (ready_gateway)
_FIRST_CLIENTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def thread_connection(spark: Any) -> Any | None:
    """The JVM's side of this Python thread's gateway connection (``py4j.ClientServerConnection``); None when the
    gateway has no per-thread connections (PySpark's pinned threads off).

    Py4J's client for calls into Python (``py4j.PythonClient``) knows which connection each JVM thread serves, but
    only the connections made while it was the gateway's: starting a streaming query or a listener replaces it with a
    copy (``resetCallbackClient``). A thread's connection is made by its first call, so the current client knows it
    unless it was made before a replacement; then the client the session was built with does.
    """
    gateway = spark.sparkContext._gateway
    try:
        connection = gateway.java_gateway_server.getGateway().getCallbackClient().getPerThreadConnection()
        first = _FIRST_CLIENTS.get(gateway)
        if connection is None and first is not None:
            connection = first.getPerThreadConnection()
    except (Py4JError, AttributeError) as error:  # not a per-thread client
        logger.debug("no per-thread gateway connection: %s", error)
        return None
    return connection


def gateway_without_delay(spark: Any) -> Any:
    """Turn Nagle's algorithm off on the JVM's side of this Python thread's gateway connection; returns ``spark``.

    PySpark pins each Python thread to a connection of its own. Py4J 0.10.9.7, the one Spark 3.5 ships, writes an
    answer of more than 8 KB in two writes, and the JVM holds the second until the first is acknowledged, which Linux
    delays by about 40 ms: every ``DataFrame.columns`` of a 150-column frame took 45 ms, against 1 to 7 ms without
    the delay (py4j#516, fixed after 0.10.9.7 by py4j#592; docs/decisions/047). Through Py4J's public calls
    (:func:`thread_connection`). Once per thread and gateway; a gateway without per-thread connections is left as it
    is.
    """
    gateway = spark.sparkContext._gateway
    if getattr(_THREAD_GATEWAY, "gateway", None) is gateway:
        return spark
    connection = thread_connection(spark)
    if connection is not None:
        connection.getSocket().setTcpNoDelay(True)
    _THREAD_GATEWAY.gateway = gateway
    return spark

"""A small lake for the File Processor tests: staging folders, moto trackers, table config, runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from odp.naming import TrackerTableNames
from tests.support.lake import Lake


@pytest.fixture
def lake(tmp_path: Path, dynamodb: Any, tracker_tables: dict[str, Any], tracker_names: TrackerTableNames) -> Lake:
    return Lake(root=tmp_path, tables=tracker_tables, names=tracker_names, dynamodb=dynamodb)


Hook = Callable[[str, str], None]


@pytest.fixture
def local_metastore(spark, tmp_path: Path):  # yields a py4j HiveMetaStoreClient
    """An embedded Hive metastore (Derby, in tmp_path) for Hudi's hms sync in this session, and a client to read it.

    Hudi's sync builds a new HiveConf, which takes Hive's settings from the JVM's system properties: the Derby URL
    and a schema created on first use go there for the test, and are cleared after it."""
    settings = {
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true",
        "hive.metastore.schema.verification": "false",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.warehouse.dir": str(tmp_path / "hive-warehouse"),
    }
    jvm = spark.sparkContext._jvm
    for key, value in settings.items():
        jvm.java.lang.System.setProperty(key, value)
    client = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(jvm.org.apache.hadoop.hive.conf.HiveConf())
    yield client
    client.close()
    for key in settings:
        jvm.java.lang.System.clearProperty(key)

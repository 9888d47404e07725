"""The Hudi bundle on the driver's class path: a record index of several file groups survives CDC waves with deletes.

Without ``spark.driver.extraClassPath`` the second wave failed: ``ClassCastException: GenericData$Record cannot
be cast to HoodieDeleteRecord`` while the record index lookup, fanned out over the index's file groups on a
fork-join pool thread, read the delete block the first wave wrote (docs/decisions/011).
The scenario runs in a child process (tests/unit/etl/classpath_child.py): the shared session of the test run
already has the setting, and class path settings only take effect when a JVM starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from etl.spark_session import hudi_bundle_jar, hudi_extensions_jar, local_spark_conf
from tests.support.kill_harness import run_child

CHILD = "tests.unit.etl.classpath_child"


def test_the_local_session_puts_the_bundle_on_the_driver_class_path_and_ships_it_with_spark_jars() -> None:
    jar = Path("/jars/hudi.jar")
    conf = local_spark_conf(jar, "/tmp/warehouse")
    assert conf["spark.driver.extraClassPath"] == str(jar)
    assert conf["spark.jars"] == str(jar)
    # ODP's jar of Hudi extensions (jvm/): beside the bundle, where Hudi's class loader finds the classes it loads by name
    with_extensions = local_spark_conf(jar, "/tmp/warehouse", Path("/jars/odp-hudi-extensions.jar"))
    assert with_extensions["spark.driver.extraClassPath"] == "/jars/hudi.jar:/jars/odp-hudi-extensions.jar"
    assert with_extensions["spark.jars"] == "/jars/hudi.jar,/jars/odp-hudi-extensions.jar"


@pytest.mark.spark
def test_the_driver_jvm_started_with_the_bundle_on_its_class_path(spark) -> None:
    # the builder's settings reach spark-submit as --conf, which starts the JVM with them
    class_path = spark.sparkContext._jvm.java.lang.System.getProperty("java.class.path").split(":")
    assert str(hudi_bundle_jar()) in class_path
    assert str(hudi_extensions_jar()) in class_path


@pytest.mark.slow
def test_two_cdc_waves_with_deletes_into_a_record_index_of_several_file_groups(tmp_path: Path) -> None:
    child = run_child([sys.executable, "-m", CHILD, str(tmp_path)], output=tmp_path / "child.log", timeout_seconds=240)
    assert child.returncode == 0, child.output[-4000:]
    outcome = json.loads((tmp_path / "outcome.json").read_text())
    assert [run["status"] for run in outcome["runs"]] == ["completed"] * 3, outcome["runs"]
    assert outcome["index_file_groups"] == 4  # 2,000 keys at 500 per file group: the lookup fans out
    # 2,000 loaded, 40 deleted and 40 updated per wave
    assert (outcome["rows"], outcome["updated"]) == (1920, 80)

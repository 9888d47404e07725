"""The Hudi bundle on the driver's class path: a record index of several file groups survives CDC waves with deletes.

Without ``spark.driver.extraClassPath`` the second wave failed: ``ClassCastException: GenericData$Record cannot
be cast to HoodieDeleteRecord`` while the record index lookup, fanned out over the index's file groups on a
fork-join pool thread, read the delete block the first wave wrote (docs/decisions/011).
The scenario (tests/support/record_index_waves.py) runs on the test run's shared session, whose JVM started with the
setting (the test before it checks the JVM's class path: a class path setting only takes effect when a JVM starts).
``python -m tests.unit.etl.classpath_child WORKDIR --without-driver-class-path`` runs it in a JVM started without the
setting, to see the failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import etl.hudi.options
from etl.spark_session import hudi_bundle_jar, hudi_extensions_jar, local_spark_conf
from sandbox.class_archive import CLASS_LIST, MADE_WITH, dump_command, list_options, made_with
from tests.support.jvm_options import SHORT_LIVED_JVM_OPTIONS, shared_session_options
from tests.support.record_index_waves import KEYS_PER_INDEX_FILE_GROUP, scenario


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


@pytest.mark.spark
@pytest.mark.slow
def test_two_cdc_waves_with_deletes_into_a_record_index_of_several_file_groups(
    spark, aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_the_driver_jvm_started_with_the_bundle_on_its_class_path(spark)
    monkeypatch.setattr(etl.hudi.options, "KEYS_PER_LOCAL_INDEX_FILE_GROUP", KEYS_PER_INDEX_FILE_GROUP)
    outcome = scenario(spark, tmp_path)
    assert [run["status"] for run in outcome["runs"]] == ["completed"] * 3, outcome["runs"]
    assert outcome["index_file_groups"] == 4  # 2,000 keys at 500 per file group: the lookup fans out
    # 2,000 loaded, 40 deleted and 40 updated per wave
    assert (outcome["rows"], outcome["updated"]) == (1920, 80)


def test_the_local_driver_jvm_gets_the_options_of_odp_local_jvm_options() -> None:
    """``ODP_LOCAL_JVM_OPTIONS`` (the Makefile's class data archive, docs/decisions/023) follows the warehouse's
    Derby home in the driver's options; without it, the options are as before."""
    jar = Path("/jars/hudi.jar")
    assert local_spark_conf(jar, "/w")["spark.driver.extraJavaOptions"] == "-Dderby.system.home=/w"
    options = "-XX:SharedArchiveFile=/a.jsa -Xlog:cds=off"
    conf = local_spark_conf(jar, "/w", jvm_options=options)
    assert conf["spark.driver.extraJavaOptions"] == f"-Dderby.system.home=/w {options}"


def test_the_class_list_is_written_by_a_jvm_with_the_local_options_but_the_archive_they_map() -> None:
    """The JVM that lists the classes for the archive starts with make's other local options (JOL's attach attempts
    skipped: docs/decisions/023), not with ``-XX:SharedArchiveFile``, which would leave the archived classes out."""
    make = "-XX:SharedArchiveFile=/c/odp-local.jsa -Xlog:cds=off -Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true"
    options = list_options(Path("/s/odp-local.classlist"), make).split()
    assert options[0] == "-XX:DumpLoadedClassList=/s/odp-local.classlist"
    assert {"-Djol.skipDynamicAttach=true", "-Djol.skipHotspotSAAttach=true", "-Xlog:cds=off"} <= set(options)
    assert [option for option in options if option.startswith("-XX:SharedArchiveFile")] == []


def test_the_archive_is_dumped_on_the_local_sessions_class_path() -> None:
    """spark-submit starts the dumping JVM with the bundle and ODP's jar on the driver's class path, in the order the
    local session puts them (a CDS archive maps only into a JVM of the class path it was dumped with)."""
    bundle, extensions = Path("/jars/hudi.jar"), Path("/jars/odp.jar")
    command = dump_command(Path("/s/odp.classlist"), Path("/s/odp.jsa"), bundle=bundle, extensions=extensions)
    assert command[0].endswith("/pyspark/bin/spark-submit")
    arguments = dict(zip(command[1:-1:2], command[2:-1:2], strict=True))
    conf = local_spark_conf(bundle, "/w", extensions)
    assert arguments["--driver-class-path"] == conf["spark.driver.extraClassPath"]
    assert arguments["--driver-memory"] == conf["spark.driver.memory"]
    assert arguments["--driver-java-options"].split()[:3] == [
        "-Xshare:dump",
        "-XX:SharedClassListFile=/s/odp.classlist",
        "-XX:SharedArchiveFile=/s/odp.jsa",
    ]


def test_the_committed_class_list_was_made_with_the_pinned_spark_and_hudi() -> None:
    """A list made with other jars still dumps an archive, without the classes that moved: make it again
    (``python -m sandbox.class_archive --list``) when a pin changes."""
    lines = CLASS_LIST.read_text(encoding="utf-8").splitlines()
    assert f"{MADE_WITH}{made_with()}" in lines
    classes = [line for line in lines if not line.startswith("#")]
    assert len(classes) > 15_000
    assert {"org/apache/hudi/HoodieSparkSqlWriter$", "odp/local/UntracedHadoopConfigurationPlugin"} <= set(classes)


@pytest.mark.spark
def test_the_shared_session_started_with_the_options_make_gives_and_never_c1_only(spark) -> None:
    """The test session's JVM runs with every option of ``ODP_LOCAL_JVM_OPTIONS`` as make exported it (the class
    data archive ``make setup`` built, which exists), and without C1 only, which is for the tests' short-lived child
    JVMs (tests/support/jvm_options.py), with Spark's interpreted expressions and with the serial collector."""
    arguments = list(
        spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    )
    wanted = shared_session_options().split()
    assert [option for option in wanted if option not in arguments] == []
    for option in wanted:
        if option.startswith("-XX:SharedArchiveFile="):
            assert Path(option.split("=", 1)[1]).is_file(), option
    assert SHORT_LIVED_JVM_OPTIONS not in arguments
    # the archive mapped: it holds the JDK's classes too, so a JVM that could not map it would share none
    assert "sharing" in spark.sparkContext._jvm.java.lang.System.getProperty("java.vm.info")
    # Spark read the interpreted-expression settings from the JVM's system properties (docs/decisions/042)
    assert spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "false"
    # the serial collector (docs/decisions/043): its young and old generations' collectors, not G1's
    collectors = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    assert sorted(collector.getName() for collector in collectors) == ["Copy", "MarkSweepCompact"]

"""The local session's JVM calls (docs/decisions/035): ODP's local file system (jvm/local-filesystem) sets the permission
Hadoop asks for on every file and folder it creates, through Java instead of a ``chmod`` process; etl/jvm.py names JVM
classes without Py4J's walk through packages; ODP's Spark plugin (jvm/local-profile) and every engine's session setup
(etl/jvm.py ``ready_gateway``, jvm/hadoop-configuration) leave the session's Hadoop configuration without property
sources, which every copy serialised into a task gzipped (docs/decisions/039, 050)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from etl import jvm
from etl.jvm import FREQUENT_CLASSES, forget_property_sources, java_class
from etl.spark_session import LOCAL_FILE_SYSTEM_OPTION, local_jvm_options, local_jvm_options_without_odp_classes


@pytest.mark.spark
def test_files_and_folders_the_local_session_creates_get_the_permissions_hadoop_asks_for(spark, tmp_path: Path) -> None:
    jvm = spark.sparkContext._jvm
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission
    folder = jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/table/.hoodie")
    file = jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/table/.hoodie/hoodie.properties")
    filesystem = folder.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    assert filesystem.getClass().getName() == "odp.local.NioLocalFileSystem"
    assert filesystem.getRawFileSystem().getClass().getName() == "odp.local.NioRawLocalFileSystem"

    assert filesystem.mkdirs(folder, permission.valueOf("drwxr-x---"))
    stream = filesystem.create(file, permission.valueOf("-rw-------"), False, 4096, 1, 1 << 20, None)
    stream.write(bytearray(b"hoodie.table.name=t\n"))
    stream.close()
    filesystem.setPermission(file, permission.valueOf("-r--r-----"))

    assert stat.S_IMODE(os.stat(tmp_path / "table" / ".hoodie").st_mode) == 0o750
    assert stat.S_IMODE(os.stat(tmp_path / "table" / ".hoodie" / "hoodie.properties").st_mode) == 0o440
    assert (tmp_path / "table" / ".hoodie" / "hoodie.properties").read_text() == "hoodie.table.name=t\n"
    # the checksummed file system over it still writes Hadoop's checksum beside the file
    assert (tmp_path / "table" / ".hoodie" / ".hoodie.properties.crc").is_file()


def test_a_jvm_without_odps_jar_gets_every_local_option_but_odps_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    options = (
        f"-XX:SharedArchiveFile=/a.jsa {LOCAL_FILE_SYSTEM_OPTION}odp.local.NioLocalFileSystem -Djol.x=true "
        "-Dspark.plugins=odp.local.UntracedHadoopConfigurationPlugin"
    )
    monkeypatch.setenv("ODP_LOCAL_JVM_OPTIONS", options)
    assert local_jvm_options() == options
    assert local_jvm_options_without_odp_classes() == "-XX:SharedArchiveFile=/a.jsa -Djol.x=true"


@pytest.mark.spark
def test_the_sessions_hadoop_configuration_has_no_property_sources_after_a_hudi_write(spark, tmp_path: Path) -> None:
    """Sources are what a configuration remembers of the file that set each property; a Hadoop class that adds a
    default resource on its first use would reload them, so the check follows a Hudi write (which uses those
    classes). Values stay as Hadoop and Spark set them."""
    (
        spark.range(3)
        .selectExpr("id", "1 AS ts")
        .write.format("hudi")
        .options(
            **{
                "hoodie.table.name": "untraced",
                "hoodie.datasource.write.recordkey.field": "id",
                "hoodie.datasource.write.precombine.field": "ts",
                "hoodie.metadata.enable": "false",
            }
        )
        .mode("overwrite")
        .save(f"file://{tmp_path}/untraced")
    )
    assert spark.read.format("hudi").load(f"file://{tmp_path}/untraced").count() == 3
    configuration = java_class(spark, "org.apache.hadoop.conf.Configuration")
    session = spark.sparkContext._jsc.hadoopConfiguration()
    fresh = configuration()  # what Hadoop loads without the plugin: each default property names its file
    assert list(fresh.getPropertySources("io.bytes.per.checksum")) == ["core-default.xml"]
    for conf in (session, configuration(session)):  # a copy, as Spark and Hudi make one for their tasks
        assert conf.getPropertySources("io.bytes.per.checksum") is None
        assert conf.getPropertySources("fs.file.impl") is None
        assert conf.get("io.bytes.per.checksum") == fresh.get("io.bytes.per.checksum")
        assert conf.get("fs.file.impl") == "odp.local.NioLocalFileSystem"
        assert conf.size() >= fresh.size()


@pytest.mark.spark
def test_the_classes_named_in_full_and_imported_for_pyspark_are_the_jvms(spark) -> None:
    """etl/jvm.py: a class named in full is the JVM's class; every class imported for PySpark's lookups exists (a
    misspelt name would leave PySpark's lookups as slow as before, silently)."""
    assert java_class(spark, "org.apache.hadoop.fs.Path")("/lake/table/part=1").getName() == "part=1"
    for name in FREQUENT_CLASSES:
        assert spark.sparkContext._jvm.java.lang.Class.forName(name).getName() == name
    assert spark.sparkContext._jvm.functions.col("id").toString() == "id"


@pytest.mark.spark
def test_every_engines_session_setup_drops_the_property_sources_and_keeps_the_values(spark) -> None:
    """What ``ready_gateway`` does on Glue and EMR, where no plugin runs: a configuration loaded with its sources
    (a fresh one here) keeps every value and loses the sources. Where ODP's class is missing, the session goes on
    as it was, with a warning."""
    configuration = java_class(spark, "org.apache.hadoop.conf.Configuration")
    traced = configuration()
    values = traced.getValByRegex(".*")  # every property and its value (a Java map), sources loaded with them
    assert list(traced.getPropertySources("io.bytes.per.checksum")) == ["core-default.xml"]
    java_class(spark, jvm.UNTRACED_CONFIGURATION_CLASS).forgetSources(traced)
    assert traced.getPropertySources("io.bytes.per.checksum") is None
    assert traced.getValByRegex(".*").equals(values)
    assert values.size() > 500

    assert forget_property_sources(spark) is True
    assert spark.sparkContext._jsc.hadoopConfiguration().getPropertySources("fs.file.impl") is None


@pytest.mark.spark
def test_a_session_without_odps_class_keeps_its_sources_and_says_so(spark, caplog, monkeypatch) -> None:
    monkeypatch.setattr(jvm, "UNTRACED_CONFIGURATION_CLASS", "odp.hadoop.NoSuchClass")
    with caplog.at_level("WARNING", logger="etl.jvm"):
        assert forget_property_sources(spark) is False
    assert "keeps its property sources" in caplog.text

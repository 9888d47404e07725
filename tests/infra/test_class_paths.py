"""One class path for every engine: each Java class ODP's Hudi options and Hudi session settings name, and the class
every engine's session calls as ODP builds it, is on the class path of each engine that runs ODP's jobs (issue 48,
item 4).

The classes are collected from what ODP builds, never listed by hand: :func:`etl.hudi.options.hudi_write_options` over
every shape of target (key generator, partitions, URL-encoded paths, table type, index, ordering, catalog sync) and
:data:`odp.contracts.spark.HUDI_SESSION_CONF`; an option value that reads as a Java class name is one. Besides them,
:data:`etl.jvm.UNTRACED_CONFIGURATION_CLASS` (:func:`etl.jvm.ready_gateway`).

Each engine's class path is what its deployment gives it, as local jar files opened as zip archives:

- every engine: Spark 3.5's own jars (pyspark's, standing in for Glue 5.1's and EMR 7.12's Spark 3.5);
- **Glue**: Glue's own Hudi 1.0.2 (``--datalake-formats hudi``; the Hudi 1.0.2 bundle ``make setup`` fetches stands in
  for it) and each jar a Glue job's ``--extra-jars`` names in the EMR test stage's template, found in the staged
  asset its BucketDeployment uploads;
- **EMR Serverless**: each entry of ``spark.driver.extraClassPath`` and ``spark.executor.extraClassPath`` of the EMR
  cadence's ``SparkSubmitParameters`` in that template: the release's bundle (:data:`HUDI_BUNDLE`, the same local
  bundle standing in for EMR's 1.0.2-amzn-1), or a file the staged image's Dockerfile copies to that path from its
  build context (``--jars`` would not count: Hudi loads classes with ``Class.forName`` from the bundle's class
  loader, which does not see spark.jars' child loader);
- **local**: ``spark.driver.extraClassPath`` of :func:`etl.spark_session.local_spark_conf` (local[2] runs the
  executors in the driver's JVM).

Before this test, EMR Serverless had only the bundle: ``odp.hudi.LogShareCompactionStrategy`` and
``odp.hudi.DecodingPartitionValueExtractor`` were missing there.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import zipfile
from collections.abc import Iterator
from itertools import product
from pathlib import Path

import pytest

from etl.hudi.options import HudiProfile, WriteOperation, WriteProfile, hudi_write_options
from etl.hudi.target import HudiTarget, Ordering
from etl.jvm import UNTRACED_CONFIGURATION_CLASS
from etl.spark_session import hudi_bundle_jar, hudi_extensions_jar, local_spark_conf
from infrastructure.jobs.engines.emr_serverless import HUDI_BUNDLE
from odp.config.models import TableType
from odp.contracts.spark import HUDI_SESSION_CONF
from odp.naming import state_machine_name
from tests.support.emr_stage import EMR_CADENCE
from tests.support.streaming_stage import StreamingStage

# A Java class name: a package path in lower case, then a capitalised class.
JAVA_CLASS = re.compile(r"^(?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_$]*$")
CLASS_PATH_SETTINGS = ("spark.driver.extraClassPath", "spark.executor.extraClassPath")


def _targets() -> Iterator[HudiTarget]:
    for keys, partitions, table_type, encoded, index, ordering in product(
        (("id",), ("id", "line")),
        ((), ("region",), ("region", "day")),
        tuple(TableType),
        (True, False),
        ("record", "bucket", "simple"),
        tuple(Ordering),
    ):
        yield HudiTarget(
            label="t",
            name="t",
            database="d",
            record_keys=keys,
            partitions=partitions,
            table_type=table_type,
            ordering=ordering,
            ordering_field="_odp_seq" if ordering is Ordering.EVENT_TIME else None,
            index_buckets=4 if index == "bucket" else None,
            simple_index=index == "simple",
            encode_partitions=encoded,
        )


def named_classes() -> dict[str, set[str]]:
    """Every Java class ODP's Hudi write options and session settings name -> the options naming it."""
    found: dict[str, set[str]] = {}
    settings = [HUDI_SESSION_CONF]
    for target, catalog_sync, profile in product(_targets(), (True, False), tuple(HudiProfile)):
        settings.append(
            hudi_write_options(
                target,
                operation=WriteOperation.UPSERT,
                profile=WriteProfile(profile=profile),
                catalog_sync=catalog_sync,
            )
        )
    for options in settings:
        for key, value in options.items():
            if JAVA_CLASS.match(value):
                found.setdefault(value, set()).add(key)
    found.setdefault(UNTRACED_CONFIGURATION_CLASS, set()).add("etl.jvm.ready_gateway")
    return found


@functools.cache
def _entries(jar: Path) -> frozenset[str]:
    with zipfile.ZipFile(jar) as archive:
        return frozenset(archive.namelist())


def _spark_jars() -> list[Path]:
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None
    assert spec.submodule_search_locations
    return sorted(Path(next(iter(spec.submodule_search_locations))).joinpath("jars").glob("*.jar"))


def missing_classes(classes: set[str], class_path: list[Path]) -> list[str]:
    """The classes none of the jars (nor Spark's own) holds."""
    jars = [*class_path, *_spark_jars()]
    return sorted(c for c in classes if not any(f"{c.replace('.', '/')}.class" in _entries(jar) for jar in jars))


def _deployed_file(stage: StreamingStage, bucket_key: str) -> Path | None:
    """The staged local file a BucketDeployment of the stage uploads to ``bucket_key`` of its bucket."""
    for resource in stage.template["Resources"].values():
        if resource["Type"] != "Custom::CDKBucketDeployment":
            continue
        prefix = resource["Properties"].get("DestinationBucketKeyPrefix", "")
        if not isinstance(prefix, str) or not bucket_key.startswith(prefix):
            continue
        for source in resource["Properties"]["SourceObjectKeys"]:
            staged = stage.outdir / f"asset.{source.removesuffix('.zip')}" / bucket_key.removeprefix(prefix)
            if staged.is_file():
                return staged
    return None


def glue_class_path(stage: StreamingStage) -> dict[str, list[Path]]:
    """Glue job -> its class path: Glue's Hudi, then the staged files its ``--extra-jars`` names."""
    paths = {}
    for resource in stage.template["Resources"].values():
        if resource["Type"] != "AWS::Glue::Job":
            continue
        arguments = resource["Properties"]["DefaultArguments"]
        jars = [hudi_bundle_jar()]
        for uri in re.findall(r"/(glue/[^\s\",]+\.jar)", json.dumps(arguments.get("--extra-jars", ""))):
            staged = _deployed_file(stage, uri)
            assert staged is not None, (
                f"{resource['Properties']['Name']}: --extra-jars names {uri}, deployed by nothing"
            )
            jars.append(staged)
        paths[resource["Properties"]["Name"]] = jars
    assert paths, "no Glue job in the stage"
    return paths


def _image_copies(stage: StreamingStage) -> dict[str, Path]:
    """Path in ODP's image -> the build context's file the staged Dockerfile copies there."""
    ((folder, image),) = [
        (path.parent, image)
        for path in Path(stage.outdir).rglob("*.assets.json")
        for image in json.loads(path.read_text(encoding="utf-8")).get("dockerImages", {}).values()
    ]
    context = folder / image["source"]["directory"]
    copies = {}
    for line in (context / "Dockerfile").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and len(words) == 3 and (context / words[1]).is_file():
            copies[words[2]] = context / words[1]
    return copies


def emr_class_path(stage: StreamingStage, setting: str) -> list[Path]:
    """The EMR cadence's ``setting`` (driver or executor class path) as local files: the release's bundle, or
    what the image copies to each path."""
    machine = next(
        r["Properties"]
        for r in stage.template["Resources"].values()
        if r["Type"] == "AWS::StepFunctions::StateMachine"
        and r["Properties"]["StateMachineName"] == state_machine_name("dev", EMR_CADENCE)
    )
    parameters = json.dumps(machine["DefinitionSubstitutions"]["SparkSubmitParameters"])
    (value,) = re.findall(rf"--conf {re.escape(setting)}=([^\s\"\\\\]+)", parameters)
    copies = _image_copies(stage)
    jars = []
    for entry in value.split(":"):
        if entry == HUDI_BUNDLE:
            jars.append(hudi_bundle_jar())
        else:
            assert entry in copies, f"{setting} names {entry}, which ODP's image does not hold"
            jars.append(copies[entry])
    return jars


def local_class_path(tmp_path: Path) -> list[Path]:
    conf = local_spark_conf(hudi_bundle_jar(), str(tmp_path), hudi_extensions_jar())
    return [Path(p) for p in conf["spark.driver.extraClassPath"].split(os.pathsep)]


@pytest.fixture(scope="module")
def classes() -> dict[str, set[str]]:
    found = named_classes()
    # the collection reads what matters: ODP's own two classes and the key generators
    assert {"odp.hudi.LogShareCompactionStrategy", "odp.hudi.DecodingPartitionValueExtractor"} <= set(found)
    assert any("keygenerator.class" in key for keys in found.values() for key in keys)
    return found


def _describe(missing: list[str], classes: dict[str, set[str]]) -> str:
    return ", ".join(f"{name} (named by {sorted(classes[name])})" for name in missing)


def test_every_class_the_options_name_is_on_the_local_class_path(classes, tmp_path) -> None:
    missing = missing_classes(set(classes), local_class_path(tmp_path))
    assert not missing, "local: " + _describe(missing, classes)


def test_every_class_the_options_name_is_on_each_glue_jobs_class_path(classes, emr_stage: StreamingStage) -> None:
    for job, class_path in glue_class_path(emr_stage).items():
        missing = missing_classes(set(classes), class_path)
        assert not missing, f"Glue job {job}: " + _describe(missing, classes)


@pytest.mark.parametrize("setting", CLASS_PATH_SETTINGS)
def test_every_class_the_options_name_is_on_the_emr_serverless_class_path(
    classes, emr_stage: StreamingStage, setting: str
) -> None:
    missing = missing_classes(set(classes), emr_class_path(emr_stage, setting))
    assert not missing, f"EMR Serverless {setting}: " + _describe(missing, classes)


def test_the_collection_finds_a_class_missing_from_a_class_path(classes) -> None:
    """The check itself can fail: the bundle alone lacks ODP's classes (EMR's class path before this test)."""
    assert missing_classes(set(classes), [hudi_bundle_jar()]) == [
        "odp.hadoop.UntracedConfiguration",
        "odp.hudi.DecodingPartitionValueExtractor",
        "odp.hudi.LogShareCompactionStrategy",
    ]

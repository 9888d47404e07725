"""The canary table (issue 48, item 8): the File Processor's harmless mode writes, compacts, syncs, reads back and
removes a table of its own through the raw tables' writer, and a failing step is named.

The end-to-end test runs the entry point's harmless mode (``--odp_table_ids []``) on the shared Spark session with
the trackers in moto and the catalog the sandbox uses (the session catalog); it looks at the table from outside the
code under test just before the canary removes it (files on disk, the session catalog, a Hudi read), then checks
that nothing is left.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from etl.engine.base import argparse_arguments
from etl.hudi.options import WriteProfile
from etl.jobs import canary_table, file_processor
from etl.jobs.canary_table import (
    CanaryStepError,
    GlueCatalog,
    raw_canary_table,
    run_raw_canary,
)
from etl.raw_table.batch import WriteSettings
from odp.config.datasets import Zone
from odp.config.models import EngineName, TableType
from odp.contracts.datasets import DatasetJobArgs, LakeRoots
from tests.support.lake import Lake, table_config
from tests.support.paths import AWS_REGION


class _SharedSession:
    """The local engine on the shared Spark session (a new session would start a JVM)."""

    name = "local"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def parse_arguments(self, contract: type, argv: list[str], description: str) -> Any:
        return argparse_arguments(contract, argv, description)

    def spark_session(self, app_name: str) -> Any:
        return self.spark

    def job_run(self, argv: list[str]) -> None:
        return None


def _timeline(base: Path) -> list[str]:
    """The completed instants' actions in ``.hoodie/`` (table version 6 keeps them there), oldest first."""
    names = sorted(path.name for path in (base / ".hoodie").iterdir() if path.is_file())
    return [name.split(".", 1)[1] for name in names if name.split(".", 1)[1] in ("commit", "deltacommit")]


@pytest.mark.spark
def test_the_file_processors_harmless_mode_writes_compacts_syncs_reads_back_and_removes_its_canary_table(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    orders = lake.configure(table_config("orders", partition_by=("region",)))  # cadence hourly, database lake_db
    args = lake.args()  # no tables: the harmless mode
    base = Path(lake.root / "raw" / orders.database / "_odp_canary_file_processor_hourly_local")  # cadence, engine
    seen: dict[str, Any] = {}
    remove = canary_table.remove_table

    def look_then_remove(spark_: Any, table: Any, catalog: Any, **kwargs: Any) -> None:
        if base.is_dir():  # not the removal of leftovers, before anything is written
            seen["properties"] = (base / ".hoodie" / "hoodie.properties").read_text()
            seen["partitions"] = sorted(p.name for p in base.iterdir() if p.name.startswith("region="))
            seen["timeline"] = _timeline(base)
            seen["catalog"] = spark.catalog.tableExists("lake_db._odp_canary_file_processor_hourly_local")
            rows = spark.read.format("hudi").load(str(base)).select("id", "region", "value").collect()
            seen["rows"] = sorted((r["id"], r["region"], r["value"]) for r in rows)
        remove(spark_, table, catalog, **kwargs)

    monkeypatch.setattr(canary_table, "remove_table", look_then_remove)
    argv = ["file_processor.py", *(item for pair in args.to_arguments().items() for item in pair)]

    assert file_processor.main(argv, engine=_SharedSession(spark)) == 0

    assert "hoodie.table.type=MERGE_ON_READ" in seen["properties"]
    assert seen["partitions"] == ["region=a", "region=b"]
    assert seen["timeline"] == ["deltacommit", "deltacommit", "commit"]  # the second delta commit compacted
    assert seen["catalog"] is True
    assert seen["rows"] == [(1, "a", "updated"), (2, "a", "updated"), (3, "b", "updated"), (4, "b", "updated")]
    assert not base.exists()
    assert not spark.catalog.tableExists("lake_db._odp_canary_file_processor_hourly_local")
    assert not (lake.root / "raw" / "lake_db" / "_odp_tombstones" / base.name).exists()


class _RefusingCatalog:
    def entries(self, database: str, names: list[str]) -> list[str]:
        raise PermissionError("AccessDeniedException: glue:GetTable")

    def drop(self, database: str, name: str) -> None:
        raise AssertionError("nothing to drop")


def test_a_failing_step_is_named_with_the_table_and_the_cause() -> None:
    table = raw_canary_table("file_processor", "s3://raw", "sales_raw")
    settings = WriteSettings(WriteProfile(), catalog_sync=True, raw_root="s3://raw")
    with pytest.raises(CanaryStepError) as raised:
        run_raw_canary(None, table, settings, _RefusingCatalog())  # the first step fails before Spark is needed
    assert str(raised.value) == (
        "canary table sales_raw._odp_canary_file_processor (s3://raw/sales_raw/_odp_canary_file_processor): "
        "step 'remove leftovers' failed: PermissionError: AccessDeniedException: glue:GetTable"
    )
    assert raised.value.step == "remove leftovers"


def test_the_canary_tables_config_is_a_partitioned_merge_on_read_raw_table_in_odps_reserved_names() -> None:
    table = raw_canary_table("streaming_job", "s3://raw/", "shop_raw", "Shop-Changes")
    assert (table.name, table.base_path) == (
        "_odp_canary_streaming_job_shop_changes",  # a Glue table name: lower case, letters, digits and _
        "s3://raw/shop_raw/_odp_canary_streaming_job_shop_changes",
    )
    config = canary_table.raw_canary_config(table)
    assert (config.database, config.target_table, config.partition_by) == ("shop_raw", table.name, ("region",))
    assert config.table_type is TableType.MERGE_ON_READ
    assert canary_table.canary_profile(WriteProfile()).compaction_delta_commits == 1


def test_the_glue_catalog_finds_and_drops_the_canary_tables_entries(aws_env) -> None:
    with mock_aws():
        glue = boto3.client("glue", region_name=AWS_REGION)
        glue.create_database(DatabaseInput={"Name": "sales_raw"})
        for name in ("_odp_canary_file_processor_ro", "_odp_canary_file_processor_rt", "orders"):
            glue.create_table(DatabaseName="sales_raw", TableInput={"Name": name})
        catalog = GlueCatalog(glue)
        names = canary_table.catalog_entries("_odp_canary_file_processor")
        assert catalog.entries("sales_raw", names) == [
            "_odp_canary_file_processor_ro",
            "_odp_canary_file_processor_rt",
        ]
        for name in catalog.entries("sales_raw", names):
            catalog.drop("sales_raw", name)
        assert catalog.entries("sales_raw", names) == []
        assert [t["Name"] for t in glue.get_tables(DatabaseName="sales_raw")["TableList"]] == ["orders"]


def test_an_engine_error_is_described_by_its_first_line_and_root_cause() -> None:
    trace = RuntimeError(
        "An error occurred while calling o412.save.\n"
        ": org.apache.hudi.exception.HoodieException: Could not sync using the meta sync class\n"
        "\tat org.apache.hudi.sync.common.util.SyncUtilHelpers.runHoodieMetaSync(SyncUtilHelpers.java:81)\n"
        "Caused by: org.apache.hudi.exception.HoodieException: Unable to load class\n"
        "Caused by: java.lang.ClassNotFoundException: odp.hudi.DecodingPartitionValueExtractor\n"
        "\tat java.net.URLClassLoader.findClass(URLClassLoader.java:445)\n"
    )
    assert canary_table.describe(trace) == (
        "RuntimeError: An error occurred while calling o412.save. "
        "(Caused by: java.lang.ClassNotFoundException: odp.hudi.DecodingPartitionValueExtractor)"
    )
    assert canary_table.describe(KeyError("x")) == "KeyError: 'x'"


def test_the_dataset_canary_goes_to_the_first_dataset_of_the_runs_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """An EMR Serverless run's role syncs only the databases of the datasets on EMR Serverless: its canary goes there."""
    base = canary_table.dataset_canary_config("dataset_job", Zone.CONFORMED, "unused")
    datasets = [
        base.model_copy(update={"name": "a", "database": "a_conformed"}),
        base.model_copy(
            update={
                "name": "b",
                "database": "b_purpose_built",
                "zone": Zone.PURPOSE_BUILT,
                "engine": EngineName.EMR_SERVERLESS,
            }
        ),
    ]
    written: list[tuple[str, str, str]] = []

    def record(spark_: Any, table: Any, dataset: Any, save: Any, catalog: Any, *, catalog_sync: bool) -> list[str]:
        written.append((table.catalog_name, table.base_path, dataset.zone.value))
        return []

    monkeypatch.setattr(canary_table, "run_dataset_canary", record)
    roots = LakeRoots("file:///r", "file:///c", "file:///p")
    for engine in ("any", "emr_serverless", "glue"):
        args = DatasetJobArgs(roots, "odp-dev-table-config", "odp-dev-dataset-config", engine=engine)
        engine_name = "emr_serverless" if engine == "emr_serverless" else "glue"
        canary_table.dataset_canary(None, args, datasets, engine=engine_name, glue=lambda: None)
    glue = (
        "a_conformed._odp_canary_dataset_job_glue",
        "file:///c/a_conformed/_odp_canary_dataset_job_glue",
        "conformed",
    )
    assert written == [
        glue,
        (
            "b_purpose_built._odp_canary_dataset_job_emr_serverless",  # beside the Glue run's: they run together
            "file:///p/b_purpose_built/_odp_canary_dataset_job_emr_serverless",
            "purpose_built",
        ),
        glue,
    ]
    only_glue = DatasetJobArgs(roots, "t", "d", engine="emr_serverless")
    assert canary_table.dataset_canary(None, only_glue, datasets[:1], engine="emr_serverless", glue=lambda: None) == [
        "canary table skipped: no dataset runs on emr_serverless"
    ]


class _NoSpark:
    """What the harmless mode asks of a session before its canary table (``range(1).count()``)."""

    def range(self, count: int) -> _NoSpark:
        return self

    def count(self) -> int:
        return 1


def _in_database(config: Any, database: str) -> Any:
    return config.model_copy(update={"database": database})


def test_the_streaming_jobs_harmless_mode_writes_its_canary_as_a_micro_batch_writes(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The streaming job's canary table: the first database of its streamed tables, the raw tables' writer with the
    streaming job's fault area and the Glue profile its micro-batches write with (etl/jobs/streaming_job.py)."""
    from etl.hudi.options import HudiProfile
    from etl.jobs import streaming_job
    from odp.contracts.streaming import StreamingJobArgs

    orders = lake.configure(_in_database(table_config("orders"), "shop_raw"))
    customers = lake.configure(_in_database(table_config("customers"), "crm_raw"))
    session = boto3.session.Session(region_name=AWS_REGION)
    kinesis = session.client("kinesis")
    kinesis.create_stream(StreamName="s", ShardCount=1)
    arn = kinesis.describe_stream_summary(StreamName="s")["StreamDescriptionSummary"]["StreamARN"]
    for database in ("shop_raw", "crm_raw"):
        session.client("glue").create_database(DatabaseInput={"Name": database})
    args = StreamingJobArgs.from_arguments(
        {
            "odp_environment": "test",
            "odp_stream": "s",
            "odp_stream_arn": arn,
            "odp_table_ids": f'["{orders.table_id}", "{customers.table_id}"]',
            "odp_raw_root": "s3://raw",
            "odp_error_root": "s3://a/streaming/errors",
            "odp_checkpoint_location": "s3://a/streaming/s/checkpoint/",
            "odp_table_config": lake.names.table_config,
            "odp_ledger_tracker": lake.names.processing_tracker,
            "odp_ledger_history": lake.names.processing_tracker_history,
            "odp_canary": "true",
        }
    )
    written: list[tuple[Any, WriteSettings]] = []

    def record(spark_: Any, table: Any, settings: WriteSettings, catalog: Any) -> list[str]:
        written.append((table, settings))
        return []

    monkeypatch.setattr(canary_table, "run_raw_canary", record)
    assert streaming_job.run_canary(_NoSpark(), args, clients=session) == 0
    ((table, settings),) = written
    assert (table.catalog_name, table.base_path) == (
        "crm_raw._odp_canary_streaming_job_s",  # one table per stream
        "s3://raw/crm_raw/_odp_canary_streaming_job_s",
    )
    assert (settings.job, settings.profile.profile, settings.catalog_sync) == ("streaming", HudiProfile.GLUE, True)

"""Partition values in paths: URL-encoded for new tables, the layout fixed at a table's first write.

Golden runs of the File Processor on real Spark + Hudi, read back by Spark, by hudi-rs and through the partition value
extractor the catalog sync is configured with (ODP's ``odp.hudi.DecodingPartitionValueExtractor`` from
``.cache/jars/odp-hudi-extensions.jar``, which ``make setup`` compiles), called through the Spark JVM gateway.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from pathlib import Path

import pyarrow as pa
import pytest

from etl.file_processor.processor import run_file_processor
from etl.hudi.options import WriteOperation, WriteProfile, glue_sync_options, hudi_write_options
from etl.hudi.partition_paths import URL_ENCODE_OPTION
from etl.hudi.target import HudiTarget
from odp.config.models import TableConfig
from odp.tracker import RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, table_config

SCHEMA = pa.schema([("Op", pa.string()), ("seq", pa.int64()), ("id", pa.int64()), ("region", pa.string())])
COLUMNS = {"seq": "bigint", "id": "bigint", "region": "string"}
EXTRACTOR_OPTION = "hoodie.datasource.hive_sync.partition_extractor_class"


def _extractor(spark, encoded: bool = True):  # a py4j JavaObject
    """The catalog sync's extractor of a ``region``-partitioned table of this layout, instantiated by its class name
    as the sync does (Hudi's ReflectionUtils, no-argument constructor)."""
    target = HudiTarget.from_table(table_config("t", partition_by=("region",))).with_stored_layout(encoded)
    name = glue_sync_options(target)[EXTRACTOR_OPTION]
    return reduce(getattr, name.split("."), spark.sparkContext._jvm)()


def _table(lake: Lake) -> TableConfig:
    return lake.configure(table_config("sites", columns=COLUMNS, partition_by=("region",)))


def _land(lake: Lake, config: TableConfig, name: str, rows: list[tuple[int, int, str]]) -> None:
    records = [{"Op": "I", "seq": seq, "id": key, "region": region} for seq, key, region in rows]
    lake.land_parquet(config, name, records, SCHEMA)


def _partition_folders(base_path: str) -> list[str]:
    """Every folder below the table's base path that holds data files, relative to it."""
    root = Path(base_path.removeprefix("file:"))
    return sorted(
        str(path.parent.relative_to(root))
        for path in root.rglob("*.parquet")
        if ".hoodie" not in path.relative_to(root).parts
    )


def _properties(base_path: str) -> str:
    return (Path(base_path.removeprefix("file:")) / ".hoodie" / "hoodie.properties").read_text()


@pytest.mark.spark
def test_the_catalog_sync_extractor_decodes_every_value_hudi_encodes(spark) -> None:
    """Every ASCII character, escaped by Hudi's own escapePathName as the writer does, comes back as it was."""
    jvm = spark.sparkContext._jvm
    escape = jvm.org.apache.hudi.common.util.PartitionPathEncodeUtils.escapePathName
    extractor = _extractor(spark)
    assert extractor.getClass().getName() == "odp.hudi.DecodingPartitionValueExtractor"
    values = [f"a{chr(code)}b" for code in range(1, 128)]
    assert [list(extractor.extractPartitionValuesInPath(f"region={escape(value)}")) for value in values] == [
        [value] for value in values
    ]
    assert list(extractor.extractPartitionValuesInPath("region=eu%2Fwest/city=o%27brien")) == ["eu/west", "o'brien"]
    assert list(extractor.extractPartitionValuesInPath("")) == []
    # Hudi's own extractor (what the sync used before) returns the encoded text: the catalog would show it
    hudis = jvm.org.apache.hudi.hive.MultiPartKeysValueExtractor()
    assert list(hudis.extractPartitionValuesInPath("region=eu%2Fwest")) == ["eu%2Fwest"]
    # an unencoded table keeps Hudi's extractor: a literal % in its paths is no escape
    assert list(_extractor(spark, encoded=False).extractPartitionValuesInPath("region=50%25")) == ["50%25"]


def test_new_tables_encode_and_the_options_carry_the_layout() -> None:
    config = table_config("sites", columns=COLUMNS, partition_by=("region",))
    target = HudiTarget.from_table(config)
    assert target.encode_partitions
    assert target.with_stored_layout(None) == target  # no table yet: encoded
    assert not target.with_stored_layout(False).encode_partitions  # an older table keeps its layout
    for encoded in (True, False):
        options = hudi_write_options(
            target.with_stored_layout(encoded),
            operation=WriteOperation.UPSERT,
            profile=WriteProfile(),
            catalog_sync=False,
        )
        assert options[URL_ENCODE_OPTION] == str(encoded).lower()


@pytest.mark.spark
def test_a_slash_in_a_partition_value_is_one_encoded_folder_read_back_and_registered_as_written(
    spark, lake: Lake, local_metastore
) -> None:
    """With the hms sync (what the Glue jobs run, against the Glue catalog): one encoded folder a value, the values
    stored and read back as written, and registered decoded, not encoded."""
    config = _table(lake)
    _land(lake, config, "20260101-000001.parquet", [(1, 1, "us"), (2, 2, "eu/west"), (3, 3, "o'brien")])
    args = replace(lake.args(config.table_id), catalog_sync=True)
    run = run_file_processor(spark, args, dynamodb=lake.dynamodb, resolve_uri=lake.resolve).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    folders = ["region=eu%2Fwest", "region=o%27brien", "region=us"]
    assert _partition_folders(run.base_path) == folders  # one level each
    assert f"{URL_ENCODE_OPTION}=true" in _properties(run.base_path)  # fixed with the table
    expected = [(1, "us"), (2, "eu/west"), (3, "o'brien")]
    assert rows_of(spark, run.base_path, ["id", "region"]) == expected
    assert hudi_rs_rows(run.base_path, ["id", "region"]) == expected
    assert spark.read.format("hudi").load(run.base_path).where("region = 'eu/west'").count() == 1
    # The configured extractor over each partition path, as the sync's hms executor calls it.
    extractor = _extractor(spark)
    assert {folder: list(extractor.extractPartitionValuesInPath(folder)) for folder in folders} == {
        "region=eu%2Fwest": ["eu/west"],
        "region=o%27brien": ["o'brien"],
        "region=us": ["us"],
    }
    # What the sync registered: the values as written, each at its encoded folder.
    partitions = local_metastore.listPartitions("lake_db", config.target_table, -1)
    registered = {
        tuple(partition.getValues()): partition.getSd().getLocation().rsplit("/", 1)[-1] for partition in partitions
    }
    assert registered == {
        ("eu/west",): "region=eu%2Fwest",
        ("o'brien",): "region=o%27brien",
        ("us",): "region=us",
    }


@pytest.mark.spark
def test_an_existing_unencoded_table_keeps_its_layout_and_refuses_a_slash(
    spark, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _table(lake)
    # The table as an earlier release created it: partition paths not encoded.
    with monkeypatch.context() as patch:
        patch.setattr(HudiTarget, "with_stored_layout", lambda self, _: replace(self, encode_partitions=False))
        _land(lake, config, "20260101-000001.parquet", [(1, 1, "us")])
        first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    assert f"{URL_ENCODE_OPTION}=false" in _properties(first.base_path)
    # A file with a slash in a value, and one without beside it in the same run.
    _land(lake, config, "20260101-000002.parquet", [(2, 2, "o'brien"), (3, 3, "eu/west")])
    _land(lake, config, "20260101-000003.parquet", [(4, 4, "o'brien")])
    second = lake.run(spark, config.table_id).tables[0]
    # refused before anything was written: the file is quarantined at its first failure, the run goes on
    assert second.status is RunStatus.COMPLETED, second.error
    [quarantined] = lake.quarantined(config.table_id)
    assert (
        f"{config.staging_prefix}20260101-000002.parquet: row 2, partition column region: value 'eu/west' would "
        "split the partition path into two folder levels: the table was created before ODP URL-encoded partition "
        "values and keeps that layout. To move it to the encoded layout, rebuild it: python -m odp replay "
        f"{config.table_id} (deletes the table"
    ) in quarantined.last_error
    assert second.quarantined_files == (quarantined.key,)
    assert quarantined.key == f"{config.staging_prefix}20260101-000002.parquet"
    assert lake.landed(config.table_id) == []
    # Without the slash the same table is written in its own layout: o'brien stays as it is in the path, and nothing
    # of the refused file is in the table (neither its key 2 nor an eu folder).
    assert _partition_folders(first.base_path) == ["region=o'brien", "region=us"]
    assert f"{URL_ENCODE_OPTION}=false" in _properties(first.base_path)
    assert rows_of(spark, first.base_path, ["id", "region"]) == [(1, "us"), (4, "o'brien")]

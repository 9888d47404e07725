"""Partition values in paths: URL-encoded for new tables, the layout fixed at a table's first write.

Golden runs of the File Processor on real Spark + Hudi, read back by Spark, by hudi-rs and through Hudi's own
partition value extractor (the class the catalog sync uses), called through the Spark JVM gateway.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from pathlib import Path

import pyarrow as pa
import pytest

from etl.file_processor.processor import run_file_processor
from etl.hudi.options import WriteOperation, WriteProfile, glue_sync_options, hudi_write_options
from etl.hudi.partition_paths import ESCAPED, URL_ENCODE_OPTION, needs_encoding
from etl.hudi.target import HudiTarget
from odp.config.models import TableConfig
from odp.tracker import RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, table_config

SCHEMA = pa.schema([("Op", pa.string()), ("seq", pa.int64()), ("id", pa.int64()), ("region", pa.string())])
COLUMNS = {"seq": "bigint", "id": "bigint", "region": "string"}
EXTRACTOR = glue_sync_options(HudiTarget.from_table(table_config("t", partition_by=("region",))))[
    "hoodie.datasource.hive_sync.partition_extractor_class"
]  # org.apache.hudi.hive.MultiPartKeysValueExtractor


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
def test_escaped_characters_are_hudis(spark) -> None:
    """ESCAPED (what ODP checks) is exactly what Hudi's own PartitionPathEncodeUtils escapes, ASCII by ASCII."""
    utils = spark.sparkContext._jvm.org.apache.hudi.common.util.PartitionPathEncodeUtils
    hudi = {chr(code) for code in range(1, 128) if utils.escapePathName(f"a{chr(code)}b") != f"a{chr(code)}b"}
    assert hudi == set(ESCAPED)
    assert [needs_encoding(v) for v in ("eu/west", "eu west", "zürich", "50%")] == [True, False, False, True]


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
def test_a_slash_in_a_partition_value_is_one_encoded_folder_read_back_as_written(spark, lake: Lake) -> None:
    config = _table(lake)
    _land(lake, config, "20260101-000001.parquet", [(1, 1, "eu/west"), (2, 2, "us")])
    run = lake.run(spark, config.table_id).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error
    assert _partition_folders(run.base_path) == ["region=eu%2Fwest", "region=us"]  # one level each
    assert f"{URL_ENCODE_OPTION}=true" in _properties(run.base_path)  # fixed with the table
    expected = [(1, "eu/west"), (2, "us")]
    assert rows_of(spark, run.base_path, ["id", "region"]) == expected
    assert hudi_rs_rows(run.base_path, ["id", "region"]) == expected
    assert spark.read.format("hudi").load(run.base_path).where("region = 'eu/west'").count() == 1
    # What the catalog sync would register: Hudi's extractor over each partition path, as its hms executor calls it.
    jvm = spark.sparkContext._jvm
    extractor = reduce(getattr, EXTRACTOR.split("."), jvm)()  # Hudi's class, as the sync instantiates it
    registered = {
        folder: list(extractor.extractPartitionValuesInPath(folder)) for folder in _partition_folders(run.base_path)
    }
    decoded = jvm.org.apache.hudi.common.util.PartitionPathEncodeUtils.unescapePathName
    assert registered == {"region=eu%2Fwest": ["eu%2Fwest"], "region=us": ["us"]}  # as written in the path
    assert [decoded(value) for values in registered.values() for value in values] == ["eu/west", "us"]


@pytest.mark.spark
def test_with_catalog_sync_a_value_the_catalog_would_show_encoded_is_refused(spark, lake: Lake) -> None:
    """Hudi 1.0.2's hms sync registers the extractor's values undecoded (above: eu%2Fwest): refused, not stored."""
    config = _table(lake)
    _land(lake, config, "20260101-000001.parquet", [(1, 1, "us"), (2, 2, "eu/west")])
    args = replace(lake.args(config.table_id), catalog_sync=True)
    run = run_file_processor(spark, args, dynamodb=lake.dynamodb, resolve_uri=lake.resolve).tables[0]
    assert run.status is RunStatus.COMPLETED, run.error  # refused before writing: quarantined, the run goes on
    [quarantined] = lake.quarantined(config.table_id)
    assert (
        f"{config.staging_prefix}20260101-000001.parquet: row 2, partition column region: value 'eu/west' is "
        "URL-encoded in the partition path, and Hudi 1.0.2's catalog sync registers the encoded text"
    ) in quarantined.last_error
    assert not Path(run.base_path.removeprefix("file:")).exists()  # nothing written


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
    _land(lake, config, "20260101-000002.parquet", [(2, 2, "o'brien"), (3, 3, "eu/west")])
    refused = lake.run(spark, config.table_id).tables[0]
    # refused before anything was written: the file is quarantined at its first failure, the run goes on
    assert refused.status is RunStatus.COMPLETED, refused.error
    [quarantined] = lake.quarantined(config.table_id)
    assert (
        f"{config.staging_prefix}20260101-000002.parquet: row 2, partition column region: value 'eu/west' would "
        "split the partition path into two folder levels: the table was created before ODP URL-encoded partition "
        "values and keeps that layout. To move it to the encoded layout, rebuild it: python -m odp replay "
        f"{config.table_id} (deletes the table"
    ) in quarantined.last_error
    assert refused.quarantined_files == (quarantined.key,)
    assert _partition_folders(first.base_path) == ["region=us"]
    # Without the slash the same table is written in its own layout: o'brien stays as it is in the path.
    assert quarantined.key == f"{config.staging_prefix}20260101-000002.parquet"
    assert lake.landed(config.table_id) == []
    _land(lake, config, "20260101-000003.parquet", [(2, 2, "o'brien")])
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    assert _partition_folders(first.base_path) == ["region=o'brien", "region=us"]
    assert f"{URL_ENCODE_OPTION}=false" in _properties(first.base_path)
    assert rows_of(spark, first.base_path, ["id", "region"]) == [(1, "us"), (2, "o'brien")]

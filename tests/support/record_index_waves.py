"""Two CDC runs with deletes into a table whose record index has several file groups (the scenario of
tests/unit/etl/test_driver_class_path.py, and of tests/unit/etl/classpath_child.py in a JVM of its own).

The File Processor loads ROWS rows, then runs two CDC waves, each updating and deleting keys spread over every index
file group. The record index gets one file group per KEYS_PER_INDEX_FILE_GROUP keys of the first write (the
production constant is 250,000; the caller lowers ``etl.hudi.options.KEYS_PER_LOCAL_INDEX_FILE_GROUP`` to this, so a
small table has several). The second wave reads the delete block the first one wrote to the index's log files.
"""

from __future__ import annotations

from pathlib import Path

import boto3
import pyarrow as pa

from odp.naming import TrackerTableNames
from odp.tracker.schema import create_tables
from tests.support.lake import Lake, table_config
from tests.support.paths import AWS_REGION

ROWS = 2_000
KEYS_PER_INDEX_FILE_GROUP = 500  # four record index file groups for ROWS keys
LOAD = pa.schema([("seq", pa.string()), ("id", pa.int32()), ("region", pa.string())])
CDC = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("region", pa.string())])


def wave_changes(wave: int) -> list[dict[str, object]]:
    """Every 50th key updated, the key after it deleted (wave 1: ids 1, 51, ...; wave 2: ids 3, 53, ...)."""
    first = 2 * wave - 1
    changes: list[dict[str, object]] = []
    for key in range(first, ROWS + 1, 50):
        changes.append({"Op": "U", "seq": f"{wave}", "id": key, "region": f"w{wave}"})
        changes.append({"Op": "D", "seq": f"{wave}", "id": key + 1, "region": "load"})
    return changes


def scenario(spark: object, root: Path) -> dict[str, object]:
    """Load, then two CDC waves; the outcome of every run and the rows Spark reads at the end."""
    names = TrackerTableNames.for_environment("test")
    dynamodb = boto3.resource("dynamodb", region_name=AWS_REGION)
    create_tables(dynamodb.meta.client, names)
    tables = {logical: dynamodb.Table(physical) for logical, physical in names.as_dict().items()}
    lake = Lake(root=root, tables=tables, names=names, dynamodb=dynamodb)
    config = lake.configure(table_config("wide_index"))
    loaded = [{"seq": None, "id": key, "region": "load"} for key in range(1, ROWS + 1)]
    lake.land_parquet(config, "LOAD00000001.parquet", loaded, LOAD)
    runs = [lake.run(spark, config.table_id).tables[0]]
    for wave in (1, 2):
        lake.land_parquet(config, f"20260101-{wave}.parquet", wave_changes(wave), CDC)
        runs.append(lake.run(spark, config.table_id).tables[0])
    base = Path(runs[0].base_path.removeprefix("file://"))
    index = (base / ".hoodie" / "metadata" / "record_index").glob("*record-index-*")
    index_file_groups = {path.name.lstrip(".").split("_", 1)[0] for path in index}
    frame = spark.read.format("hudi").load(runs[-1].base_path)
    return {
        "runs": [{"status": run.status.value, "error": run.error} for run in runs],
        "index_file_groups": len(index_file_groups),
        "rows": frame.count(),
        "updated": frame.filter("region != 'load'").count(),
    }

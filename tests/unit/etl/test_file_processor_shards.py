"""Shards merged on real Spark + Hudi: four shards of one Debezium table (the same ids in each) written into one
target table, the shard the first key column; ordering, deletes and exactly-once per shard. Checked with Spark
and with hudi-rs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from odp.config import load_config
from odp.config.models import TableConfig
from odp.tracker import RunStatus
from tests.support.config_files import valid_files, write_config
from tests.support.lake import Lake, hudi_rs_rows, rows_of

NOTION = {
    "source": "notion",
    "format": "debezium",
    "defaults": {"cadence": "fast", "database": "notion_raw", "debezium_shape": "flattened"},
    "tables": [{"from": "shard_*.orders", "target_table": "orders", "primary_key": ["id"]}],
}
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in milliseconds
COLUMNS = ["shard", "id", "status"]


def change(op: str, id_: int, status: str | None, at: int) -> dict[str, Any]:
    """A flattened Debezium record (ExtractNewRecordState, add.fields=op,source.ts_ms, delete rewrite)."""
    return {"id": id_, "status": status, "__op": op, "__source_ts_ms": T0 + at, "__deleted": str(op == "d").lower()}


@pytest.fixture
def orders(tmp_path: Path, lake: Lake) -> TableConfig:
    files = valid_files()
    files["tables/notion.yaml"] = copy.deepcopy(NOTION)
    return lake.configure(load_config(write_config(tmp_path / "config", files)).table("notion.shard_*.orders"))


@pytest.mark.spark
def test_four_shards_merge_into_one_table_keyed_by_shard(spark, lake: Lake, orders: TableConfig) -> None:
    for n in range(1, 5):  # every shard holds ids 1 and 2: only the shard tells them apart
        lake.land_json_lines(
            orders,
            "orders+0+0000000000.json",
            [change("c", 1, "new", 0), change("c", 2, "new", 1)],
            prefix=f"notion/shard_00{n}/orders/",
        )
    # shard_002 deletes its id 1; shard_003 ships id 2's change before an older one (late): the newer one stays.
    lake.land_json_lines(
        orders, "orders+0+0000000002.json", [change("d", 1, None, 10)], prefix="notion/shard_002/orders/"
    )
    lake.land_json_lines(
        orders,
        "orders+0+0000000002.json",
        [change("u", 2, "shipped", 20), change("u", 2, "paid", 15)],
        prefix="notion/shard_003/orders/",
    )
    first = lake.run(spark, orders.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    assert (first.files, first.rows, first.deletes) == (6, 11, 1)  # one commit for every shard's files
    expected = [
        ("shard_001", 1, "new"),
        ("shard_001", 2, "new"),
        ("shard_002", 2, "new"),
        ("shard_003", 1, "new"),
        ("shard_003", 2, "shipped"),
        ("shard_004", 1, "new"),
        ("shard_004", 2, "new"),
    ]
    assert rows_of(spark, first.base_path, COLUMNS) == expected
    assert hudi_rs_rows(first.base_path, COLUMNS) == expected
    assert {row[0] for row in rows_of(spark, first.base_path, ["_hoodie_record_key"])} >= {"shard:shard_001,id:1"}
    assert lake.landed(orders.table_id) == []
    assert len(lake.processed(orders.table_id)) == 6

    # A later run: one shard's change touches that shard's row only; the files already applied stay applied.
    lake.land_json_lines(
        orders, "orders+0+0000000004.json", [change("u", 1, "refunded", 30)], prefix="notion/shard_004/orders/"
    )
    second = lake.run(spark, orders.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    assert (second.files, second.rows) == (1, 1)
    expected[-2] = ("shard_004", 1, "refunded")
    assert rows_of(spark, second.base_path, COLUMNS) == expected
    assert hudi_rs_rows(second.base_path, COLUMNS) == expected

"""Golden scenarios of the real CDC shapes on Spark + Hudi: DMS CSV (headerless and with a header, gzip)
read with configuration that went through DynamoDB, and Debezium flattened by ExtractNewRecordState
(gzip, extension-less, with a transform). Each covers late data, several changes to one key in one file,
insert + delete and delete + re-insert in one file, and deletes in every form the shape has."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from odp.config import load_config
from odp.config.manager import load_into_dynamodb
from odp.config.models import SourceFormat
from odp.tracker import RunStatus
from tests.support.config_files import ZONES
from tests.support.lake import Lake, rows_of, small_table_config

# Not in alphabetical order: a store that sorts the columns would shift every value.
CSV_COLUMNS = {"id": "bigint", "name": "string", "amount": "decimal(10,2)", "seq": "string"}


def write_config_dir(root: Path, tables: dict[str, object]) -> Path:
    """A minimal configuration folder holding one tables file."""
    (root / "tables").mkdir(parents=True)
    environments = {
        "deployment": {"account": "000000000000", "region": "eu-west-1"},
        "source": {
            "repository": "org/odp",
            "connection_arn": "arn:aws:codeconnections:eu-west-1:000000000000:connection/abc-123",
        },
        "environments": {
            "dev": {"account": "111111111111", "region": "eu-west-1", "availability_zones": ZONES, "branch": "main"}
        },
    }
    (root / "environments.yaml").write_text(yaml.safe_dump(environments))
    cadences = {"cadences": {"hourly": {"schedule": "rate(1 hour)", "batch_size": 5}}}
    (root / "cadences.yaml").write_text(yaml.safe_dump(cadences))
    (root / "tables" / f"{tables['source']}.yaml").write_text(yaml.safe_dump(tables, sort_keys=False))
    return root


@pytest.mark.spark
def test_dms_csv_through_dynamodb_config_on_every_run(spark, lake: Lake, tmp_path: Path) -> None:
    tables = {
        "source": "src",
        "format": "dms",
        "tables": [
            {
                "schema": "app",
                "table": "accounts",
                "primary_key": ["id"],
                "ordering_column": "seq",
                "cadence": "hourly",
                "database": "lake_db",
                "columns": CSV_COLUMNS,
            }
        ],
    }
    config = load_config(write_config_dir(tmp_path / "config", tables))
    load_into_dynamodb(config, "test", lake.tables["table_config"], lake.tables["batch_config"])
    table = config.table("src.app.accounts")
    # Run 1: the full load, headerless, gzip-compressed, without Op (IncludeOpForFullLoad off).
    lake.land_bytes(table, "LOAD00000001.csv.gz", gzip.compress(b"1,ann,10.50,\n2,bob,20.00,\n3,cy,30.00,\n"))
    first = lake.run(spark, table.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    columns = ["id", "name", "amount", "seq"]
    assert [(r[0], r[1], str(r[2])) for r in rows_of(spark, first.base_path, columns)] == [
        (1, "ann", "10.50"),
        (2, "bob", "20.00"),
        (3, "cy", "30.00"),
    ]
    # Run 2 (configuration read back from DynamoDB again): several changes to key 1 in one file, insert +
    # delete of key 4, delete + re-insert of key 2; then a file with a header row (AddColumnName=true) in
    # another column order, deleting key 3.
    lake.land_text(
        table,
        "20260101-000001.csv",
        "U,1,ann2,11.00,100\nU,1,ann3,12.00,101\nI,4,dan,40.00,102\nD,4,dan,40.00,103\n"
        "D,2,bob,20.00,104\nI,2,bob2,21.00,105\n",
    )
    lake.land_text(table, "20260101-000002.csv", "Op,seq,amount,name,id\nD,106,30.00,cy,3\n")
    second = lake.run(spark, table.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    expected = [(1, "ann3", "12.00"), (2, "bob2", "21.00")]
    assert [(r[0], r[1], str(r[2])) for r in rows_of(spark, second.base_path, columns)] == expected
    # Run 3: late data (older seq than what is stored, and older than key 3's delete) changes nothing.
    lake.land_text(table, "20260101-000003.csv", "U,1,late,1.00,099\nI,3,zombie,3.00,050\n")
    third = lake.run(spark, table.table_id).tables[0]
    assert third.status is RunStatus.COMPLETED, third.error
    assert [(r[0], r[1], str(r[2])) for r in rows_of(spark, third.base_path, columns)] == expected


def _flat(key: int, name: str, ts: int, lsn: int, *, op: str | None = "u", deleted: str | None = None) -> dict:
    record = {"id": key, "name": name, "payload": json.dumps({"city": f"c{key}"}), "__source_ts_ms": ts, "__lsn": lsn}
    if op is not None:
        record["__op"] = op
    if deleted is not None:
        record["__deleted"] = deleted
    return record


@pytest.mark.spark
def test_debezium_flattened_gzip_extensionless_with_transform(spark, lake: Lake) -> None:
    config = lake.configure(
        small_table_config(
            "outbox",
            source_format=SourceFormat.DEBEZIUM,
            ordering_column=None,
            columns={"id": "int", "name": "string", "payload": "string"},
            transform="SELECT _odp, id, upper(name) AS name, get_json_object(payload, '$.city') AS city FROM <SRC>",
        )
    )
    records = [
        _flat(1, "a", 100, 1, op="r"),
        _flat(2, "b", 100, 2, op="r"),
        _flat(3, "c", 100, 3, op="r"),
        _flat(1, "a2", 110, 4),
        _flat(1, "a3", 120, 5),  # several changes to one key
        _flat(4, "d", 130, 6, op="c"),
        _flat(4, "d", 131, 7, op="d", deleted="true"),  # insert + delete (delete.handling.mode=rewrite with __op)
        _flat(2, "b", 140, 8, op=None, deleted="true"),  # delete + re-insert (rewrite, no __op)
        _flat(2, "b2", 150, 9, op="c", deleted="false"),
    ]
    body = "\n".join(json.dumps(r) for r in records) + "\nnull\n"  # a Kafka tombstone line is skipped
    lake.land_bytes(config, "outbox+0+0000000000.json.gz", gzip.compress(body.encode()))
    first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    expected = [(1, "A3", "c1"), (2, "B2", "c2"), (3, "C", "c3")]
    assert rows_of(spark, first.base_path, ["id", "name", "city"]) == expected
    # An extension-less object (Firehose's default), gzip inside: late changes (older times) and a delete
    # carried by __op alone.
    late = [_flat(1, "late", 105, 10), _flat(2, "late", 99, 11), _flat(3, "c", 160, 12, op="d")]
    lake.land_bytes(
        config, "outbox-1-2026-01-01-00-00-00-abc", gzip.compress("\n".join(map(json.dumps, late)).encode())
    )
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    assert rows_of(spark, second.base_path, ["id", "name", "city"]) == expected[:2]

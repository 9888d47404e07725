"""The demo's DMS CSV and flattened Debezium files, read back by the job's own pure parsers (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

from etl.readers.csv_records import parse_csv_content
from etl.readers.records import decode_content, parse_content
from odp.config import load_config
from sandbox.demo_data import DemoGenerator

CSV_TABLE = "billing_dms_csv.billing.accounts"
FLAT_TABLE = "crm_debezium.crm.customers"


def test_demo_csv_and_flattened_files_parse_to_the_model(repo_root: Path, tmp_path: Path) -> None:
    config = load_config(repo_root / "config")
    generator = DemoGenerator(config, tmp_path, table_ids=(CSV_TABLE, FLAT_TABLE))
    files = [change_file for round_number in range(3) for change_file in generator.generate_round(round_number)]
    accounts = config.table(CSV_TABLE)
    names = [name.lower() for name in accounts.columns]
    for change_file in files:
        body = (tmp_path / change_file.key).read_bytes()
        assert body[:2] == b"\x1f\x8b"  # gzip, as DMS (CompressionType=GZIP) and the S3 sink write them
        if change_file.table_id == CSV_TABLE:
            parsed = list(parse_csv_content(body, names, is_full_load=change_file.full_load, header=False))
            assert [c.error for c in parsed] == [None] * len(change_file.changes)
            assert [c.op for c in parsed] == [c.op for c in change_file.changes]
            assert [c.values["owner"] for c in parsed] == [c.row["owner"] for c in change_file.changes]
            assert [c.values["change_ts"] for c in parsed] == [
                f"{c.row['change_ts']:%Y-%m-%d %H:%M:%S.%f}" for c in change_file.changes
            ]
        else:
            assert all("__source_ts_ms" in json.loads(line) for line in decode_content(body).splitlines())
            parsed = list(parse_content(body, "debezium", ("id",), shape="flattened"))
            assert [c.op for c in parsed] == [c.op for c in change_file.changes]
            assert [c.values["email"] for c in parsed] == [c.row["email"] for c in change_file.changes]
            orderings = [c.ordering for c in parsed]
            assert orderings == sorted(orderings)

"""``python -m bench fleet --small``: ODP and the naive rewrite really run the fleet's four table classes,
every table they leave is checked against the model, and the JSON holds the wave and table metrics.

The one run also has ``--merge-on-read dimension,dimension_zipf``: ODP writes both dimension tables as
MERGE_ON_READ and the fact and event tables as COPY_ON_WRITE. Both dimension classes, because at the fleet's
seed the uniform dimension gets no file in the only CDC wave: the Zipf one does, so its updates land in a
log file that the check's snapshot read must merge and the metrics must count. And ``--simple-index-up-to 2000``:
every table of the small fleet has the table setting ``index: simple`` (no metadata table), checked against the
model like the rest. And ``--warm-jvm``: each contender serves both waves from one JVM (bench.warm_jvm), as the
issue-47 target run does."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.__main__ import main
from bench.check import normalised, read_hudi, read_parquet_table
from bench.contenders.common import PARQUET_CODEC
from bench.fleet import DAY_COLUMN, FLEET_SCHEMA, FleetSpec
from etl.hudi.timeline import completed_commits

KINDS = {"data", "log", "metadata", "total"}


@pytest.mark.spark
@pytest.mark.slow
def test_small_fleet_run_checks_every_table_and_records_the_metrics(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exit_code = main(
        [
            "fleet",
            "--small",
            "--merge-on-read",
            "dimension,dimension_zipf",
            "--simple-index-up-to",
            "2000",
            "--warm-jvm",
            "--work-dir",
            str(tmp_path),
            "--name",
            "fleet",
        ]
    )
    printed = capsys.readouterr().out
    assert exit_code == 0, printed
    document = json.loads((tmp_path / "results" / "fleet.json").read_text())
    assert (tmp_path / "results" / "fleet.png").stat().st_size > 10_000
    names = FleetSpec(groups=((4, 2_000),)).table_names
    assert names == ["fact_2k_01", "dimension_2k_02", "dimension_zipf_2k_03", "event_2k_04"]
    assert document["kind"] == "fleet"
    skipped = document["workload"]["skipped_per_wave"]["1"]
    assert len(skipped) == 1  # round(30% of 4)
    landed = sorted(set(names) - set(skipped))

    for name in ("odp", "naive_rewrite"):
        result = document["contenders"][name]
        assert result["status"] == "ok", (name, result["reason"])
        assert [check["table"] for check in result["checks"]] == names
        assert all(check["ok"] for check in result["checks"])
        load, wave = result["waves"]
        assert sorted(wave["tables"]) == landed  # a table without a file is not in the wave
        assert wave["bytes_written"]["total"] == sum(
            table["bytes_written"]["total"] for table in wave["tables"].values()
        )
        assert set(wave["bytes_written"]) == KINDS
        assert wave["bytes_written"]["data"] > 0
        assert wave["write_amplification"] == round(wave["bytes_written"]["total"] / wave["change_bytes"], 2)
        assert wave["hadoop_statistics"]["file"]["bytes_read"] > 0  # read through the JVM gateway
        assert wave["s3_requests"]["put"] == sum(table["s3_put_requests"] for table in wave["tables"].values()) > 0
        for table in wave["tables"].values():
            assert table["seconds"] > 0
            assert table["change_rows"] > 0
        assert load["change_rows"] == 4 * 2_000
        assert result["table_costs"]["all"]["points"] == len(landed)
    # --warm-jvm: each contender's waves in one warm JVM (bench.warm_jvm), what the issue-47 target runs; a process
    # per wave is tests/unit/bench/test_smoke_run.py's
    assert document["warm_jvm"] is True
    assert document["contenders"]["odp"]["processes"] == document["contenders"]["naive_rewrite"]["processes"] == 1
    # how ODP wrote each table and why, from its run history (the naive rewrite has no such choice)
    reasons = {
        name: table.get("write_reason") for name, table in document["contenders"]["odp"]["waves"][1]["tables"].items()
    }
    assert sorted(reasons) == landed
    assert all(reason and reason.startswith("upsert: ") for reason in reasons.values()), reasons
    assert not any(
        "write_reason" in table for table in document["contenders"]["naive_rewrite"]["waves"][1]["tables"].values()
    )
    # where ODP's table runs spent their time, per table group over the CDC waves (TableRun.step_seconds)
    groups = document["contenders"]["odp"]["step_seconds_by_group"]
    assert sorted(groups) == sorted({name.rsplit("_", 1)[0] for name in landed})
    for group in groups.values():
        assert {"plan", "read", "apply", "record", "write.hudi"} <= set(group["median_seconds"])
    assert "step_seconds_by_group" not in document["contenders"]["naive_rewrite"]
    check_merge_on_read(tmp_path, document, printed)
    odp_tables = tmp_path / "odp" / "tables" / "taxi_trips_raw"
    assert len(list((odp_tables / "fact_2k_01").glob(f"{DAY_COLUMN}=*"))) == 3 + 1  # the history, the wave's day
    assert not list((odp_tables / "dimension_2k_02").glob(f"{DAY_COLUMN}=*"))
    assert document["contenders"]["naive_rewrite"]["waves"][1]["files_touched"] > 0
    # --simple-index-up-to 2000: every table of 2,000 rows was written with the simple index and no metadata table
    assert document["odp_simple_index_up_to"] == 2_000
    for name in names:
        assert not (odp_tables / name / ".hoodie" / "metadata").exists(), name
        assert {c.index for c in completed_commits(spark, str(odp_tables / name)) if c.run_id} == {"simple"}, name
    assert "fixed s/table" in printed
    # one Parquet codec for both contenders (bench.contenders.common.PARQUET_CODEC), Hudi's default
    for root in (odp_tables, tmp_path / "naive_rewrite" / "tables"):
        codecs = {codec_of(path) for path in root.glob("**/*.parquet") if ".hoodie" not in path.parts}
        assert codecs == {PARQUET_CODEC.upper()}, (root, codecs)


def codec_of(path: Path) -> str:
    metadata = pq.ParquetFile(path).metadata
    return metadata.row_group(0).column(0).compression


def table_type(table: Path) -> str:
    properties = (table / ".hoodie" / "hoodie.properties").read_text().splitlines()
    return next(line.split("=", 1)[1] for line in properties if line.startswith("hoodie.table.type="))


def check_merge_on_read(tmp_path: Path, document: dict, printed: str) -> None:
    """``--merge-on-read dimension,dimension_zipf``: ODP's dimension tables are MERGE_ON_READ, the rest COW;
    the Zipf dimension's wave-1 updates are in a log file, counted as written bytes and merged by the check."""
    odp_tables = tmp_path / "odp" / "tables" / "taxi_trips_raw"
    types = {"fact": "COPY_ON_WRITE", "dimension": "MERGE_ON_READ", "dimension_zipf": "MERGE_ON_READ"}
    types["event"] = "COPY_ON_WRITE"
    for table in document["workload"]["tables"]:
        assert table["odp_table_type"] == types[table["class"]], table
        assert table_type(odp_tables / table["name"]) == types[table["class"]], table
    assert document["workload"]["odp_merge_on_read_classes"] == ["dimension", "dimension_zipf"]
    assert "ODP MERGE_ON_READ: dimension, dimension_zipf" in printed
    odp = document["contenders"]["odp"]
    zipf = odp["waves"][1]["tables"]["dimension_zipf_2k_03"]
    assert zipf["bytes_written"]["log"] > 0
    (check,) = [check for check in odp["checks"] if check["table"] == "dimension_zipf_2k_03"]
    assert check["ok"]
    snapshot = read_hudi(odp_tables / "dimension_zipf_2k_03")
    base_files_only = read_parquet_table(odp_tables / "dimension_zipf_2k_03")  # log files are hidden (".")
    assert snapshot.num_rows == check["expected_rows"]
    assert not normalised(snapshot, FLEET_SCHEMA).equals(normalised(base_files_only, FLEET_SCHEMA))

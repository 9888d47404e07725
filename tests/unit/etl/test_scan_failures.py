"""A failure of a many-file read is traced to its file, whatever its kind (issue 49): in one File Processor run, each
bad file is quarantined with its name and reason and the good files of its table are committed.

The DMS table's bad files fail the one Parquet scan of its files in every way found so far, each named now: column
names that differ only in case, a column ODP reserves, a column whose type cannot be merged with the other files',
a type Spark cannot read, a corrupt page (an executor's error), a truncated footer. The DynamoDB table's
files are parsed on the executors: a record whose attributes differ only in case is refused with its row, and a
record that breaks the parser itself (a Python error on an executor, naming no file) is traced by reading the
files apart, in a number of reads that grows with the logarithm of the file count.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.hudi.timeline import completed_commits
from odp.config.models import SourceFormat
from odp.operations.status import render_table, table_view
from odp.tracker import RunStatus, TrackedFile
from tests.support.lake import Lake, rows_of, small_table_config
from tests.support.stream_records import change

GOOD = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int64()), ("status", pa.string())])


def _row(key: int, **columns: object) -> dict:
    return {"Op": "I", "seq": str(key), "id": key, "status": f"s{key}", **columns}


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int64()), *fields])


def _corrupt_page(rows: int) -> bytes:
    """A Parquet file whose footer reads and whose first data page does not decompress (an executor's error)."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist([_row(k, status="x" * 50) for k in range(rows)], schema=GOOD), sink)
    body = bytearray(sink.getvalue().to_pybytes())
    for offset in range(200, 600):
        body[offset] ^= 0x5A
    return bytes(body)


def _land_dms(lake: Lake, config) -> tuple[dict[str, str], list[TrackedFile]]:
    """Seven good files and seven bad ones: each bad file's key -> the reason its error must give, and the good."""
    good = [lake.land_parquet(config, f"2026-01-01-{key:02d}.parquet", [_row(key)], GOOD) for key in range(1, 7)]
    update = {"Op": "U", "seq": "13", "id": 1, "status": "s1-new"}
    good.append(lake.land_parquet(config, "2026-01-01-13.parquet", [update], GOOD))
    both = _schema(("status", pa.string()), ("STATUS", pa.string()))
    struct = _schema(("status", pa.struct([("code", pa.int64())])))
    nanos = pa.schema([*_schema(), ("at", pa.timestamp("ns"))])
    bad = {
        lake.land_parquet(config, "2026-01-01-07.parquet", [_row(7, STATUS="S7")], both).key: (
            "columns status and STATUS differ only in case: Spark compares column names case-insensitively, so they "
            "cannot be two columns (rename one at the source)"
        ),
        lake.land_parquet(config, "2026-01-01-08.parquet", [_row(8, status={"code": 8})], struct).key: (
            # the good files and two bad ones found later (by the scan: a corrupt page, an unknown Op) are the other side
            "column status is struct<code:bigint> here and string in 9 other file(s) of the run: one table column "
            "cannot hold both"
        ),
        lake.land_parquet(
            config,
            "2026-01-01-09.parquet",
            [_row(9, _hoodie_commit_time="x")],
            GOOD.append(pa.field("_hoodie_commit_time", pa.string())),
        ).key: "column _hoodie_commit_time has a name ODP reserves for its own columns (_odp, _odp_*, _hoodie_*): "
        "rename it at the source",
        lake.land_bytes(config, "2026-01-01-10.parquet", _corrupt_page(200)).key: "unreadable Parquet: "
        "java.io.IOException: FAILED_TO_UNCOMPRESS(5)",
        lake.land_text(config, "2026-01-01-11.parquet", "PAR1 truncated upload").key: "unreadable Parquet: ",
    }
    sink = pa.BufferOutputStream()
    at = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    pq.write_table(pa.Table.from_pylist([{**_row(12), "at": at}], schema=nanos), sink, coerce_timestamps=None)
    nanos_key = lake.land_bytes(config, "2026-01-01-12.parquet", sink.getvalue().to_pybytes()).key
    bad[nanos_key] = "unreadable Parquet: Illegal Parquet type: INT64 (TIMESTAMP(NANOS,false))"
    unknown_op = lake.land_parquet(config, "2026-01-01-14.parquet", [_row(14), {**_row(15), "Op": "Z"}], GOOD)
    bad[unknown_op.key] = "row 2: unknown Op 'Z' (expected I, U or D)"  # a row's error, found in the one scan
    return bad, good


DYNAMODB_FILES = 16


def _land_dynamodb(lake: Lake, config) -> dict[str, str]:
    """Sixteen files of DynamoDB records, two of them bad; returns each bad file's key -> its reason."""
    keys = {}
    for number in range(DYNAMODB_FILES):
        record = change("INSERT", "orders", {"id": str(number), "status": f"s{number}"}, ms=number)
        if number == 5:  # a second record whose attributes differ only in case
            odd = change("INSERT", "orders", {"id": "50", "status": "a", "STATUS": "b"}, ms=50)
            keys[lake.land_json_lines(config, f"part-{number:02d}.json", [record, odd]).key] = (
                "row 2, attribute STATUS differs only in case from status, the spelling kept for the table (its "
                "columns', or most records'): Spark compares column names case-insensitively, so they cannot be two "
                "columns (rename it at the source)"
            )
        elif number == 11:  # nested deeper than Python's JSON parser recurses: it raises on the executor
            body = json.dumps(record) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n"
            keys[lake.land_text(config, f"part-{number:02d}.json", body).key] = (
                "unreadable file: RecursionError: maximum recursion depth exceeded"
            )
        else:
            lake.land_json_lines(config, f"part-{number:02d}.json", [record])
    return keys


@pytest.mark.spark
def test_every_scan_level_failure_is_quarantined_by_name_and_the_good_files_committed_in_one_run(
    spark, lake: Lake, caplog: pytest.LogCaptureFixture
) -> None:
    orders = lake.configure(small_table_config("orders", source="erp"))
    events = lake.configure(
        small_table_config("events", source_format=SourceFormat.DYNAMODB, ordering_column=None, source="ddb")
    )
    dms_bad, dms_good = _land_dms(lake, orders)
    bad = {orders.table_id: dms_bad, events.table_id: _land_dynamodb(lake, events)}

    with caplog.at_level(logging.WARNING, logger="etl.file_processor"):
        runs = {run.table_id: run for run in lake.run(spark, orders.table_id, events.table_id).tables}

    for table_id, reasons in bad.items():
        run = runs[table_id]
        assert run.status is RunStatus.COMPLETED, run.error
        assert sorted(run.quarantined_files) == sorted(reasons)
        held = {tracked.key: tracked.last_error for tracked in lake.quarantined(table_id)}
        assert sorted(held) == sorted(reasons)
        for key, reason in reasons.items():
            prefix = f"quarantined at its first failure, by run {run.run_id}: ChangeFileError: {key}: "
            assert held[key].startswith(prefix + reason), held[key]
    orders_path = runs[orders.table_id].base_path
    assert rows_of(spark, orders_path, ["id", "status"]) == [(1, "s1-new")] + [(k, f"s{k}") for k in range(2, 7)]
    (commit,) = completed_commits(spark, orders_path)
    assert sorted(commit.file_ids) == sorted(f.file_id for f in dms_good)  # the commit names exactly what it applied
    assert sorted(item["key"] for item in lake.processed(orders.table_id)) == sorted(f.key for f in dms_good)
    events_rows = rows_of(spark, runs[events.table_id].base_path, ["id", "status"])
    assert events_rows == sorted((str(n), f"s{n}") for n in range(DYNAMODB_FILES) if n not in (5, 11))
    # the executor's error named no file: traced by reading the files apart, in about log2(15) + 1 reads (one read
    # a file before); the read of 16 files first failed on it too, and its first probe named the file of row 2
    traced = [record.getMessage() for record in caplog.records if "reading them apart took" in record.getMessage()]
    (line,) = [message for message in traced if message.endswith("traced to ddb/app/events/part-11.json")]
    assert line.startswith(f"{events.table_id}: a read of 15 file(s) failed (Py4JJavaError: "), line
    assert int(re.search(r"took (\d+) reads", line).group(1)) <= 5, line
    # python -m odp status names each quarantined file and why
    backend = SimpleNamespace(environment="test", names=lake.names, dynamodb=lake.dynamodb, job_runs=None)
    shown = render_table(table_view(backend, orders.table_id), datetime.datetime.now(datetime.UTC)).splitlines()
    assert f"  quarantined: {len(bad[orders.table_id])} file(s)" in shown
    for key, reason in bad[orders.table_id].items():
        assert any(line.startswith(f"    {key} (since ") for line in shown), key
        assert any(line.strip().startswith("quarantined at its first failure") and reason in line for line in shown)
    # the next run has nothing to do and quarantines nothing more
    again = lake.run(spark, orders.table_id, events.table_id).tables
    assert [(run.status, run.files, run.quarantined_files) for run in again] == [(RunStatus.COMPLETED, 0, ())] * 2

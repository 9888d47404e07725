"""The event-time horizon on real Spark, one golden case per path: a DMS Parquet file whose timestamp ordering
column holds 9999-12-31 23:59:59, a Debezium file with ``source.ts_ms`` in year 9999, and a streaming
micro-batch with ``ApproximateCreationDateTime`` in year 9999. Each is refused with the file (or record), the
row and the value; before the horizon each was stored and froze its key. The pure check and the parsers
are tested without Spark in tests/unit/etl/test_event_horizon.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.errors import ChangeFileError
from etl.hudi.options import HudiProfile, WriteProfile
from etl.readers import SourceFile, first_error, read_changes
from etl.streaming.batch import StreamTarget, process_micro_batch
from odp.config.models import SourceFormat
from odp.tracker import RunStatus
from tests.support.lake import table_config
from tests.support.stream_records import change

pytestmark = pytest.mark.spark

RUN_START = datetime(2026, 11, 25, 15, 0, 0, tzinfo=UTC)
LATER = " is later than the horizon 2026-11-26 15:00:00 (run start + event_time_tolerance 1d)"
YEAR_9999_MS = 253402300799000  # 9999-12-31 23:59:59 UTC
TIMED = pa.schema([("Op", pa.string()), ("seq", pa.timestamp("us", tz="UTC")), ("id", pa.int32())])


def _refused(spark, path: Path, key: str, config) -> str:
    source = SourceFile(uri=path.as_uri(), key=key, order=0)
    frame = read_changes(spark, [source], config, run_start=RUN_START)
    with pytest.raises(ChangeFileError) as raised:
        first_error(frame, config.primary_key, [source])
    return str(raised.value)


def test_a_dms_timestamp_ordering_past_the_horizon_fails_its_file(spark, tmp_path: Path) -> None:
    path = tmp_path / "20260101-1.parquet"
    rows = [
        {"Op": "I", "seq": datetime(2026, 11, 1, 8, 0, tzinfo=UTC), "id": 1},
        {"Op": "U", "seq": datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), "id": 1},
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=TIMED), path)
    config = table_config("timed", columns={"id": "int", "seq": "timestamp"})
    assert _refused(spark, path, "src/app/timed/20260101-1.parquet", config) == (
        "src/app/timed/20260101-1.parquet: row 2, ordering column seq: event time 9999-12-31 23:59:59" + LATER
    )
    floored = config.model_copy(update={"event_time_floor": "2026-11-02"})
    pq.write_table(pa.Table.from_pylist(rows[:1], schema=TIMED), path)
    assert _refused(spark, path, "src/app/timed/20260101-1.parquet", floored) == (
        "src/app/timed/20260101-1.parquet: row 1, ordering column seq: event time 2026-11-01 08:00:00 is earlier "
        "than event_time_floor 2026-11-02 00:00:00"
    )
    # an integer (sequence) ordering is not a time: no horizon
    numbered = tmp_path / "20260101-2.parquet"
    schema = pa.schema([("Op", pa.string()), ("seq", pa.int64()), ("id", pa.int32())])
    pq.write_table(pa.Table.from_pylist([{"Op": "I", "seq": YEAR_9999_MS * 1000, "id": 1}], schema=schema), numbered)
    source = SourceFile(uri=numbered.as_uri(), key="src/app/timed/20260101-2.parquet", order=0)
    first_error(read_changes(spark, [source], table_config("timed"), run_start=RUN_START), ("id",), [source])


def test_a_debezium_ts_ms_in_year_9999_fails_its_file(spark, tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    documents = [
        {"op": "c", "after": {"id": 1}, "source": {"ts_ms": 1731924555370, "lsn": 1}},
        {"op": "u", "after": {"id": 1}, "source": {"ts_ms": YEAR_9999_MS, "lsn": 2}},
    ]
    path.write_text("".join(json.dumps(document) + "\n" for document in documents))
    config = table_config("dbz", source_format=SourceFormat.DEBEZIUM, ordering_column=None)
    assert _refused(spark, path, "src/app/dbz/a.json", config) == (
        "src/app/dbz/a.json: row 2: source.ts_ms 253402300799000: event time 9999-12-31 23:59:59" + LATER
    )


def test_a_stream_record_in_year_9999_is_a_bad_record_and_the_others_are_written(spark, tmp_path: Path) -> None:
    config = table_config("orders", source_format=SourceFormat.DYNAMODB, ordering_column=None)
    target = StreamTarget(
        stream="horizon",
        tables=(config,),
        raw_root=f"file://{tmp_path / 'raw'}",
        error_root=f"file://{tmp_path / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
    )
    future = change("MODIFY", "orders", {"id": "o1"}, ms=1)
    future["dynamodb"]["ApproximateCreationDateTime"] = YEAR_9999_MS
    documents = [change("INSERT", "orders", {"id": "o1"}, ms=0), future]
    records = spark.createDataFrame(
        [(json.dumps(document), str(100 + index), "shardId-0") for index, document in enumerate(documents)],
        "data string, sequence_number string, shard string",
    )
    outcome = process_micro_batch(spark, records, "stream:horizon:q:0", target, processed_at=RUN_START)
    reasons = [
        json.loads(line)["reason"]
        for path in sorted((tmp_path / "errors").rglob("*.json"))
        for line in path.read_text().splitlines()
    ]
    assert (outcome.records, outcome.bad_records) == (2, 1)
    assert [t.status for t in outcome.tables] == [RunStatus.COMPLETED]
    assert reasons == ["ApproximateCreationDateTime 253402300799000: event time 9999-12-31 23:59:59" + LATER]
    stored = spark.read.format("hudi").load(target.base_path(config)).select("id").collect()
    assert [row["id"] for row in stored] == ["o1"]

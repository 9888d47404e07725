"""The bad-input catalogue (tests/BAD_INPUT.md), table-driven: each bad input, the exact error an operator
sees (file, row where it applies, reason), and that nothing else was affected.

Cases the readers' own test covers already (tests/unit/etl/test_file_processor_bad_input.py: wrong
types, short CSV lines, invalid UTF-8, text orderings, truncated Parquet, ISO Debezium times, corrupt
gzip, bad DynamoDB times, failing transforms) are listed in the catalogue, not repeated here.

One job run holds every processing case, each in its own table, plus a good table whose file key has
characters S3 URL-encodes: every bad file is quarantined at its first failure with its message on its
file_tracker item, the run names it, the table's good files are committed in the same run; the good
table is written. The File Manager cases are decided without Spark (classify_staging_object).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.readers.records import MAX_RECORD_CHARS
from odp.config.models import SourceFormat
from odp.tracker import FileStatus, FileTracker, ProcessingTracker, RunStatus, classify_staging_object
from tests.support.lake import Lake, rows_of, small_table_config

CDC = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("name", pa.string())])
DEBEZIUM = {"source_format": SourceFormat.DEBEZIUM, "ordering_column": None}
DYNAMODB = {"source_format": SourceFormat.DYNAMODB, "ordering_column": None}
GOOD_PARQUET_ROW = {"Op": "I", "seq": "1", "id": 1, "name": "ok"}
# A DMS TimestampColumnName ordering, and the sentinel some sources write in it (also as milliseconds).
TIMED = pa.schema([("Op", pa.string()), ("seq", pa.timestamp("us", tz="UTC")), ("id", pa.int32())])
YEAR_9999 = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
YEAR_9999_MS = 253402300799000


def parquet(rows: list[dict[str, Any]], schema: pa.Schema = CDC) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    return sink.getvalue()


def lines(*documents: Any) -> bytes:
    return "".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in documents).encode()


def debezium(op: str = "c", after: Any = None, before: Any = None, ts: int = 5) -> dict[str, Any]:
    return {"op": op, "after": after, "before": before, "source": {"ts_ms": ts, "lsn": 1}}


def ddb(name: str = "INSERT", **dynamodb: Any) -> dict[str, Any]:
    return {"eventName": name, "dynamodb": {"ApproximateCreationDateTime": 1767225600, **dynamodb}}


@dataclass(frozen=True)
class BadInput:
    """One catalogue entry: a table, its files (the last one is the bad one), the exact message."""

    table: str
    files: tuple[tuple[str, bytes], ...]
    message: str  # the error after "<ErrorType>: "; ending in "…": a prefix (a library's cause follows)
    settings: dict[str, Any] = field(default_factory=dict)
    names_file: bool = True  # the error names the bad file: it is quarantined at its first failure

    @property
    def bad_key(self) -> str:
        return f"src/app/{self.table}/{self.files[-1][0]}"


# A good file before the bad one, committed by the same run: in one case of each way a DMS file fails (a row the
# count job refuses, a column its footer lacks, a footer that does not read); the quarantine after it is the same.
GOOD_FIRST = ("20260101-0.parquet", parquet([GOOD_PARQUET_ROW]))
ENORMOUS = debezium(after={"id": 2, "name": "x" * MAX_RECORD_CHARS})  # one line of more than 8 MiB
CATALOGUE = [
    BadInput(
        "dms_unknown_op",
        (GOOD_FIRST, ("20260101-1.parquet", parquet([GOOD_PARQUET_ROW, {**GOOD_PARQUET_ROW, "Op": "Z"}]))),
        "src/app/dms_unknown_op/20260101-1.parquet: row 2: unknown Op 'Z' (expected I, U or D)",
    ),
    BadInput(
        "dms_null_key",
        (("20260101-1.parquet", parquet([{**GOOD_PARQUET_ROW, "id": None}])),),
        "src/app/dms_null_key/20260101-1.parquet: row 1: null key column id",
    ),
    BadInput(
        "dms_missing_key",
        (GOOD_FIRST, ("20260101-1.parquet", parquet([{"Op": "I", "seq": "1"}], CDC.remove(2)))),
        "src/app/dms_missing_key/20260101-1.parquet: missing key column id",
    ),
    BadInput(
        "dms_missing_ordering",
        (("20260101-1.parquet", parquet([{"Op": "I", "id": 1}], CDC.remove(1))),),
        "src/app/dms_missing_ordering/20260101-1.parquet: missing ordering column seq",
    ),
    BadInput(
        "dms_missing_op",
        (("20260101-1.parquet", parquet([{"seq": "1", "id": 1}], CDC.remove(0).remove(2))),),
        "src/app/dms_missing_op/20260101-1.parquet: missing Op column in a CDC file",
    ),
    BadInput(
        "dms_not_parquet",
        (GOOD_FIRST, ("20260101-1.parquet", b"PAR1")),
        "src/app/dms_not_parquet/20260101-1.parquet: unreadable Parquet: java.lang.RuntimeException: file:…",
    ),
    BadInput(
        "dbz_json_error",
        (("a.json", lines(debezium(after={"id": 1}), debezium(after={"id": 2}), '{"op": "u", "after": {"id": 3')),),
        "src/app/dbz_json_error/a.json: row 3: JSON does not parse: Expecting ',' delimiter (char …",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_unknown_op",
        (("a.json", lines(debezium(op="x", after={"id": 1}))),),
        "src/app/dbz_unknown_op/a.json: row 1: unknown op 'x' (expected c, r, u or d)",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_missing_key",
        (("a.json", lines(debezium(after={"id": 1}), debezium(after={"name": "no id"}))),),
        "src/app/dbz_missing_key/a.json: row 2: missing key column id",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_null_key",
        (("a.json", lines(debezium(after={"id": None}))),),
        "src/app/dbz_null_key/a.json: row 1: null key column id",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_delete_without_before",
        (("a.json", lines(debezium(op="d"))),),
        "src/app/dbz_delete_without_before/a.json: row 1: op 'd' without a 'before' image",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_not_an_object",
        (("a.json", lines([1, 2, 3])),),
        "src/app/dbz_not_an_object/a.json: row 1: expected a JSON object, got list",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_no_envelope",
        (("a.json", lines({"id": 1, "name": "a row, not a change event"})),),
        "src/app/dbz_no_envelope/a.json: row 1: not a Debezium change event: neither an envelope (op, before, after, "
        "source) nor a flattened record (__op, __source_ts_ms, __deleted: ExtractNewRecordState with "
        "add.fields=op,source.ts_ms)",
        DEBEZIUM,
    ),
    BadInput(
        "dbz_enormous_line",
        (("a.json", lines(debezium(after={"id": 1}), ENORMOUS)),),
        f"src/app/dbz_enormous_line/a.json: row 2: a record of {len(json.dumps(ENORMOUS)):,} characters is longer "
        f"than the limit of {MAX_RECORD_CHARS:,} (one change record; DynamoDB items stop at 400 KB): not change "
        "data, or a row to load another way",
        DEBEZIUM,
    ),
    BadInput(
        "ddb_unknown_event",
        (("stream", lines(ddb("UPSERT", Keys={"id": {"N": "1"}}))),),
        "src/app/ddb_unknown_event/stream: row 1: unknown eventName 'UPSERT' (expected INSERT, MODIFY or REMOVE)",
        DYNAMODB,
    ),
    BadInput(
        "ddb_not_a_record",
        (("stream", lines({"Records": []})),),
        "src/app/ddb_not_a_record/stream: row 1: not a DynamoDB stream record (no 'dynamodb' object)",
        DYNAMODB,
    ),
    BadInput(
        "ddb_unknown_type",
        (("stream", lines(ddb(Keys={"id": {"N": "1"}}, NewImage={"id": {"N": "1"}, "x": {"Q": "?"}}))),),
        "src/app/ddb_unknown_type/stream: row 1: unknown attribute type 'Q'",
        DYNAMODB,
    ),
    BadInput(
        "ddb_missing_event_name",
        (("stream", lines({"dynamodb": {"ApproximateCreationDateTime": 1767225600, "Keys": {"id": {"N": "1"}}}})),),
        "src/app/ddb_missing_event_name/stream: row 1: missing eventName",
        DYNAMODB,
    ),
    # The event-time horizon: the run's start + event_time_tolerance (1d) follows "the horizon" (the run's clock).
    BadInput(
        "dms_future_ordering",
        (
            (
                "20260101-1.parquet",
                parquet(
                    [
                        {"Op": "I", "seq": datetime(2026, 1, 1, tzinfo=UTC), "id": 1},
                        {"Op": "U", "seq": YEAR_9999, "id": 1},
                    ],
                    TIMED,
                ),
            ),
        ),
        "src/app/dms_future_ordering/20260101-1.parquet: row 2, ordering column seq: event time 9999-12-31 "
        "23:59:59 is later than the horizon …",
    ),
    BadInput(
        "dbz_future_ts_ms",
        (("a.json", lines(debezium(after={"id": 1}), debezium(op="u", after={"id": 1}, ts=YEAR_9999_MS))),),
        "src/app/dbz_future_ts_ms/a.json: row 2: source.ts_ms 253402300799000: event time 9999-12-31 23:59:59 is "
        "later than the horizon …",
        DEBEZIUM,
    ),
    BadInput(
        "ddb_future_creation_time",
        (("stream", lines(ddb(Keys={"id": {"N": "1"}}, ApproximateCreationDateTime=YEAR_9999_MS))),),
        "src/app/ddb_future_creation_time/stream: row 1: ApproximateCreationDateTime 253402300799000: event time "
        "9999-12-31 23:59:59 is later than the horizon …",
        DYNAMODB,
    ),
]


@pytest.mark.spark
def test_every_bad_input_is_quarantined_alone_with_its_exact_message(spark, lake: Lake) -> None:
    good = lake.configure(small_table_config("good", **DEBEZIUM))
    # a key S3 URL-encodes in its events ('+', ' ') is read as it is
    lake.land_text(good, "dbserver1.app.good+0+0000000000 copy.json", json.dumps(debezium(after={"id": 7})))
    inactive = lake.configure(small_table_config("inactive").model_copy(update={"is_active": False}))
    lake.land_parquet(inactive, "20260101-1.parquet", [GOOD_PARQUET_ROW], CDC)
    for case in CATALOGUE:
        config = lake.configure(small_table_config(case.table, **case.settings))
        for name, body in case.files:
            lake.land_bytes(config, name, body)

    outcome = lake.run(spark, good.table_id, inactive.table_id, *(f"src.app.{case.table}" for case in CATALOGUE))
    by_id = {result.table_id: result for result in outcome.tables}
    assert by_id[good.table_id].status is RunStatus.COMPLETED, by_id[good.table_id].error
    assert rows_of(spark, by_id[good.table_id].base_path, ["id"]) == [(7,)]
    assert (by_id[inactive.table_id].status, by_id[inactive.table_id].error) == (
        RunStatus.SKIPPED,
        "inactive in table_config: its files stay landed",
    )
    files = FileTracker(lake.tables["file_tracker"], lake.tables["file_tracker_history"])
    processing = ProcessingTracker(lake.tables["processing_tracker"], lake.tables["processing_tracker_history"])
    wrong = []
    for case in CATALOGUE:
        table_id = f"src.app.{case.table}"
        result = by_id[table_id]
        held = {f.key: f for f in files.files(table_id, FileStatus.QUARANTINED)}
        reason = held[case.bad_key].last_error or "" if case.bad_key in held else ""
        prefix = f"quarantined at its first failure, by run {result.run_id}: "
        kind, _, text = reason.removeprefix(prefix).partition(": ")
        exact = text.startswith(case.message[:-1]) if case.message.endswith("…") else text == case.message
        named = result.quarantined_files == (case.bad_key,)
        if result.status is not RunStatus.COMPLETED or not named or not reason.startswith(prefix):
            wrong.append(f"{case.table}: {result.status.value}: {result.quarantined_files} {result.error}")
            continue
        if kind != "ChangeFileError" or not exact:
            wrong.append(f"{case.table}: quarantined as {reason}")
            continue
        assert "\n" not in text
        assert "Py4JJavaError" not in text
        # what the operator sees: the run names the file, the file its reason; the good files are applied
        assert processing.state(table_id).last_run.quarantined_files == (case.bad_key,)
        assert list(held) == [case.bad_key]
        assert files.landed_files(table_id) == []
        good = sorted(f"src/app/{case.table}/{name}" for name, _ in case.files[:-1])
        assert sorted(item["key"] for item in lake.processed(table_id)) == good
        assert result.files == len(good)
    assert wrong == []


@pytest.mark.parametrize(
    ("key", "size", "reason"),
    [
        ("src/app/t/empty.parquet", 0, "zero-byte object"),
        ("src/app/t/notes.txt", 10, None),  # reason checked below: it lists the data suffixes
        ("src/app/t/_SUCCESS", 0, "marker file '_SUCCESS'"),
        ("src/app/t/.hidden.parquet", 10, "marker file '.hidden.parquet'"),
        ("src/app/t/part-0.parquet.inprogress", 10, "temporary file 'part-0.parquet.inprogress'"),
        ("src/app/t/", 0, "folder marker"),
        ("src/app/file.parquet", 10, "key 'src/app/file.parquet' does not follow <source>/<schema>/<table>/<file>"),
    ],
)
def test_the_file_manager_skips_what_is_not_data_with_its_reason(key: str, size: int, reason: str | None) -> None:
    staging_key, why = classify_staging_object(key, size)
    assert staging_key is None
    assert why == (
        reason
        or "unknown suffix on 'notes.txt' (expected one of .parquet, .csv, .csv.gz, .json, .jsonl, .json.gz, "
        ".jsonl.gz, .gz, or no extension)"
    )


def test_keys_s3_encodes_and_names_without_an_extension_are_data() -> None:
    for key in ("src/app/t/dbserver1.app.t+0+0000000000 copy.json", "src/app/t/firehose-1-2026-01-01-00-00-00"):
        staging_key, why = classify_staging_object(key, 10)
        assert (staging_key.table_id if staging_key else None, why) == ("src.app.t", None)

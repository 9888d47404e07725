"""Bad input on a bad day: each bad file is quarantined with the file, the row, the column, the value and a
human cause (a bad transform fails its table); never a NULL, a silent shift, a frozen key, or a bare Java
stack. One run, many tables: the good table of the same run is written."""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from odp.config.models import SourceFormat
from odp.tracker import RunStatus
from tests.support.lake import Lake, rows_of, small_table_config

CSV_COLUMNS = {"id": "bigint", "name": "string", "amount": "decimal(10,2)", "seq": "string"}
DEBEZIUM = {"source_format": SourceFormat.DEBEZIUM, "ordering_column": None}


def _parquet(rows: list[dict], schema: pa.Schema) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink, compression="snappy")
    return sink.getvalue()


def _event(key: object, ts: object) -> str:
    return json.dumps({"op": "u", "after": {"id": key}, "source": {"ts_ms": ts, "lsn": 1}})


@pytest.mark.spark
def test_every_bad_file_names_itself_is_quarantined_and_the_good_table_is_written(spark, lake: Lake) -> None:
    errors: dict[str, str] = {}

    def table(name: str, **settings):
        return lake.configure(small_table_config(name, **settings))

    typed = table("typed", columns=CSV_COLUMNS)
    lake.land_text(typed, "20260101-1.csv", "I,1,a,1.00,5\nI,2,b,12.345,6\n")
    errors[typed.table_id] = (
        "src/app/typed/20260101-1.csv: row 2, column amount: value '12.345' is not a valid decimal(10,2)"
    )

    short = table("short", columns=CSV_COLUMNS)
    lake.land_text(short, "20260101-1.csv", "I,1,a,1.00,5\nI,2,b,2.00\n")
    errors[short.table_id] = (
        "src/app/short/20260101-1.csv: line 2 has 4 fields, expected 5: ['op', 'id', 'name', 'amount', 'seq']"
    )

    latin = table("latin", columns=CSV_COLUMNS)
    lake.land_bytes(latin, "20260101-1.csv", "I,1,é,1.00,5\n".encode("latin-1"))
    errors[latin.table_id] = (
        "src/app/latin/20260101-1.csv: bytes b'\\xe9,1.' at offset 4 are not valid utf-8 "
        "(set the table's encoding if the file uses another one)"
    )

    frozen = table("frozen", columns=CSV_COLUMNS)
    lake.land_text(frozen, "20260101-1.csv", "I,1,a,1.00,5\nU,1,b,2.00,2026-01-01 10:00:00\n")
    errors[frozen.table_id] = (
        "src/app/frozen/20260101-1.csv: row 2, ordering column seq: value '2026-01-01 10:00:00' is not a digit "
        "sequence (declare a time column as timestamp in columns)"
    )

    drift = table("drift", columns={"id": "int", "amount": "double", "seq": "string"})
    schema = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("amount", pa.string())])
    lake._land(drift, "20260101-1.parquet", _parquet([{"Op": "I", "seq": "1", "id": 1, "amount": "n/a"}], schema))
    errors[drift.table_id] = "src/app/drift/20260101-1.parquet: row 1, column amount: value 'n/a' is not a valid double"

    truncated = table("truncated")
    body = _parquet([{"Op": "I", "seq": "1", "id": 1, "amount": "x"}], schema)
    lake.land_bytes(truncated, "20260101-1.parquet", body[: len(body) // 2])
    errors[truncated.table_id] = "src/app/truncated/20260101-1.parquet: unreadable Parquet: "

    dbz = table("dbz", **DEBEZIUM)
    lake.land_text(dbz, "a.json", _event(1, 5) + "\n" + _event(1, "2026-01-01T00:00:00Z") + "\n")
    errors[dbz.table_id] = (
        "src/app/dbz/a.json: row 2: source.ts_ms '2026-01-01T00:00:00Z' is not a whole number of at most 15 digits"
    )

    gz = table("gz", **DEBEZIUM)
    lake.land_bytes(gz, "a.json.gz", gzip.compress((_event(1, 5) + "\n").encode() * 50)[:-20])
    errors[gz.table_id] = "src/app/gz/a.json.gz: corrupt or truncated gzip data ("

    ddb = table("ddb", source_format=SourceFormat.DYNAMODB, ordering_column=None)
    record = {"eventName": "INSERT", "dynamodb": {"ApproximateCreationDateTime": "noon", "Keys": {"id": {"S": "a"}}}}
    lake.land_text(ddb, "stream", json.dumps(record))
    errors[ddb.table_id] = (
        "src/app/ddb/stream: row 1: ApproximateCreationDateTime 'noon' is not a number of seconds or milliseconds"
    )

    transform = table("transform", **DEBEZIUM, transform="SELECT _odp, id, nope FROM <SRC>")
    lake.land_text(transform, "a.json", _event(1, 5))
    errors[transform.table_id] = "src.app.transform: the table's transform does not run: "

    good = table("good", **DEBEZIUM, columns={"id": "int"})
    lake.land_text(good, "a.json", _event(7, 5))

    outcome = lake.run(spark, *errors, good.table_id)
    by_id = {result.table_id: result for result in outcome.tables}
    assert by_id[good.table_id].status is RunStatus.COMPLETED, by_id[good.table_id].error
    assert rows_of(spark, by_id[good.table_id].base_path, ["id"]) == [(7,)]
    for table_id, message in errors.items():
        result = by_id[table_id]
        if table_id == transform.table_id:  # the table's own error: its run fails, its files stay landed
            assert result.status is RunStatus.REFRESH_ERROR, table_id
            kind, _, text = result.error.partition(": ")
            assert (kind, result.quarantined_files) == ("TransformError", ()), result.error
            assert [f.key for f in lake.landed(table_id)]
        else:  # a bad file: quarantined at its first failure, the run names it, the reason is on the file
            assert (result.status, result.quarantined_files) == (RunStatus.COMPLETED, (message.split(": ")[0],)), (
                table_id,
                result.error,
            )
            (held,) = lake.quarantined(table_id)
            kind, _, text = held.last_error.split(": ", 1)[1].partition(": ")
            assert kind == "ChangeFileError", held.last_error
            assert lake.landed(table_id) == []
        if message.endswith((": ", "(")):
            assert text.startswith(message), text
            assert "Py4JJavaError" not in text
            assert "\n" not in text
        else:
            assert text == message

"""Partial updates, one mechanism: Debezium's unavailable-value placeholder (Postgres TOAST) and columns missing
from a file (``missing_columns``) keep the stored value, in COW and MOR, across files and runs, in event-time
order; a change with nothing to keep from fails its file, naming the row and the column.

The Debezium events are the published Postgres sample (tests/samples/debezium, Apache Flink's recording of the
Debezium tutorial's ``inventory.products``, payload-only form) and updates built from its own ``u`` event, with
``description`` set to the placeholder the connector writes for an unchanged TOASTed column (REPLICA IDENTITY
DEFAULT), as in Debezium's documentation of TOASTed values.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from etl.errors import TransformError
from etl.raw_table.kept_values import check_kept_columns
from etl.readers.csv_records import parse_csv
from etl.readers.records import unavailable_columns
from odp.config.models import (
    DEBEZIUM_UNAVAILABLE_VALUE,
    MissingColumns,
    SourceFormat,
    TableConfig,
    TableMode,
    TableType,
)
from odp.tracker import RunStatus
from tests.support.lake import Lake, hudi_rs_rows, rows_of, small_table_config

PRODUCTS_COLUMNS = {"id": "int", "name": "string", "description": "string", "weight": "double"}
SAMPLE = Path("debezium") / "debezium-postgres-data-schema-exclude.txt"
UNAVAILABLE = DEBEZIUM_UNAVAILABLE_VALUE


def sample_events(samples_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (samples_dir / SAMPLE).read_text().splitlines() if line.strip()]


def update_of(events: list[dict[str, Any]], key: int, *, ts_ms: int, lsn: int, **after: Any) -> dict[str, Any]:
    """The sample's first ``u`` event, re-keyed to ``key``, at ``ts_ms`` / ``lsn``, with ``after`` applied."""
    event = copy.deepcopy(next(e for e in events if e["op"] == "u"))
    event["after"] = {**event["after"], "id": key, **after}
    event["before"] = None  # REPLICA IDENTITY DEFAULT: no before image of an update
    event["source"]["ts_ms"], event["source"]["lsn"] = ts_ms, lsn
    return event


def sample_loaded(spark: Any, lake: Lake, samples_dir: Path, name: str, table_type: TableType) -> TableConfig:
    """A Debezium table ``name`` holding the Postgres sample as it is (one run): its config."""
    config = lake.configure(
        small_table_config(
            name,
            source_format=SourceFormat.DEBEZIUM,
            ordering_column=None,
            table_type=table_type,
            columns=PRODUCTS_COLUMNS,
        )
    )
    lake.land_text(config, "inventory.products+0+0000000000.json", (samples_dir / SAMPLE).read_text())
    first = lake.run(spark, config.table_id).tables[0]
    assert first.status is RunStatus.COMPLETED, first.error
    return config


def test_the_placeholder_is_found_as_text_base64_and_array() -> None:
    image = {
        "id": 1,
        "doc": UNAVAILABLE,
        "blob": "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==",  # base64 of the placeholder: a bytea column in JSON
        "tags": [UNAVAILABLE],
        "empty": [],
        "text": "a real value",
        "none": None,
    }
    assert unavailable_columns(image, UNAVAILABLE) == ("doc", "blob", "tags")
    assert unavailable_columns(image, None) == ()
    assert unavailable_columns({"doc": "__toasted__"}, "__toasted__") == ("doc",)  # the configured placeholder


def test_a_transform_must_keep_the_kept_columns_under_their_names() -> None:
    config = small_table_config("t", transform="SELECT _odp, id, description AS body FROM <SRC>")
    before, after = ["_odp_op", "id", "description"], ["_odp_op", "id", "body"]
    check_kept_columns(config, ["description"], before, ["_odp_op", "id", "description"])
    check_kept_columns(config, ["doc"], before, after)  # not in the batch at all: the stored type is used
    with pytest.raises(TransformError) as raised:
        check_kept_columns(config, ["description"], before, after)
    assert str(raised.value) == (
        "src.app.t: the table's transform drops or renames column(s) ['description'], which changes of this run "
        "leave as stored (a Debezium unavailable-value placeholder or missing_columns: keep): select them under "
        "their names"
    )


def test_a_dms_csv_header_without_a_column_is_refused_kept_or_nulled() -> None:
    names, text = ["id", "name", "email"], "Op,id,name\nU,1,ann2\n"
    refused = list(parse_csv(text, names, is_full_load=False, header=True))
    assert refused[0].error == "the header names columns ['op', 'id', 'name'], the configuration has " + (
        "['id', 'name', 'email'] (+ Op)"
    )
    kept = list(parse_csv(text, names, is_full_load=False, missing="keep", kept_names=["id", "name", "Email"]))
    assert (kept[0].values, kept[0].keep) == ({"id": "1", "name": "ann2", "email": None}, ("Email",))
    nulled = list(parse_csv(text, names, is_full_load=False, header=True, missing="null"))
    assert (nulled[0].values, nulled[0].keep) == ({"id": "1", "name": "ann2", "email": None}, ())
    # a header naming every column keeps nothing, whatever the setting
    full = list(parse_csv("Op,id,name,email\nI,2,bob,b@x\n", names, is_full_load=False, missing="keep"))
    assert (full[0].values["email"], full[0].keep) == ("b@x", ())


@pytest.mark.spark
def test_toast_placeholders_keep_the_stored_value_in_event_time_order_or_fail_their_file(
    spark, lake: Lake, samples_dir: Path
) -> None:
    """On MERGE_ON_READ, where a kept value could go wrong with the table type (a stored row in a log file; a log
    holding the placeholder, which hudi-rs would show): the COPY_ON_WRITE tables of the missing-columns test below
    keep stored values by the same fill (etl.raw_table.kept_values), which reads either type's snapshot."""
    config = sample_loaded(spark, lake, samples_dir, "products", TableType.MERGE_ON_READ)
    events = sample_events(samples_dir)
    # stored now: 107 "box of assorted rocks" 5.1; 110 "new water resistent white wind breaker" (ts ...982228)
    later = 1596020000000
    changes = [
        # 107: TOAST placeholder, the weight changes: the stored description stays
        update_of(events, 107, ts_ms=later, lsn=34200000, description=UNAVAILABLE, weight=5.3),
        # 104: a full update, then a placeholder in the same run: the earlier change supplies the value
        update_of(events, 104, ts_ms=later, lsn=34200100, description="16oz carpenter's hammer", weight=0.9),
        update_of(events, 104, ts_ms=later + 1, lsn=34200200, description=UNAVAILABLE, weight=0.95),
    ]
    lake.land_json_lines(config, "inventory.products+0+0000000016.json", changes)
    # 110: a late full change (older than the stored row) in the same run as a newer placeholder, in an earlier
    # file: the placeholder takes the stored value, which is newer than the late change, never the late one
    late = [
        update_of(events, 110, ts_ms=1596010950000, lsn=34132600, description="an older text", weight=0.3),
        update_of(events, 110, ts_ms=later, lsn=34200300, description=UNAVAILABLE, weight=0.6),
    ]
    lake.land_json_lines(config, "inventory.products+0+0000000015.json", late)
    second = lake.run(spark, config.table_id).tables[0]
    assert second.status is RunStatus.COMPLETED, second.error
    expected = {
        104: ("16oz carpenter's hammer", 0.95),
        107: ("box of assorted rocks", 5.3),
        110: ("new water resistent white wind breaker", 0.6),
    }
    columns = ["id", "description", "weight"]
    for rows in (rows_of(spark, second.base_path, columns), hudi_rs_rows(second.base_path, columns)):
        found = {row[0]: row[1:] for row in rows}
        assert {key: found[key] for key in expected} == expected
        assert UNAVAILABLE not in {row[1] for row in rows}
    # a later run: a placeholder again keeps what the previous run stored (across runs and files); beside it, a file
    # whose placeholder has nothing to keep from
    again = [update_of(events, 107, ts_ms=later + 10, lsn=34300000, description=UNAVAILABLE, weight=5.5)]
    lake.land_json_lines(config, "inventory.products+0+0000000020.json", again)
    orphan = [
        update_of(events, 106, ts_ms=later + 10, lsn=34300100, weight=1.5),  # a full update: fine
        update_of(events, 999, ts_ms=later + 10, lsn=34300200, description=UNAVAILABLE),  # no stored row
    ]
    bad = lake.land_json_lines(config, "inventory.products+0+0000000021.json", orphan)
    third = lake.run(spark, config.table_id).tables[0]
    reason = (
        f"UnstorableChangeError: {bad.key}: row 2, column description: the change leaves the stored value as it is "
        "(Debezium's unavailable-value placeholder, or a column its file lacks with missing_columns: keep), but key "
        "id=999 has no earlier change in this run and no stored row to take it from"
    )
    # found before writing: the file is quarantined at its first failure, the rest of the run goes on
    assert third.status is RunStatus.COMPLETED, third.error
    assert third.quarantined_files == (bad.key,)
    [quarantined] = lake.quarantined(config.table_id)
    assert quarantined.key == bad.key
    assert reason in quarantined.last_error
    for rows in (rows_of(spark, third.base_path, columns), hudi_rs_rows(third.base_path, columns)):
        found = {row[0]: row[1:] for row in rows}
        assert found[107] == ("box of assorted rocks", 5.5)
        # nothing of the quarantined file was written: 106 keeps its stored weight, 999 does not exist
        assert (found[106], 999 in found) == (("18oz carpenter hammer", 1.0), False)


CDC = pa.schema(
    [("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("name", pa.string()), ("email", pa.string())]
)
WITHOUT_EMAIL = pa.schema([("Op", pa.string()), ("seq", pa.string()), ("id", pa.int32()), ("name", pa.string())])
DMS_COLUMNS = {"id": "int", "seq": "string", "name": "string", "email": "string"}


@pytest.mark.spark
def test_a_parquet_file_missing_a_column_is_refused_kept_or_nulled(spark, lake: Lake) -> None:
    tables = {
        MissingColumns.REFUSE: lake.configure(small_table_config("refused", columns=DMS_COLUMNS)),
        MissingColumns.KEEP: lake.configure(
            small_table_config(
                "kept",
                columns=DMS_COLUMNS,
                missing_columns=MissingColumns.KEEP,
                table_type=TableType.MERGE_ON_READ,
            )
        ),
        MissingColumns.NULL: lake.configure(small_table_config("nulled", columns=DMS_COLUMNS, missing_columns="null")),
        # without `columns`: the stored table's columns are what a file must carry
        "unconfigured": lake.configure(small_table_config("unconfigured")),
        # a plain CSV drop (files): its header declares its columns too
        "files": lake.configure(small_table_config("drops", source_format=SourceFormat.FILES, columns=DMS_COLUMNS)),
        # DMS CSV with a header (AddColumnName=true) and missing_columns: keep
        "csv": lake.configure(small_table_config("csv", columns=DMS_COLUMNS, missing_columns="keep", csv_header=True)),
        # a historical table keeps every change: the kept cell takes the key's previous change's value
        "history": lake.configure(
            small_table_config("history", columns=DMS_COLUMNS, missing_columns="keep", mode=TableMode.HISTORICAL)
        ),
    }
    first = [
        {"Op": "I", "seq": "1", "id": 1, "name": "ann", "email": "ann@example.com"},
        {"Op": "I", "seq": "2", "id": 2, "name": "bob", "email": "bob@example.com"},
    ]
    # an older schema's file: no email column; 1 is updated, 3 is new (nothing stored to keep from)
    second = [{"Op": "U", "seq": "3", "id": 1, "name": "ann2"}]
    bad = {}

    def land_second(mode: Any, config: TableConfig) -> None:
        if mode == "files":
            bad[mode] = lake.land_text(config, "20260101-1.csv", "id,seq,name\n1,3,ann2\n")
        elif mode == "csv":
            bad[mode] = lake.land_text(config, "20260101-1.csv", "Op,id,seq,name\nU,1,3,ann2\n")
        else:
            bad[mode] = lake.land_parquet(config, "20260101-1.parquet", second, WITHOUT_EMAIL)

    # A table with configured `columns` refuses the file by them, with nothing stored: its bad file is its first.
    refused_first = (MissingColumns.REFUSE, "files")
    for mode, config in tables.items():
        if mode in refused_first:
            land_second(mode, config)
        elif mode == "csv":
            csv_rows = "Op,id,seq,name,email\nI,1,1,ann,ann@example.com\nI,2,2,bob,bob@example.com\n"
            lake.land_text(config, "20260101-0.csv", csv_rows)
        else:
            lake.land_parquet(config, "20260101-0.parquet", first, CDC)
    results = {t.table_id: t for t in lake.run(spark, *(c.table_id for c in tables.values())).tables}
    assert all(t.status is RunStatus.COMPLETED for t in results.values())
    later = [mode for mode in tables if mode not in refused_first]
    for mode in later:
        land_second(mode, tables[mode])
    # keep with no stored row for the key: refused, naming the row and the column (beside the kept table's update)
    new_key = lake.land_parquet(
        tables[MissingColumns.KEEP],
        "20260101-2.parquet",
        [{"Op": "I", "seq": "4", "id": 3, "name": "cy"}],
        WITHOUT_EMAIL,
    )
    results |= {t.table_id: t for t in lake.run(spark, *(tables[mode].table_id for mode in later)).tables}
    message = (
        "missing column(s) email: the file does not carry them, so its changes would set them to NULL (set the "
        "table's missing_columns to keep to leave the stored values, or null to store NULL)"
    )
    # a refusal is deterministic: the file is quarantined at its first failure, its reason kept, the run goes on
    for mode in (MissingColumns.REFUSE, "unconfigured", "files"):
        table_id = tables[mode].table_id
        run = results[table_id]
        assert run.status is RunStatus.COMPLETED, run.error
        assert run.quarantined_files == (bad[mode].key,)
        [quarantined] = lake.quarantined(table_id)
        assert f"ChangeFileError: {bad[mode].key}: {message}" in quarantined.last_error
    csv_kept = results[tables["csv"].table_id]
    assert csv_kept.status is RunStatus.COMPLETED, csv_kept.error
    assert rows_of(spark, csv_kept.base_path, ["id", "name", "email"]) == [
        (1, "ann2", "ann@example.com"),
        (2, "bob", "bob@example.com"),
    ]
    kept = results[tables[MissingColumns.KEEP].table_id]
    assert kept.status is RunStatus.COMPLETED, kept.error
    expected = [(1, "ann2", "ann@example.com"), (2, "bob", "bob@example.com")]
    assert rows_of(spark, kept.base_path, ["id", "name", "email"]) == expected
    assert hudi_rs_rows(kept.base_path, ["id", "name", "email"]) == expected
    assert kept.quarantined_files == (new_key.key,)
    [quarantined] = lake.quarantined(kept.table_id)
    assert f"UnstorableChangeError: {new_key.key}: row 1, column email: the change leaves" in quarantined.last_error
    assert "key id=3 has no earlier change in this run and no stored row to take it from" in quarantined.last_error
    nulled = results[tables[MissingColumns.NULL].table_id]
    assert nulled.status is RunStatus.COMPLETED, nulled.error
    assert rows_of(spark, nulled.base_path, ["id", "name", "email"]) == [
        (1, "ann2", None),
        (2, "bob", "bob@example.com"),
    ]
    history = results[tables["history"].table_id]
    assert history.status is RunStatus.COMPLETED, history.error
    changes = [
        (1, "1", "ann", "ann@example.com"),
        (1, "3", "ann2", "ann@example.com"),
        (2, "2", "bob", "bob@example.com"),
    ]
    assert rows_of(spark, history.base_path, ["id", "seq", "name", "email"]) == changes

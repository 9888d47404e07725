"""Plain file drops (format: files): CSV with a header, JSON lines and Parquet through the File Processor;
upsert by key (the later file wins) or append (mode historical); a value its type cannot hold fails the file."""

from __future__ import annotations

import pyarrow as pa
import pytest

from odp.config.models import SourceFormat, TableMode
from odp.tracker import RunStatus
from tests.support.lake import Lake, rows_of, small_table_config

COLUMNS = {"id": "bigint", "city": "string", "amount": "decimal(10,2)"}


def plain(name: str, **overrides) -> object:
    return small_table_config(
        name, source_format=SourceFormat.FILES, ordering_column=None, columns=COLUMNS, **overrides
    )


@pytest.mark.spark
def test_upsert_by_key_across_csv_json_and_parquet(spark, lake: Lake) -> None:
    config = lake.configure(plain("drops"))
    lake.land_text(config, "2026/01/01/a.csv", "ID,City,Amount\n1,Oslo,10.50\n2,Rome,20.00\n")
    lake.land_json_lines(config, "2026/01/02/b.jsonl", [{"id": 2, "city": "Roma", "amount": "21.00"}, {"id": 3}])
    schema = pa.schema([("id", pa.int64()), ("city", pa.string()), ("amount", pa.string())])
    lake.land_parquet(config, "2026/01/03/c.parquet", [{"id": 1, "city": "Oslo", "amount": "11.00"}], schema)
    result = lake.run(spark, config.table_id).tables[0]
    assert result.status is RunStatus.COMPLETED, result.error
    assert rows_of(spark, result.base_path, ["id", "city", "amount"]) == [
        (1, "Oslo", pytest.approx(11.00)),
        (2, "Roma", pytest.approx(21.00)),
        (3, None, None),
    ]


@pytest.mark.spark
def test_append_keeps_every_row_and_a_bad_value_fails_the_file(spark, lake: Lake) -> None:
    config = lake.configure(plain("events", mode=TableMode.HISTORICAL))
    lake.land_text(config, "a.csv", "id,city,amount\n1,Oslo,1.00\n1,Oslo,2.00\n")
    appended = lake.run(spark, config.table_id).tables[0]
    assert appended.status is RunStatus.COMPLETED, appended.error
    assert rows_of(spark, appended.base_path, ["id", "amount"]) == [(1, pytest.approx(1.0)), (1, pytest.approx(2.0))]
    broken = lake.configure(plain("broken"))
    lake.land_text(broken, "b.csv", "id,city,amount\n7,Oslo,1.00\n8,Rome,ten\n")
    held = lake.run(spark, broken.table_id).tables[0]
    assert (held.status, held.files, held.quarantined_files) == (RunStatus.COMPLETED, 0, ("src/app/broken/b.csv",))
    # The readers' strict cast and message (etl.readers.typed_values), placed by the row's key, on the file.
    (quarantined,) = lake.quarantined(broken.table_id)
    assert quarantined.last_error.endswith("b.csv: row id='8', column amount: value 'ten' is not a valid decimal(10,2)")

"""The fixed-cost and many-files runs end to end with a contender that needs no Spark: a pyarrow rewrite
whose tables are checked against the model like any other, and whose process seconds are known."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bench import runner
from bench.contenders.common import Contender, WaveMeasurement
from bench.fleet_runner import run_fixed_cost, run_many_files
from bench.measure import StepResult
from bench.workload import KEY, OP, ORDERING, WaveFiles


class PyarrowRewrite(Contender):
    """Last change per key wins, deletes dropped, the whole table written again as one file. Each table
    "takes" 0.5 s plus 0.01 s per landed file, and a wave 1 s more (its application's start)."""

    name = "pyarrow_rewrite"
    label = "pyarrow rewrite (test)"
    hudi = False

    def _run(self, measurement: WaveMeasurement, wave: int, files: list[WaveFiles], staging_root: Path) -> None:
        seconds = 1.0
        for item in files:
            target = self.table_path(item.table) / "part-0.parquet"
            parts = []
            if target.is_file():
                current = pq.read_table(target)
                parts.append(current.append_column(OP, pa.array(["I"] * current.num_rows)))
            for key in item.keys:
                frame = pq.read_table(staging_root / key)
                if OP not in frame.column_names:
                    frame = frame.append_column(OP, pa.array(["I"] * frame.num_rows))
                parts.append(frame.select([*item.columns, OP]))
            rows = pa.concat_tables([part.select([*item.columns, OP]) for part in parts]).to_pylist()
            latest: dict[int, dict] = {}
            for row in rows:  # in landing order: a later row wins unless it is older
                if row[KEY] not in latest or latest[row[KEY]][ORDERING] <= row[ORDERING]:
                    latest[row[KEY]] = row
            kept = [{k: v for k, v in row.items() if k != OP} for row in latest.values() if row[OP] != "D"]
            target.parent.mkdir(parents=True, exist_ok=True)
            schema = pa.schema([parts[-1].schema.field(name) for name in item.columns])
            pq.write_table(pa.Table.from_pylist(kept, schema), target)
            seconds += 0.5 + 0.01 * len(item.keys)
        measurement.add(StepResult(("test",), seconds, 0, 0, ""))


@pytest.fixture(autouse=True)
def pyarrow_contender(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(runner.CONTENDERS, PyarrowRewrite.name, PyarrowRewrite)


def test_the_fixed_cost_run_compares_a_wave_of_the_anchor_with_one_of_every_table(tmp_path: Path) -> None:
    document = run_fixed_cost(3, 500, 20, tmp_path, ["pyarrow_rewrite"])
    result = document["contenders"]["pyarrow_rewrite"]
    assert result["status"] == "ok", result["reason"]
    assert len(result["checks"]) == 4
    anchor = document["fixed_cost"]["anchor"]
    assert list(result["waves"][1]["tables"]) == [anchor]
    assert len(result["waves"][2]["tables"]) == 4
    assert all(table["landed_files"] == 1 for table in result["waves"][2]["tables"].values())
    assert {table["change_rows"] for table in result["waves"][2]["tables"].values()} == {20}
    # wave 1: 1 + 0.51 s; wave 2: 1 + 4 x 0.51 s -> 3 x 0.51 s more for 3 tables
    assert document["fixed_cost"]["pyarrow_rewrite"] == {
        "wave_with_none_s": 1.51,
        "wave_with_every_table_s": 3.04,
        "seconds_per_table": 0.51,
    }


def test_the_many_files_run_lands_the_same_rows_as_one_file_and_as_one_file_each(tmp_path: Path) -> None:
    document = run_many_files(25, 500, tmp_path, ["pyarrow_rewrite"])
    one, many = (document["runs"][shape]["contenders"]["pyarrow_rewrite"] for shape in ("one_file", "many_files"))
    assert one["status"] == many["status"] == "ok", (one["reason"], many["reason"])
    (one_table,) = one["waves"][1]["tables"].values()
    (many_table,) = many["waves"][1]["tables"].values()
    assert (one_table["landed_files"], many_table["landed_files"]) == (1, 25)
    assert one_table["change_rows"] == many_table["change_rows"] == 25
    assert one["checks"][0]["expected_rows"] == many["checks"][0]["expected_rows"]
    assert document["cdc_wave_many_over_one"] == {"pyarrow_rewrite": round(1.75 / 1.51, 3)}
    staging = tmp_path / "many_files" / "staging"
    landed = sorted(staging.rglob("2026110[2]-*.parquet"))
    assert len(landed) == 25
    assert all(pq.read_metadata(path).num_rows == 1 for path in landed)
    assert pc.sum(pa.chunked_array([pq.read_table(path).column(KEY) for path in landed])).as_py() > 0

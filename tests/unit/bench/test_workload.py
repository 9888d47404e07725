"""The generator's files replayed in plain Python agree with its model; the model's waves are what they claim."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.workload import KEY, OP, ORDERING, SCHEMA_ARROW, SourceModel, WorkloadSpec


def replay(staging: Path, keys: list[str]) -> dict[int, dict]:
    """Apply every file, in landing order, the slow obvious way: newest ordering per key wins."""
    state: dict[int, dict] = {}
    for key in keys:
        for row in pq.read_table(staging / key).to_pylist():
            op = row.pop(OP, None) or "I"
            current = state.get(row[KEY])
            if current is not None and current[ORDERING] > row[ORDERING]:
                continue
            state[row[KEY]] = {**row, "_deleted": op == "D"}
    return {pk: row for pk, row in state.items() if not row.pop("_deleted")}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[SourceModel, list, Path]:
    staging = tmp_path_factory.mktemp("staging")
    model = SourceModel(WorkloadSpec(tables=2, rows=400, waves=2), staging)
    waves = [model.full_load(), model.cdc_wave(), model.cdc_wave()]
    return model, waves, staging


def test_replaying_the_files_gives_the_models_expected_table(generated) -> None:
    model, waves, staging = generated
    for index, table in enumerate(model.spec.table_names):
        keys = [key for wave in waves for key in wave[index].keys]
        replayed = replay(staging, keys)
        expected = model.expected(table).to_pylist()
        assert [row[KEY] for row in expected] == sorted(replayed)
        assert expected == [replayed[row[KEY]] for row in expected]


def test_a_wave_holds_the_configured_changes_and_late_rows(generated) -> None:
    _model, waves, staging = generated
    first, second = (pq.read_table(staging / key).to_pylist() for key in waves[1][0].keys)
    ops = [row[OP] for row in first + second]
    # 10% updates (+5% of them updated twice, +5% with a late stale copy), 2% deletes, 5% inserts of 400 rows
    assert ops.count("I") == 20
    assert ops.count("D") == 8
    assert ops.count("U") == 40 + 2 + 2
    newest_in_first = {row[KEY]: row[ORDERING] for row in first}
    late = [row for row in second if row[KEY] in newest_in_first and row[ORDERING] < newest_in_first[row[KEY]]]
    assert len(late) == 2  # the second file lands later but holds older changes for these keys
    assert waves[1][0].change_rows == len(first) + len(second)


def test_full_load_has_no_op_column_and_the_expected_schema(generated) -> None:
    model, waves, staging = generated
    load = pq.read_table(staging / waves[0][0].keys[0])
    assert OP not in load.column_names
    assert load.schema.equals(SCHEMA_ARROW)
    assert load.num_rows == 400
    assert model.expected("table_1").num_rows == 400 + 2 * (20 - 8)


def test_same_seed_same_files(tmp_path: Path) -> None:
    def files(root: Path) -> list[bytes]:
        model = SourceModel(WorkloadSpec(tables=1, rows=50, waves=1), root)
        keys = [key for wave in (model.full_load(), model.cdc_wave()) for key in wave[0].keys]
        return [pq.read_table(root / key).to_pylist() for key in keys]

    assert files(tmp_path / "a") == files(tmp_path / "b")

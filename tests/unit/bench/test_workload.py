"""The generator's files replayed in plain Python agree with its model; the model's waves are what they claim."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from bench.workload import (
    KEY,
    OP,
    ORDERING,
    RECENT,
    SCHEMA_ARROW,
    UNIFORM,
    SourceModel,
    WorkloadSpec,
    changed_keys,
)


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


def test_the_default_workload_is_uniform_and_an_unknown_skew_is_refused() -> None:
    assert WorkloadSpec().skew == UNIFORM
    with pytest.raises(ValueError, match="skew must be one of uniform, recent, got 'hot'"):
        WorkloadSpec(skew="hot")
    with pytest.raises(ValueError, match="hot_fraction"):
        WorkloadSpec(skew=RECENT, hot_fraction=0)


def test_recent_skew_puts_the_hot_share_of_changes_on_the_newest_keys() -> None:
    spec = WorkloadSpec(rows=1_000, skew=RECENT)  # newest 10% = keys 901..1000 take 80% of the changes
    live = np.arange(1, 1_001)
    keys = changed_keys(np.random.default_rng(3), live, 120, spec)
    assert len(set(keys.tolist())) == 120
    assert set(keys.tolist()) <= set(live.tolist())
    assert int((keys > 900).sum()) == 96  # round(120 * 0.8)
    assert int((keys <= 900).sum()) == 24
    assert not np.all(np.diff(keys) > 0)
    # a hot set smaller than its share: all of it, the rest from the older keys
    small_hot = changed_keys(np.random.default_rng(3), live, 120, replace(spec, hot_fraction=0.05))
    assert int((small_hot > 950).sum()) == 50
    assert len(set(small_hot.tolist())) == 120
    # too few older keys: the hot set gives the rest
    few = np.arange(1, 21)
    assert sorted(changed_keys(np.random.default_rng(3), few, 20, spec).tolist()) == few.tolist()
    # uniform: the same draw as before the skew option existed (same seed, same bytes)
    uniform = changed_keys(np.random.default_rng(3), live, 120, WorkloadSpec())
    assert uniform.tolist() == np.random.default_rng(3).choice(live, 120, replace=False).tolist()


def test_a_recent_skew_workload_replays_to_its_model_with_changes_on_recent_keys(tmp_path: Path) -> None:
    model = SourceModel(WorkloadSpec(tables=1, rows=1_000, waves=2, skew=RECENT), tmp_path)
    waves = [model.full_load(), model.cdc_wave(), model.cdc_wave()]
    table = model.spec.table_names[0]
    replayed = replay(tmp_path, [key for wave in waves for key in wave[0].keys])
    expected = model.expected(table).to_pylist()
    assert expected == [replayed[row[KEY]] for row in expected]
    assert len(replayed) == len(expected)
    first, second = (pq.read_table(tmp_path / key).to_pylist() for key in waves[1][0].keys)
    changed = {row[KEY] for row in first + second if row[OP] in ("U", "D")}
    assert len(changed) == 100 + 20  # 10% updates, 2% deletes of 1,000 rows
    assert sum(key > 900 for key in changed) == 96

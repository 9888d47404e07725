"""The fleet generator: class shares, partitions, skipped tables, files delivered twice, late updates,
hot partitions, and files that replay to the model's expected tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from bench.__main__ import parser
from bench.contenders.odp import OdpFileProcessor
from bench.fleet import (
    DAY_COLUMN,
    DIMENSION,
    DIMENSION_ZIPF,
    EVENT,
    FACT,
    FleetModel,
    FleetSpec,
    class_counts,
    parse_groups,
    split_into_row_files,
    workload_summary,
)
from bench.runner import make_contender
from bench.workload import KEY, OP, ORDERING

REDELIVERED = "-redelivered.parquet"


@pytest.fixture(scope="module")
def fleet_run(tmp_path_factory: pytest.TempPathFactory):
    """40 tables x 600 rows, 5 waves, changes of 2% to 4% a wave (more rows per wave than the default's
    0.1% to 1% of 600 would give, so the shares below are measured on enough rows)."""
    staging = tmp_path_factory.mktemp("fleet")
    spec = FleetSpec(groups=((30, 600), (10, 900)), waves=5, min_change_fraction=0.02, max_change_fraction=0.04)
    model = FleetModel(spec, staging)
    waves = [model.full_load()] + [model.cdc_wave() for _ in range(spec.waves)]
    return spec, model, waves, staging


def rows_of(staging: Path, key: str) -> list[dict]:
    return pq.read_table(staging / key).to_pylist()


def test_class_shares_per_size_group_and_the_default_fleet() -> None:
    # 35% fact, 30% dimension, 15% zipf dimension, 20% event; largest remainders first
    assert class_counts(28) == {FACT: 10, DIMENSION: 8, DIMENSION_ZIPF: 4, EVENT: 6}
    assert class_counts(8) == {FACT: 3, DIMENSION: 2, DIMENSION_ZIPF: 1, EVENT: 2}
    assert class_counts(3) == {FACT: 1, DIMENSION: 1, DIMENSION_ZIPF: 0, EVENT: 1}
    assert class_counts(1) == {FACT: 1, DIMENSION: 0, DIMENSION_ZIPF: 0, EVENT: 0}
    fleet = FleetSpec().fleet
    assert len(fleet) == 40
    assert [(table.rows, table.klass) for table in fleet if table.rows == 10_000_000] == [(10_000_000, FACT)]
    assert sum(table.rows == 10_000 for table in fleet) == 28
    assert fleet[0].name == "fact_10k_01"
    assert len({table.name for table in fleet}) == 40


def test_partitions_fact_and_event_by_day_dimensions_not(fleet_run) -> None:
    spec, _model, waves, staging = fleet_run
    for table in spec.fleet:
        assert table.partition == (DAY_COLUMN if table.klass in (FACT, EVENT) else None)
    by_name = {item.table: item for item in waves[0]}
    fact = next(table for table in spec.fleet if table.klass == FACT)
    load = pq.read_table(staging / by_name[fact.name].keys[0])
    days = load.column(DAY_COLUMN).to_numpy()
    keys = load.column(KEY).to_numpy()
    assert np.all(np.diff(days[np.argsort(keys)]) >= 0)  # keys grow with time
    assert len(set(days.tolist())) == spec.history_days
    # inserts land in the wave's day: the newest partition
    item = next(item for item in waves[3] if item.table.startswith(FACT))
    inserted = [row for key in item.keys for row in rows_of(staging, key) if row[OP] == "I"]
    assert inserted
    assert {row[DAY_COLUMN] for row in inserted} == {20261104}


def test_thirty_percent_of_the_tables_get_no_file_in_each_wave(fleet_run) -> None:
    spec, model, waves, _staging = fleet_run
    for wave in waves[1:]:
        with_files = {item.table for item in wave if item.keys}
        assert len(with_files) == 28  # 40 - round(0.3 x 40)
        assert set(model.skipped[wave[0].wave]) == set(spec.table_names) - with_files


def test_one_percent_of_the_files_are_delivered_twice_after_the_original(fleet_run) -> None:
    _spec, _model, waves, staging = fleet_run
    keys = [(item, key) for wave in waves[1:] for item in wave for key in item.keys]
    copies = [(item, key) for item, key in keys if key.endswith(REDELIVERED)]
    originals = len(keys) - len(copies)
    assert originals > 200
    assert len(copies) == int(originals * 0.01)
    for item, copy in copies:
        original = copy.removesuffix(REDELIVERED) + ".parquet"
        assert item.keys.index(original) < item.keys.index(copy)
        assert (staging / copy).read_bytes() == (staging / original).read_bytes()
        assert item.change_bytes == sum((staging / key).stat().st_size for key in item.keys if key != copy)


def test_five_percent_of_the_updates_land_late_and_the_mix_follows_the_class(fleet_run) -> None:
    spec, _model, waves, staging = fleet_run
    klass = {table.name: table.klass for table in spec.fleet}
    updates = late = 0
    ops: dict[str, dict[str, int]] = {}
    for wave in waves[1:]:
        for item in wave:
            seen: dict[int, str] = {}
            for key in item.keys:
                if key.endswith(REDELIVERED):
                    continue
                for row in rows_of(staging, key):
                    counts = ops.setdefault(klass[item.table], {"I": 0, "U": 0, "D": 0})
                    if row[OP] == "U" and row[KEY] in seen and row[ORDERING] < seen[row[KEY]]:
                        late += 1  # an older version landing after the final one
                        continue
                    counts[row[OP]] += 1
                    updates += row[OP] == "U"
                    seen[row[KEY]] = max(seen.get(row[KEY], ""), row[ORDERING])
    assert updates > 500
    assert late == int(updates * 0.05)
    assert ops[EVENT]["U"] == ops[EVENT]["D"] == 0
    for name, (inserts, updated, deleted) in {FACT: (0.75, 0.20, 0.05), DIMENSION: (0.10, 0.85, 0.05)}.items():
        total = sum(ops[name].values())
        assert ops[name]["I"] / total == pytest.approx(inserts, abs=0.03)
        assert ops[name]["U"] / total == pytest.approx(updated, abs=0.03)
        assert ops[name]["D"] / total == pytest.approx(deleted, abs=0.02)


def test_fact_updates_and_deletes_hit_the_newest_partitions(fleet_run) -> None:
    spec, _model, waves, staging = fleet_run
    facts = {table.name for table in spec.fleet if table.klass == FACT}
    days = {
        item.table: set(pq.read_table(staging / item.keys[0]).column(DAY_COLUMN).to_pylist())
        for item in waves[0]
        if item.table in facts
    }
    hit = newest = 0
    for wave in waves[1:]:
        for item in wave:
            if item.table not in facts:
                continue
            hot = set(sorted(days[item.table])[-3:])  # the table's newest 3 partitions before the wave
            for key in item.keys:
                for row in rows_of(staging, key):
                    if row[OP] in ("U", "D"):
                        hit += 1
                        newest += row[DAY_COLUMN] in hot
                    else:
                        days[item.table].add(row[DAY_COLUMN])
    assert hit > 50
    assert newest / hit >= 0.97


def test_the_zipf_dimension_changes_its_low_keys_far_more_often(fleet_run) -> None:
    spec, _model, waves, staging = fleet_run
    zipf = {table.name for table in spec.fleet if table.klass == DIMENSION_ZIPF}
    uniform = {table.name for table in spec.fleet if table.klass == DIMENSION}

    def changed(names: set[str]) -> list[int]:
        return [
            row[KEY]
            for wave in waves[1:]
            for item in wave
            if item.table in names
            for key in item.keys
            for row in rows_of(staging, key)
            if row[OP] in ("U", "D")
        ]

    assert np.median(changed(zipf)) < 150 < np.median(changed(uniform))


def test_replaying_the_fleet_files_gives_the_models_tables(fleet_run) -> None:
    spec, model, waves, staging = fleet_run
    for name in spec.table_names[::7]:
        keys = [key for wave in waves for item in wave if item.table == name for key in item.keys]
        rows = [(row[ORDERING], order, row) for order, key in enumerate(keys) for row in rows_of(staging, key)]
        state: dict[int, dict] = {}
        for _ordering, _order, row in sorted(rows, key=lambda change: change[:2]):  # newest change last
            state[row[KEY]] = row
        live = sorted((row for row in state.values() if row.pop(OP, "I") != "D"), key=lambda row: row[KEY])
        assert live == model.expected(name).to_pylist(), name


def test_one_wave_with_exact_changes_in_one_file_then_split_into_one_row_files(tmp_path: Path) -> None:
    model = FleetModel(FleetSpec(groups=((1, 500),), waves=1), tmp_path)
    model.full_load()
    (item,) = model.wave(1, {"fact_500_01": 40}, single_file=True, late=False)
    assert len(item.keys) == 1
    rows = rows_of(tmp_path, item.keys[0])
    assert len(rows) == item.change_rows == 40
    split = split_into_row_files(tmp_path, item)
    assert len(split.keys) == 40
    assert split.keys == sorted(split.keys)
    assert [row for key in split.keys for row in rows_of(tmp_path, key)] == rows
    assert model.skipped[1] == []


def test_fleet_groups_and_settings_are_checked() -> None:
    assert parse_groups("28x10000, 8x200_000") == ((28, 10_000), (8, 200_000))
    with pytest.raises(ValueError, match="fleet group '28' is not <tables>x<rows>"):
        parse_groups("28")
    with pytest.raises(ValueError, match="0 < min <= max <= 1"):
        FleetSpec(min_change_fraction=0.1, max_change_fraction=0.01)
    with pytest.raises(ValueError, match="sum to 1"):
        FleetSpec(mix=(0.5, 0.2, 0.2))


def test_merge_on_read_names_fleet_classes_and_is_refused_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    args = parser().parse_args(["fleet", "--merge-on-read", "dimension, DIMENSION_ZIPF,dimension"])
    assert args.merge_on_read == (DIMENSION, DIMENSION_ZIPF)
    assert parser().parse_args(["fleet", "--small"]).merge_on_read == ()  # the default: every table COPY_ON_WRITE
    refusals = {
        "dimensions": "unknown fleet class 'dimensions'; choose from fact, dimension, dimension_zipf, event",
        " , ": "name at least one fleet class: fact, dimension, dimension_zipf, event",
    }
    for value, message in refusals.items():
        with pytest.raises(SystemExit) as stopped:
            parser().parse_args(["fleet", "--merge-on-read", value])
        assert stopped.value.code == 2
        assert f"argument --merge-on-read: {message}" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown fleet class 'facts'"):
        FleetSpec(merge_on_read=("facts",))


def test_merge_on_read_from_keeps_the_classes_smaller_tables_copy_on_write(tmp_path: Path) -> None:
    """``--merge-on-read-from``: ODP's advice names MERGE_ON_READ only for a table whose upserts rewrite 4 MiB, which a
    10,000-row table never does; the fleet can follow it for its small tables."""
    args = parser().parse_args(["fleet", "--merge-on-read", "fact,dimension", "--merge-on-read-from", "200000"])
    assert (args.merge_on_read, args.merge_on_read_from) == ((FACT, DIMENSION), 200_000)
    assert parser().parse_args(["fleet"]).merge_on_read_from == 0  # the default: every size of the classes
    spec = FleetSpec(groups=((2, 1_000), (2, 5_000)), merge_on_read=(FACT, DIMENSION), merge_on_read_from=5_000)
    assert spec.table_types == {
        "fact_1k_01": "COPY_ON_WRITE",
        "dimension_1k_02": "COPY_ON_WRITE",
        "fact_5k_03": "MERGE_ON_READ",
        "dimension_5k_04": "MERGE_ON_READ",
    }
    summary = workload_summary(spec, FleetModel(spec, tmp_path))
    assert summary["odp_merge_on_read_from_rows"] == 5_000
    with pytest.raises(ValueError, match="merge_on_read_from must be >= 0"):
        FleetSpec(merge_on_read=(FACT,), merge_on_read_from=-1)


def test_merge_on_read_classes_set_odp_s_table_type_per_table_and_the_json_records_it(tmp_path: Path) -> None:
    names = ["fact_2k_01", "dimension_2k_02", "dimension_zipf_2k_03", "event_2k_04"]
    assert FleetSpec(groups=((4, 2_000),)).table_types == dict.fromkeys(names, "COPY_ON_WRITE")
    spec = FleetSpec(groups=((4, 2_000),), merge_on_read=(DIMENSION,))
    types = dict.fromkeys(names, "COPY_ON_WRITE") | {"dimension_2k_02": "MERGE_ON_READ"}
    assert spec.table_types == types
    summary = workload_summary(spec, FleetModel(spec, tmp_path))
    assert summary["odp_merge_on_read_classes"] == [DIMENSION]
    assert {table["name"]: table["odp_table_type"] for table in summary["tables"]} == types
    odp, default = make_contender("odp", tmp_path, table_types=spec.table_types), make_contender("odp", tmp_path)
    assert isinstance(odp, OdpFileProcessor)
    assert isinstance(default, OdpFileProcessor)
    assert {name: odp.table_type_of(name) for name in names} == types  # what its wave spec gives odp_job per table
    assert default.table_type_of("dimension_2k_02") == "COPY_ON_WRITE"

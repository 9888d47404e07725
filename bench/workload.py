"""A deterministic generator of AWS DMS Parquet CDC for taxi-trip tables, and its model of the source.

Every table starts with a full load (``LOAD00000001.parquet``, no ``Op`` column, as DMS writes it),
then each CDC wave writes two files with an ``Op`` column (I/U/D) and full row images:

- file 1: the inserts, the updates, the *final* version of the late-change keys, and the *first*
  of two updates of the double-update keys;
- file 2 (lands after file 1): the deletes, a *stale* version of the late-change keys (its
  ``cdc_timestamp_seq`` is older than the one already in file 1) and the second update of the
  double-update keys.

So a correct consumer must order by ``cdc_timestamp_seq``, not by file arrival, and must keep the last
of several changes per key. Late changes are within a wave (files landing out of order); a change is
never older than one already applied in an earlier wave.

The model (:class:`SourceModel`) is the source database: the expected state of every table after
every wave is computed from it in numpy/pyarrow alone, never from what a contender wrote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SOURCE = "taxi_trips_dms"
SCHEMA = "taxi_trips"
KEY = "pk_id"
ORDERING = "cdc_timestamp_seq"
PARTITION = "vendorid"
OP = "Op"
FIRST_DAY = date(2026, 11, 1)
EPOCH_US = 1_761_955_200_000_000  # 2025-11-01T00:00:00Z in microseconds

TIMESTAMP = pa.timestamp("us", tz="UTC")
COLUMNS: dict[str, pa.DataType] = {
    "pk_id": pa.int64(),
    "vendorid": pa.int64(),
    "tpep_pickup_datetime": TIMESTAMP,
    "tpep_dropoff_datetime": TIMESTAMP,
    "passenger_count": pa.float64(),
    "trip_distance": pa.float64(),
    "ratecodeid": pa.float64(),
    "store_and_fwd_flag": pa.string(),
    "pulocationid": pa.int64(),
    "dolocationid": pa.int64(),
    "payment_type": pa.int64(),
    "fare_amount": pa.float64(),
    "extra": pa.float64(),
    "mta_tax": pa.float64(),
    "tip_amount": pa.float64(),
    "tolls_amount": pa.float64(),
    "improvement_surcharge": pa.float64(),
    "total_amount": pa.float64(),
    "congestion_surcharge": pa.float64(),
    "airport_fee": pa.float64(),
    "cdc_timestamp_seq": pa.string(),
}
SCHEMA_ARROW = pa.schema([pa.field(name, kind) for name, kind in COLUMNS.items()])
CDC_SCHEMA_ARROW = pa.schema([pa.field(OP, pa.string()), *SCHEMA_ARROW])
UNIFORM = "uniform"
RECENT = "recent"
SKEWS = (UNIFORM, RECENT)

# Columns an update changes (the rest of the row image is carried over unchanged).
UPDATED_COLUMNS = ("tpep_dropoff_datetime", "passenger_count", "fare_amount", "tip_amount", "total_amount")


@dataclass(frozen=True)
class WorkloadSpec:
    """T tables x R initial rows, then W CDC waves of u% updates, d% deletes, i% inserts (of R).

    ``skew``: which live keys the updates and deletes of a wave hit. ``uniform``: any live key alike.
    ``recent``: ``hot_share`` of them hit the newest ``hot_fraction`` of the live keys (keys grow with
    insertion, so the highest are the most recent), the rest any older key, as OLTP tables change
    (recent orders, open trips). Inserts are always new keys.
    """

    tables: int = 18
    rows: int = 200_000
    waves: int = 3
    update_fraction: float = 0.10
    delete_fraction: float = 0.02
    insert_fraction: float = 0.05
    late_fraction: float = 0.05  # of the updates: a stale version lands after the final one
    double_fraction: float = 0.05  # of the updates: two updates in one wave, in order
    seed: int = 7
    first_table: int = 1
    skew: str = UNIFORM
    hot_fraction: float = 0.10  # skew=recent: the newest 10% of the live keys ...
    hot_share: float = 0.80  # ... take 80% of the updates and deletes

    def __post_init__(self) -> None:
        if self.tables < 1 or self.rows < 1 or self.waves < 0:
            raise ValueError("tables and rows must be at least 1, waves at least 0")
        if self.update_fraction + self.delete_fraction > 1:
            raise ValueError("updates and deletes together cannot exceed the table")
        if self.skew not in SKEWS:
            raise ValueError(f"skew must be one of {', '.join(SKEWS)}, got {self.skew!r}")
        if not (0 < self.hot_fraction <= 1 and 0 <= self.hot_share <= 1):
            raise ValueError("hot_fraction must be in (0, 1] and hot_share in [0, 1]")

    @property
    def table_names(self) -> list[str]:
        return [f"table_{index}" for index in range(self.first_table, self.first_table + self.tables)]

    def changes_per_wave(self) -> tuple[int, int, int]:
        """(updates, deletes, inserts) per table and wave."""
        return (
            round(self.rows * self.update_fraction),
            round(self.rows * self.delete_fraction),
            round(self.rows * self.insert_fraction),
        )


def table_id(table: str) -> str:
    return f"{SOURCE}.{SCHEMA}.{table}"


def wave_folder(wave: int) -> str:
    """``<yyyy>/<mm>/<dd>``: DMS date partitioning, one day per wave (wave 0 is the full load)."""
    return (FIRST_DAY + timedelta(days=wave)).strftime("%Y/%m/%d")


def staging_prefix(table: str) -> str:
    return f"{SOURCE}/{SCHEMA}/{table}"


def ordering_value(wave: int, counter: np.ndarray) -> list[str]:
    """DMS-like 35-digit ``cdc_timestamp_seq``: the day of the wave, then a change counter."""
    day = (FIRST_DAY + timedelta(days=wave)).strftime("%Y%m%d")
    return [f"{day}{wave:06d}{value:021d}" for value in counter.tolist()]


@dataclass
class WaveFiles:
    """The staging keys one table got in one wave, and how many change rows they hold.

    ``partition``: the table's partition column (``None``: not partitioned); ``columns``: its data columns;
    ``change_bytes``: bytes of the landed files that hold the changes (a file delivered twice counts once).
    """

    table: str
    wave: int
    keys: list[str]
    change_rows: int
    partition: str | None = PARTITION
    columns: tuple[str, ...] = tuple(SCHEMA_ARROW.names)
    change_bytes: int = 0


@dataclass
class TableModel:
    """One source table: columns as numpy arrays indexed by ``pk_id`` (position = pk - 1), plus liveness."""

    name: str
    rng: np.random.Generator
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    alive: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    schema: pa.Schema = SCHEMA_ARROW

    @property
    def size(self) -> int:
        return int(self.alive.size)

    def live_keys(self) -> np.ndarray:
        return np.flatnonzero(self.alive) + 1

    def rows_for(self, keys: np.ndarray) -> dict[str, np.ndarray]:
        positions = keys - 1
        return {name: values[positions].copy() for name, values in self.columns.items()}

    def expected(self) -> pa.Table:
        """The table as the source has it now: live rows, sorted by key."""
        return to_arrow({name: values[self.alive] for name, values in self.columns.items()}, self.schema)


def to_arrow(columns: dict[str, np.ndarray], schema: pa.Schema) -> pa.Table:
    arrays = []
    for schema_field in schema:
        values = columns[schema_field.name]
        if schema_field.type == TIMESTAMP:
            arrays.append(pa.array(values.astype("int64"), pa.int64()).cast(TIMESTAMP))
        else:
            arrays.append(pa.array(values, schema_field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def new_rows(rng: np.random.Generator, first_key: int, count: int) -> dict[str, np.ndarray]:
    """``count`` taxi trips with keys ``first_key``..; ``cdc_timestamp_seq`` is set by the caller."""
    pickup = EPOCH_US + rng.integers(0, 300 * 86_400, count, dtype=np.int64) * 1_000_000
    fare = np.round(rng.uniform(3, 80, count), 2)
    tip = np.round(fare * rng.uniform(0, 0.3, count), 2)
    tolls = np.where(rng.random(count) < 0.1, 6.55, 0.0)
    return {
        "pk_id": np.arange(first_key, first_key + count, dtype=np.int64),
        "vendorid": rng.integers(1, 3, count, dtype=np.int64),
        "tpep_pickup_datetime": pickup,
        "tpep_dropoff_datetime": pickup + rng.integers(120, 3600, count, dtype=np.int64) * 1_000_000,
        "passenger_count": rng.integers(1, 6, count).astype(np.float64),
        "trip_distance": np.round(rng.uniform(0.3, 25, count), 2),
        "ratecodeid": rng.integers(1, 6, count).astype(np.float64),
        "store_and_fwd_flag": np.where(rng.random(count) < 0.02, "Y", "N").astype(object),
        "pulocationid": rng.integers(1, 266, count, dtype=np.int64),
        "dolocationid": rng.integers(1, 266, count, dtype=np.int64),
        "payment_type": rng.integers(1, 5, count, dtype=np.int64),
        "fare_amount": fare,
        "extra": rng.choice(np.array([0.0, 0.5, 1.0, 2.5]), count),
        "mta_tax": np.full(count, 0.5),
        "tip_amount": tip,
        "tolls_amount": tolls,
        "improvement_surcharge": np.full(count, 1.0),
        "total_amount": np.round(fare + tip + tolls + 1.5, 2),
        "congestion_surcharge": np.where(rng.random(count) < 0.7, 2.5, 0.0),
        "airport_fee": np.where(rng.random(count) < 0.08, 1.75, 0.0),
        "cdc_timestamp_seq": np.empty(count, dtype=object),
    }


def changed_keys(rng: np.random.Generator, live: np.ndarray, count: int, spec: WorkloadSpec) -> np.ndarray:
    """``count`` distinct live keys a wave changes, drawn as ``spec.skew`` says (``live`` sorted ascending).

    recent: ``hot_share`` of them from the newest ``hot_fraction`` of ``live`` (as many as it holds), the
    rest from the older keys; shuffled, so the caller's split into updates and deletes is random.
    """
    if spec.skew == UNIFORM:
        return rng.choice(live, count, replace=False)
    hot_size = max(1, math.ceil(live.size * spec.hot_fraction))
    hot, cold = live[live.size - hot_size :], live[: live.size - hot_size]
    from_hot = min(round(count * spec.hot_share), hot.size)
    from_hot = max(from_hot, count - cold.size)  # too few older keys: take the rest from the hot set
    picked = np.concatenate(
        [rng.choice(hot, from_hot, replace=False), rng.choice(cold, count - from_hot, replace=False)]
    )
    return rng.permutation(picked)


def updated(rng: np.random.Generator, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """New row images for ``rows``: a few columns change, the key and partition never do."""
    count = rows["pk_id"].size
    out = {name: values.copy() for name, values in rows.items()}
    fare = np.round(rng.uniform(3, 80, count), 2)
    tip = np.round(fare * rng.uniform(0, 0.3, count), 2)
    out["fare_amount"] = fare
    out["tip_amount"] = tip
    out["total_amount"] = np.round(fare + tip + rows["tolls_amount"] + 1.5, 2)
    out["passenger_count"] = rng.integers(1, 6, count).astype(np.float64)
    out["tpep_dropoff_datetime"] = rows["tpep_pickup_datetime"] + rng.integers(120, 3600, count) * 1_000_000
    return out


def concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def with_op(rows: dict[str, np.ndarray], op: str) -> dict[str, np.ndarray]:
    return {OP: np.full(rows["pk_id"].size, op, dtype=object), **rows}


def stamped(rows: dict[str, np.ndarray], wave: int, counters: np.ndarray) -> dict[str, np.ndarray]:
    out = dict(rows)
    out[ORDERING] = np.array(ordering_value(wave, counters), dtype=object)
    return out


@dataclass(frozen=True)
class Changes:
    """One table's changes in one wave: the keys updated and deleted (sorted), how many rows are inserted,
    how many of the updates get a late stale version and how many are updated twice."""

    update_keys: np.ndarray
    delete_keys: np.ndarray
    n_insert: int
    n_late: int
    n_double: int


class SourceModel:
    """The source database of the benchmark: writes the staging files and knows the expected tables."""

    def __init__(self, spec: WorkloadSpec, staging_root: Path) -> None:
        self.spec = spec
        self.staging_root = staging_root
        self.tables: dict[str, TableModel] = {
            name: TableModel(name=name, rng=np.random.default_rng([spec.seed, index]))
            for index, name in enumerate(spec.table_names, start=spec.first_table)
        }
        self.waves_written = -1

    def expected(self, table: str) -> pa.Table:
        return self.tables[table].expected()

    def _write(self, table: str, wave: int, file_name: str, columns: dict[str, np.ndarray], schema: pa.Schema) -> str:
        key = f"{staging_prefix(table)}/{wave_folder(wave)}/{file_name}"
        path = self.staging_root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(to_arrow(columns, schema), path, compression="snappy")
        return key

    def full_load(self) -> list[WaveFiles]:
        """Wave 0: ``rows`` rows per table in one ``LOAD00000001.parquet``."""
        out = []
        for name, model in self.tables.items():
            rows = new_rows(model.rng, 1, self.spec.rows)
            rows = stamped(rows, 0, np.arange(1, self.spec.rows + 1))
            model.columns = rows
            model.alive = np.ones(self.spec.rows, dtype=bool)
            key = self._write(name, 0, "LOAD00000001.parquet", rows, SCHEMA_ARROW)
            size = (self.staging_root / key).stat().st_size
            out.append(WaveFiles(name, 0, [key], self.spec.rows, change_bytes=size))
        self.waves_written = 0
        return out

    def cdc_wave(self) -> list[WaveFiles]:
        """The next CDC wave for every table; updates the model to the state after it."""
        wave = self.waves_written + 1
        if wave == 1 and not self.tables[self.spec.table_names[0]].columns:
            raise RuntimeError("write the full load first")
        out = [self._table_wave(name, model, wave) for name, model in self.tables.items()]
        self.waves_written = wave
        return out

    def _table_wave(self, name: str, model: TableModel, wave: int) -> WaveFiles:
        spec = self.spec
        n_update, n_delete, n_insert = spec.changes_per_wave()
        live = model.live_keys()
        n_update = min(n_update, live.size)
        n_delete = min(n_delete, live.size - n_update)
        chosen = changed_keys(model.rng, live, n_update + n_delete, spec)
        update_keys, delete_keys = np.sort(chosen[:n_update]), np.sort(chosen[n_update:])
        n_late = round(n_update * spec.late_fraction)
        n_double = round(n_update * spec.double_fraction)
        return self.write_changes(name, model, wave, Changes(update_keys, delete_keys, n_insert, n_late, n_double))

    def insert_rows(self, model: TableModel, wave: int, count: int) -> dict[str, np.ndarray]:
        """``count`` new rows for ``model`` in ``wave`` (keys after the highest so far)."""
        return new_rows(model.rng, model.size + 1, count)

    def write_changes(self, name: str, model: TableModel, wave: int, changes: Changes) -> WaveFiles:
        """Write one table's wave as two DMS files and move the model to the state after it.

        File one: inserts, final updates, first versions of the doubly updated keys; file two (landing
        later): deletes, ``n_late`` stale versions older than their final in file one, the second
        versions of the ``n_double`` doubly updated keys.
        """
        update_keys, delete_keys, n_insert = changes.update_keys, changes.delete_keys, changes.n_insert
        n_late, n_double = changes.n_late, changes.n_double
        rng = model.rng
        before = model.rows_for(update_keys)
        stale_late = updated(rng, {k: v[:n_late] for k, v in before.items()})
        first_double = updated(rng, {k: v[n_late : n_late + n_double] for k, v in before.items()})
        final = updated(rng, before)  # final images of every updated key, in update_keys order
        final_late = {k: v[:n_late] for k, v in final.items()}
        final_double = {k: v[n_late : n_late + n_double] for k, v in final.items()}
        final_single = {k: v[n_late + n_double :] for k, v in final.items()}
        inserts = self.insert_rows(model, wave, n_insert)
        deletes = model.rows_for(delete_keys)

        # Source commit order, which the counters follow: stale and first versions before the finals.
        counter = iter(range(1, 10**9))

        def stamp(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            count = rows["pk_id"].size
            return stamped(rows, wave, np.array([next(counter) for _ in range(count)], dtype=np.int64))

        stale_late, first_double = stamp(stale_late), stamp(first_double)
        inserts, final_single, deletes = stamp(inserts), stamp(final_single), stamp(deletes)
        final_late, final_double = stamp(final_late), stamp(final_double)

        file_one = concat(
            [with_op(inserts, "I"), with_op(final_single, "U"), with_op(final_late, "U"), with_op(first_double, "U")]
        )
        file_two = concat([with_op(deletes, "D"), with_op(stale_late, "U"), with_op(final_double, "U")])
        day = (FIRST_DAY + timedelta(days=wave)).strftime("%Y%m%d")
        cdc_schema = pa.schema([pa.field(OP, pa.string()), *model.schema])
        files = ((f"{day}-120000001.parquet", file_one), (f"{day}-120500002.parquet", file_two))
        # a file without rows is not written (an append-only table's wave has no second file)
        keys = [self._write(name, wave, file, rows, cdc_schema) for file, rows in files if rows["pk_id"].size]

        # The source after the wave.
        model.columns = concat([model.columns, inserts])
        model.alive = np.concatenate([model.alive, np.ones(n_insert, dtype=bool)])
        for rows in (final_single, final_late, final_double):
            positions = rows["pk_id"] - 1
            for column, values in rows.items():
                model.columns[column][positions] = values
        model.alive[delete_keys - 1] = False
        return WaveFiles(
            name,
            wave,
            keys,
            int(file_one["pk_id"].size + file_two["pk_id"].size),
            columns=tuple(model.schema.names),
            change_bytes=sum((self.staging_root / key).stat().st_size for key in keys),
        )

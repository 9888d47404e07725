"""The fleet workload: tables of very different sizes and kinds in one run, changing at real rates.

Beside ``bench.workload`` (equal tables, 17% of the rows per wave: the worst case), a fleet has
- **fact** tables: partitioned by day (``trip_day``), keys growing with time, ``hot_share`` (99%) of
  the updates and deletes in the newest ``hot_days`` partitions; 75% inserts, 20% updates, 5% deletes;
- **dimension** tables: not partitioned, uniform keys, 10% / 85% / 5%; the **dimension_zipf** variant
  picks the changed keys with a Zipf law over the key (key 1 the most often);
- **event** tables: partitioned by day, append-only (inserts only).

Per wave each table changes a fraction drawn uniformly from ``[min_change_fraction, max_change_fraction]``
(0.1% to 1%) of its live rows; ``skip_fraction`` (30%) of the tables get no file in a wave; of the
updates, ``late_fraction`` (5%) get a stale version that lands after the final one (as in
``bench.workload``); ``duplicate_fraction`` (1%) of a run's files are delivered twice (a copy under a
new name, landing after the original within the same wave, as DMS re-sends a file after a task
restart). The model is ``bench.workload``'s (``SourceModel.write_changes``): the expected state of
every table is computed from it, never from a contender.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.workload import (
    EPOCH_US,
    FIRST_DAY,
    SCHEMA_ARROW,
    Changes,
    SourceModel,
    TableModel,
    WaveFiles,
    new_rows,
    stamped,
)
from odp.config.models import TableType

DAY_COLUMN = "trip_day"  # yyyymmdd of the trip: a fact or event table's partition
FLEET_SCHEMA = pa.schema([*SCHEMA_ARROW, pa.field(DAY_COLUMN, pa.int64())])
FACT, DIMENSION, DIMENSION_ZIPF, EVENT = "fact", "dimension", "dimension_zipf", "event"
CLASSES = (FACT, DIMENSION, DIMENSION_ZIPF, EVENT)
# Share of a size group's tables per class (largest remainder per group; the largest group member is a fact).
CLASS_SHARES = {FACT: 0.35, DIMENSION: 0.30, DIMENSION_ZIPF: 0.15, EVENT: 0.20}
# (inserts, updates, deletes) of a wave's changes per class.
CLASS_MIX = {
    FACT: (0.75, 0.20, 0.05),
    DIMENSION: (0.10, 0.85, 0.05),
    DIMENSION_ZIPF: (0.10, 0.85, 0.05),
    EVENT: (1.0, 0.0, 0.0),
}
PARTITIONED = {FACT: DAY_COLUMN, DIMENSION: None, DIMENSION_ZIPF: None, EVENT: DAY_COLUMN}
DEFAULT_GROUPS = ((28, 10_000), (8, 200_000), (3, 2_000_000), (1, 10_000_000))
SMALL_GROUPS = ((4, 2_000),)
DAY_US = 86_400 * 1_000_000


def parse_groups(text: str) -> tuple[tuple[int, int], ...]:
    """``28x10000,8x200000`` -> ((28, 10000), (8, 200000)).

    Raises:
        ValueError: a part is not ``<tables>x<rows>`` with both at least 1.
    """
    groups = []
    for part in text.split(","):
        tables, sep, rows = part.strip().lower().replace("_", "").partition("x")
        if not sep or not tables.isdigit() or not rows.isdigit() or int(tables) < 1 or int(rows) < 1:
            raise ValueError(f"fleet group {part.strip()!r} is not <tables>x<rows>, e.g. 28x10000")
        groups.append((int(tables), int(rows)))
    return tuple(groups)


def check_classes(classes: tuple[str, ...]) -> None:
    """Every name in ``classes`` is a fleet class.

    Raises:
        ValueError: a name is not one (the message names it and the classes).
    """
    unknown = [name for name in classes if name not in CLASSES]
    if unknown:
        raise ValueError(f"unknown fleet class {', '.join(map(repr, unknown))}; choose from {', '.join(CLASSES)}")


def parse_classes(text: str) -> tuple[str, ...]:
    """``dimension,dimension_zipf`` -> ("dimension", "dimension_zipf") (each once, in the given order).

    Raises:
        ValueError: no class named, or a name is not a fleet class.
    """
    classes = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    if not classes:
        raise ValueError(f"name at least one fleet class: {', '.join(CLASSES)}")
    check_classes(classes)
    return classes


def rows_label(rows: int) -> str:
    if rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}m"
    if rows % 1_000 == 0:
        return f"{rows // 1_000}k"
    return str(rows)


def class_counts(tables: int) -> dict[str, int]:
    """Tables per class in a group of ``tables``: CLASS_SHARES by largest remainder (ties: CLASSES order)."""
    exact = {klass: tables * share for klass, share in CLASS_SHARES.items()}
    counts = {klass: math.floor(value) for klass, value in exact.items()}
    by_remainder = sorted(CLASSES, key=lambda klass: (-(exact[klass] - counts[klass]), CLASSES.index(klass)))
    for klass in by_remainder[: tables - sum(counts.values())]:
        counts[klass] += 1
    return counts


@dataclass(frozen=True)
class FleetTable:
    name: str
    klass: str
    rows: int
    index: int
    table_type: TableType = TableType.COPY_ON_WRITE  # ODP's table (the naive rewrite always writes plain Parquet files)

    @property
    def partition(self) -> str | None:
        return PARTITIONED[self.klass]


@dataclass(frozen=True)
class FleetSpec:
    """The fleet of one run (see the module docstring). ``mix``: (inserts, updates, deletes) for every
    class but event, replacing CLASS_MIX (None: CLASS_MIX)."""

    groups: tuple[tuple[int, int], ...] = DEFAULT_GROUPS
    waves: int = 5
    min_change_fraction: float = 0.001
    max_change_fraction: float = 0.01
    skip_fraction: float = 0.30
    duplicate_fraction: float = 0.01
    late_fraction: float = 0.05
    history_days: int = 30
    hot_days: int = 3
    hot_share: float = 0.99
    zipf_exponent: float = 1.1
    mix: tuple[float, float, float] | None = None
    merge_on_read: tuple[str, ...] = ()
    merge_on_read_from: int = 0  # of the merge_on_read classes, only the tables of at least this many rows
    seed: int = 11

    def __post_init__(self) -> None:
        if not self.groups or self.waves < 0:
            raise ValueError("a fleet needs at least one group of tables and waves >= 0")
        if not 0 < self.min_change_fraction <= self.max_change_fraction <= 1:
            raise ValueError("change fractions must satisfy 0 < min <= max <= 1")
        for name in ("skip_fraction", "duplicate_fraction", "late_fraction", "hot_share"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1]")
        if self.mix is not None and (min(self.mix) < 0 or abs(sum(self.mix) - 1) > 1e-9):
            raise ValueError(f"mix (inserts, updates, deletes) must be non-negative and sum to 1, got {self.mix}")
        check_classes(self.merge_on_read)
        if self.merge_on_read_from < 0:
            raise ValueError(f"merge_on_read_from must be >= 0, got {self.merge_on_read_from}")

    @property
    def fleet(self) -> list[FleetTable]:
        out: list[FleetTable] = []
        for tables, rows in self.groups:
            for klass, count in class_counts(tables).items():
                merge_on_read = klass in self.merge_on_read and rows >= self.merge_on_read_from
                table_type = TableType.MERGE_ON_READ if merge_on_read else TableType.COPY_ON_WRITE
                for _ in range(count):
                    index = len(out) + 1
                    out.append(FleetTable(f"{klass}_{rows_label(rows)}_{index:02d}", klass, rows, index, table_type))
        return out

    @property
    def table_types(self) -> dict[str, str]:
        """ODP's table type per table name."""
        return {table.name: table.table_type.value for table in self.fleet}

    def tables_up_to(self, rows: int | None) -> frozenset[str]:
        """The names of the tables of at most ``rows`` rows at their full load (None: none)."""
        return frozenset(table.name for table in self.fleet if rows is not None and table.rows <= rows)

    @property
    def table_names(self) -> list[str]:
        return [table.name for table in self.fleet]

    @property
    def tables(self) -> int:
        return sum(tables for tables, _ in self.groups)

    def class_mix(self, klass: str) -> tuple[float, float, float]:
        if klass == EVENT or self.mix is None:
            return CLASS_MIX[klass]
        return self.mix


class Quota:
    """Whole counts whose running total follows a fraction exactly (carry the remainder): 5% of 7 then of 13
    gives 0 then 1, as 5% of 20 would."""

    def __init__(self, fraction: float) -> None:
        self.fraction = fraction
        self.carry = 0.0

    def take(self, amount: int) -> int:
        exact = amount * self.fraction + self.carry
        whole = math.floor(exact + 1e-9)
        self.carry = exact - whole
        return whole


def day_number(day_index: np.ndarray) -> np.ndarray:
    """Days after FIRST_DAY (negative: before) -> yyyymmdd."""
    offsets, positions = np.unique(day_index, return_inverse=True)  # a few days, many rows
    days = [FIRST_DAY + timedelta(days=int(offset)) for offset in offsets.tolist()]
    numbers = np.array([day.year * 10_000 + day.month * 100 + day.day for day in days], dtype=np.int64)
    return numbers[positions.reshape(-1)]


def dated(rows: dict[str, np.ndarray], rng: np.random.Generator, day_index: np.ndarray) -> dict[str, np.ndarray]:
    """Trips on the given days (offsets from FIRST_DAY): pickup within the day, ``trip_day`` set."""
    count = day_index.size
    first = EPOCH_US + (np.datetime64(FIRST_DAY, "D") - np.datetime64("2025-11-01", "D")).astype(np.int64) * DAY_US
    pickup = first + day_index.astype(np.int64) * DAY_US + rng.integers(0, 86_400, count, dtype=np.int64) * 1_000_000
    out = dict(rows)
    duration = rows["tpep_dropoff_datetime"] - rows["tpep_pickup_datetime"]
    out["tpep_pickup_datetime"] = pickup
    out["tpep_dropoff_datetime"] = pickup + duration
    out[DAY_COLUMN] = day_number(day_index)
    return out


@dataclass
class FleetTableModel(TableModel):
    table: FleetTable | None = None
    schema: pa.Schema = field(default=FLEET_SCHEMA)


class FleetModel(SourceModel):
    """The fleet's source databases: writes the staging files and knows every expected table."""

    def __init__(self, spec: FleetSpec, staging_root: Path) -> None:  # not SourceModel's: no WorkloadSpec
        self.spec = spec  # type: ignore[assignment]
        self.staging_root = staging_root
        self.tables = {
            table.name: FleetTableModel(
                name=table.name, rng=np.random.default_rng([spec.seed, table.index]), table=table
            )
            for table in spec.fleet
        }
        self.waves_written = -1
        self.late = Quota(spec.late_fraction)
        self.duplicates = Quota(spec.duplicate_fraction)
        self.skipped: dict[int, list[str]] = {}  # wave -> tables that got no file
        self.duplicated: dict[int, list[str]] = {}  # wave -> keys delivered twice (the originals)

    def fleet_table(self, name: str) -> FleetTable:
        table = self.tables[name].table
        assert table is not None
        return table

    def full_load(self) -> list[WaveFiles]:
        """Wave 0: every table's rows in one ``LOAD00000001.parquet``; fact and event keys grow with the day."""
        out = []
        history = self.spec.history_days  # type: ignore[attr-defined]
        for name, model in self.tables.items():
            table = self.fleet_table(name)
            rows = new_rows(model.rng, 1, table.rows)
            if table.partition is not None:  # key k on day floor(k * history / rows) of the history
                day_index = np.arange(table.rows, dtype=np.int64) * history // table.rows - history
            else:
                day_index = model.rng.integers(-history, 0, table.rows, dtype=np.int64)
            rows = stamped(dated(rows, model.rng, day_index), 0, np.arange(1, table.rows + 1))
            model.columns = rows
            model.alive = np.ones(table.rows, dtype=bool)
            key = self._write(name, 0, "LOAD00000001.parquet", rows, FLEET_SCHEMA)
            size = (self.staging_root / key).stat().st_size
            out.append(self._files(table, 0, [key], table.rows, size))
        self.waves_written = 0
        return out

    def insert_rows(self, model: TableModel, wave: int, count: int) -> dict[str, np.ndarray]:
        """New trips of the wave's day (the newest partition of a fact or event table)."""
        rows = new_rows(model.rng, model.size + 1, count)
        return dated(rows, model.rng, np.full(count, wave, dtype=np.int64))

    def _files(self, table: FleetTable, wave: int, keys: list[str], change_rows: int, size: int) -> WaveFiles:
        return WaveFiles(
            table.name,
            wave,
            keys,
            change_rows,
            partition=table.partition,
            columns=tuple(FLEET_SCHEMA.names),
            change_bytes=size,
        )

    def changed_keys(self, model: FleetTableModel, count: int) -> np.ndarray:
        """``count`` distinct live keys for updates and deletes, drawn as the table's class says."""
        spec: FleetSpec = self.spec  # type: ignore[assignment]
        live = model.live_keys()
        count = min(count, live.size)
        klass = model.table.klass if model.table else DIMENSION
        if count == 0:
            return np.zeros(0, dtype=np.int64)
        if klass == DIMENSION_ZIPF:
            weights = 1.0 / live.astype(np.float64) ** spec.zipf_exponent
            return model.rng.choice(live, count, replace=False, p=weights / weights.sum())
        if klass != FACT:
            return model.rng.choice(live, count, replace=False)
        days = model.columns[DAY_COLUMN][live - 1]
        newest = np.unique(days)[-spec.hot_days :]
        is_hot = np.isin(days, newest)
        hot, cold = live[is_hot], live[~is_hot]
        from_hot = min(round(count * spec.hot_share), hot.size)
        from_hot = max(from_hot, count - cold.size)
        picked = np.concatenate(
            [model.rng.choice(hot, from_hot, replace=False), model.rng.choice(cold, count - from_hot, replace=False)]
        )
        return model.rng.permutation(picked)

    def table_changes(
        self, name: str, wave: int, changes: int, *, single_file: bool = False, late: bool = True
    ) -> WaveFiles:
        """``changes`` change rows (before late copies) for one table, split as its class says."""
        model = self.tables[name]
        table = self.fleet_table(name)
        inserts, _updates, deletes = self.spec.class_mix(table.klass)  # type: ignore[attr-defined]
        n_insert = round(changes * inserts)
        n_delete = round(changes * deletes)
        chosen = self.changed_keys(model, changes - n_insert)
        n_delete = min(n_delete, chosen.size)
        update_keys, delete_keys = np.sort(chosen[n_delete:]), np.sort(chosen[:n_delete])
        n_late = self.late.take(update_keys.size) if late else 0
        files = self.write_changes(name, model, wave, Changes(update_keys, delete_keys, n_insert, n_late, 0))
        if single_file and len(files.keys) > 1:
            files.keys = [self._merge_files(files.keys)]
        return self._files(table, wave, files.keys, files.change_rows, files.change_bytes)

    def _merge_files(self, keys: list[str]) -> str:
        """The wave's files of one table as one file (in landing order), named as the first."""
        paths = [self.staging_root / key for key in keys]
        merged = pa.concat_tables([pq.read_table(path) for path in paths])
        for path in paths:
            path.unlink()
        pq.write_table(merged, paths[0], compression="snappy")
        return keys[0]

    def wave(self, wave: int, changes: dict[str, int], **options: bool) -> list[WaveFiles]:
        """One wave with exactly these change rows per table (tables left out or 0: no file)."""
        out = [self.table_changes(name, wave, count, **options) for name, count in changes.items() if count > 0]
        self.skipped[wave] = [name for name in self.tables if changes.get(name, 0) <= 0]
        self.waves_written = wave
        return out

    def cdc_wave(self) -> list[WaveFiles]:
        """The next random wave: which tables skip it, how much each of the others changes, which files
        are delivered twice (all drawn from the seed)."""
        spec: FleetSpec = self.spec  # type: ignore[assignment]
        wave = self.waves_written + 1
        if self.waves_written < 0:
            raise RuntimeError("write the full load first")
        rng = np.random.default_rng([spec.seed, 100_000 + wave])
        names = list(self.tables)
        skipped = set(rng.choice(names, round(spec.skip_fraction * len(names)), replace=False).tolist())
        changes = {}
        for name in names:
            fraction = rng.uniform(spec.min_change_fraction, spec.max_change_fraction)
            live = int(self.tables[name].alive.sum())
            changes[name] = 0 if name in skipped else max(1, round(live * fraction))
        out = self.wave(wave, changes)
        self._redeliver(rng, wave, out)
        return out

    def _redeliver(self, rng: np.random.Generator, wave: int, files: list[WaveFiles]) -> None:
        """A quota of the wave's files lands a second time, under a new name, after the table's last file."""
        keys = [(item, key) for item in files for key in item.keys]
        count = min(self.duplicates.take(len(keys)), len(keys))
        chosen = sorted(rng.choice(len(keys), count, replace=False).tolist()) if count else []
        self.duplicated[wave] = []
        for position in chosen:
            item, key = keys[position]
            copy = key.removesuffix(".parquet") + "-redelivered.parquet"
            shutil.copyfile(self.staging_root / key, self.staging_root / copy)
            item.keys.append(copy)
            item.change_rows += pq.read_metadata(self.staging_root / copy).num_rows
            self.duplicated[wave].append(key)


def split_into_row_files(staging_root: Path, item: WaveFiles) -> WaveFiles:
    """The many-files shape: every row of ``item``'s files as its own file, in landing order."""
    table = pa.concat_tables([pq.read_table(staging_root / key) for key in item.keys])
    folder = (staging_root / item.keys[0]).parent
    for key in item.keys:
        (staging_root / key).unlink()
    day = (FIRST_DAY + timedelta(days=item.wave)).strftime("%Y%m%d")
    keys = []
    relative = folder.relative_to(staging_root)
    for row in range(table.num_rows):
        key = f"{relative.as_posix()}/{day}-{row + 1:09d}.parquet"
        pq.write_table(table.slice(row, 1), staging_root / key, compression="snappy")
        keys.append(key)
    return WaveFiles(
        item.table,
        item.wave,
        keys,
        item.change_rows,
        partition=item.partition,
        columns=item.columns,
        change_bytes=item.change_bytes,
    )


def workload_summary(spec: FleetSpec, model: FleetModel) -> dict:
    """What the results JSON records about a fleet run's workload."""
    return {
        "kind": "fleet",
        "groups": [list(group) for group in spec.groups],
        "tables": [
            {
                "name": table.name,
                "class": table.klass,
                "rows": table.rows,
                "partition": table.partition,
                "odp_table_type": table.table_type.value,
            }
            for table in spec.fleet
        ],
        "odp_merge_on_read_classes": list(spec.merge_on_read),
        "odp_merge_on_read_from_rows": spec.merge_on_read_from,
        "waves": spec.waves,
        "change_fraction": [spec.min_change_fraction, spec.max_change_fraction],
        "skip_fraction": spec.skip_fraction,
        "duplicate_fraction": spec.duplicate_fraction,
        "late_fraction": spec.late_fraction,
        "hot_days": spec.hot_days,
        "hot_share": spec.hot_share,
        "zipf_exponent": spec.zipf_exponent,
        "mix": list(spec.mix) if spec.mix else {klass: list(mix) for klass, mix in CLASS_MIX.items()},
        "seed": spec.seed,
        "skipped_per_wave": {str(wave): names for wave, names in model.skipped.items()},
        "redelivered_per_wave": {str(wave): keys for wave, keys in model.duplicated.items()},
    }

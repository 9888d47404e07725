"""Deterministic demo data for the shipped configuration, and the plain-Python model of the sources.

Each source table is modelled as a dict of rows (the source database). Every change the generator
makes to it is also written to a change file in the source's own format (DMS Parquet, Debezium JSON
lines, DynamoDB stream records as Firehose JSON lines) under the staging folder, and recorded with
its ordering value. The expectation of a table is computed from those recorded changes alone, by
replaying the *landed* ones in ordering order (:meth:`SourceTable.expected_rows`): it never looks at
the files or at the job's code.

Rounds: round 0 is the full load (DMS ``LOAD00000001.parquet`` without ``Op``, Debezium snapshot
reads, DynamoDB INSERTs); rounds 1 to 3 hold inserts, updates and deletes, including several changes
to one key inside one file. The scenarios of the demo (see sandbox/README.md) are arranged by
:class:`DemoGenerator`: a late file, a re-landed file and a redelivered event.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from odp.config.loader import OdpConfig
from odp.config.models import DebeziumShape, SourceFormat, TableConfig, TableMode

START = datetime(2026, 1, 1, tzinfo=UTC)
INSERT, UPDATE, DELETE = "I", "U", "D"
CDC_ROUNDS = 3


@dataclass(frozen=True)
class Change:
    """One change to a source row, as the source database made it."""

    op: str
    key: tuple[Any, ...]
    row: dict[str, Any]  # the full row after the change (before it, for a delete)
    ordering: int  # global commit order of the change


@dataclass
class ChangeFile:
    """One file of changes: written at ``key`` under staging in round ``landed_round``."""

    table_id: str
    key: str
    changes: list[Change]
    landed_round: int
    full_load: bool = False
    copy_of: str | None = None  # a re-landed duplicate: the same bytes as this other key


@dataclass
class SourceTable:
    """The model of one source table: its rows now, and every change file made from it."""

    config: TableConfig
    rows: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    files: list[ChangeFile] = field(default_factory=list)
    next_key: int = 1

    def key_of(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[name] for name in self.config.primary_key)

    def landed_changes(self, up_to_round: int) -> list[Change]:
        """Every change in the files landed so far (a re-landed copy counts once: same changes)."""
        seen: dict[int, Change] = {}
        for change_file in self.files:
            if change_file.landed_round <= up_to_round:
                for change in change_file.changes:
                    seen[change.ordering] = change
        return [seen[ordering] for ordering in sorted(seen)]

    def expected_rows(self, up_to_round: int) -> list[dict[str, Any]]:
        """The rows the Hudi table must hold once every landed file is applied.

        current: replay the landed changes in ordering order, last change per key wins, a delete
        removes the key. historical: one row per landed change.
        """
        changes = self.landed_changes(up_to_round)
        if self.config.mode is TableMode.HISTORICAL:
            return [dict(change.row) for change in changes]
        state: dict[tuple[Any, ...], dict[str, Any]] = {}
        for change in changes:
            if change.op == DELETE:
                state.pop(change.key, None)
            else:
                state[change.key] = dict(change.row)
        return list(state.values())


class OrderingClock:
    """One commit order across every source, so orderings are unique and increase with time."""

    def __init__(self) -> None:
        self.value = 0

    def tick(self) -> int:
        self.value += 1
        return self.value

    @staticmethod
    def moment(ordering: int) -> datetime:
        return START + timedelta(seconds=ordering)


# -------------------------------------------------------------------------------------------
# Row values per source
# -------------------------------------------------------------------------------------------


def taxi_row(rng: random.Random, pk_id: int, vendorid: int, when: datetime) -> dict[str, Any]:
    """A taxi trip with the columns of config/tables/taxi_trips_dms.yaml (cdc_timestamp_seq set later)."""
    pickup = when.replace(microsecond=0) - timedelta(minutes=rng.randint(5, 90))
    distance = round(rng.uniform(0.3, 25.0), 2)
    fare = round(3.0 + distance * 2.5, 2)
    tip = round(rng.choice([0.0, 1.0, 2.5, fare * 0.15]), 2)
    tolls = rng.choice([0.0, 0.0, 6.55])
    return {
        "pk_id": pk_id,
        "vendorid": vendorid,
        "tpep_pickup_datetime": pickup,
        "tpep_dropoff_datetime": pickup + timedelta(minutes=rng.randint(3, 60)),
        "passenger_count": float(rng.randint(1, 5)),
        "trip_distance": distance,
        "ratecodeid": float(rng.choice([1, 1, 1, 2, 5])),
        "store_and_fwd_flag": rng.choice(["N", "N", "N", "Y"]),
        "pulocationid": rng.randint(1, 265),
        "dolocationid": rng.randint(1, 265),
        "payment_type": rng.randint(1, 4),
        "fare_amount": fare,
        "extra": rng.choice([0.0, 0.5, 1.0]),
        "mta_tax": 0.5,
        "tip_amount": tip,
        "tolls_amount": tolls,
        "improvement_surcharge": 0.3,
        "total_amount": round(fare + tip + tolls + 0.8, 2),
        "congestion_surcharge": rng.choice([0.0, 2.5]),
        "airport_fee": rng.choice([None, 0.0, 1.25]),
        "cdc_timestamp_seq": None,
    }


def product_row(rng: random.Random, product_id: int) -> dict[str, Any]:
    words = ["scooter", "drill", "hammer", "rocks", "spare tire", "car battery", "jacket", "rope"]
    name = f"{rng.choice(['small', 'large', 'heavy', 'cordless'])} {rng.choice(words)}"
    return {
        "id": product_id,
        "name": name,
        "description": f"{name} #{product_id}",
        "weight": round(rng.uniform(0.1, 20.0), 3),
    }


def order_row(rng: random.Random, order_id: int, when: datetime) -> dict[str, Any]:
    tags = rng.choice([None, ["gift"], ["express", "fragile"], ["bulk"]])
    return {
        "order_id": f"order-{order_id:06d}",
        "customer_id": f"customer-{rng.randint(1, 40):03d}",
        "status": rng.choice(["NEW", "PAID"]),
        "amount": Decimal(rng.randint(100, 99_999)).scaleb(-2),
        "quantity": rng.randint(1, 12),
        "is_gift": rng.choice([True, False, None]),
        "tags": json.dumps(tags, separators=(",", ":")) if tags is not None else None,
        "shipping_address": json.dumps(
            {"city": rng.choice(["Dublin", "Cork", "Galway"]), "zip": f"D{rng.randint(1, 24):02d}"},
            separators=(",", ":"),
            sort_keys=True,
        ),
        "updated_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def account_row(rng: random.Random, account_id: int) -> dict[str, Any]:
    """A billing account (config/tables/billing_dms_csv.yaml); owners hold a comma, so CSV quoting matters."""
    return {
        "change_ts": None,  # DMS's TimestampColumnName, set with the change
        "account_id": account_id,
        "owner": f"{rng.choice(['Byrne', 'Murphy', 'Kelly', 'Walsh'])}, {rng.choice(['Ann', 'Cian', 'Aoife'])}",
        "plan": rng.choice(["free", "team", "enterprise"]),
        "balance": Decimal(rng.randint(0, 999_999)).scaleb(-2),
        "country": rng.choice(["IE", "FR", "DE", None]),
    }


def customer_row(rng: random.Random, customer_id: int) -> dict[str, Any]:
    """A CRM customer (config/tables/crm_debezium.yaml), e-mail already lower case (the transform lowers it)."""
    first, last = rng.choice(["anne", "sally", "george", "edward"]), rng.choice(["kretchmar", "thomas", "bailey"])
    return {
        "id": customer_id,
        "first_name": first.title(),
        "last_name": last.title(),
        "email": f"{first}.{last}{customer_id}@example.org",
        "tier": rng.choice(["bronze", "silver", "gold"]),
    }


def updated_row(rng: random.Random, config: TableConfig, row: dict[str, Any], when: datetime) -> dict[str, Any]:
    """The row after an UPDATE: a few non-key columns change."""
    new = dict(row)
    if "account_id" in row:
        new["plan"] = rng.choice(["free", "team", "enterprise"])
        new["balance"] = Decimal(rng.randint(0, 999_999)).scaleb(-2)
    elif "tier" in row:
        new["tier"] = rng.choice(["bronze", "silver", "gold", "platinum"])
    elif config.format is SourceFormat.DMS:
        new["tip_amount"] = round(rng.uniform(0.0, 12.0), 2)
        new["total_amount"] = round(new["fare_amount"] + new["tip_amount"] + new["tolls_amount"] + 0.8, 2)
        new["passenger_count"] = float(rng.randint(1, 6))
        new["store_and_fwd_flag"] = rng.choice(["N", "Y"])
    elif config.format is SourceFormat.DEBEZIUM:
        new["weight"] = round(rng.uniform(0.1, 20.0), 3)
        new["description"] = f"{row['name']} (revised {when:%H%M%S})"
    else:
        new["status"] = rng.choice(["PAID", "SHIPPED", "DELIVERED"])
        new["quantity"] = rng.randint(1, 12)
        new["is_gift"] = rng.choice([True, False, None])
        new["updated_at"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return new


# -------------------------------------------------------------------------------------------
# File writers, one per source format
# -------------------------------------------------------------------------------------------

DMS_TYPES = {
    "bigint": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}


def dms_sequence(ordering: int) -> str:
    """$AR_H_CHANGE_SEQ: a commit timestamp then a zero-padded counter; sorts as text."""
    return f"{OrderingClock.moment(ordering):%Y%m%d%H%M%S}{ordering:021d}"


def write_dms_parquet(path: Path, config: TableConfig, changes: list[Change], *, full_load: bool) -> None:
    """DMS Parquet: upper-case column names (the task's convert-uppercase rule), ``Op`` first in CDC files."""
    columns = dict(config.columns or {})
    fields = [pa.field(name.upper(), DMS_TYPES[kind]) for name, kind in columns.items()]
    data: dict[str, list[Any]] = {name.upper(): [change.row[name] for change in changes] for name in columns}
    if not full_load:
        fields.insert(0, pa.field("Op", pa.string()))
        data = {"Op": [change.op for change in changes], **data}
    table = pa.Table.from_pydict(data, schema=pa.schema(fields))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""  # DMS's default CsvNullValue: an empty field
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    return str(value)


def write_dms_csv(path: Path, config: TableConfig, changes: list[Change], *, full_load: bool) -> None:
    """DMS CSV, gzip, no header: the configured columns in order, ``Op`` first in CDC files only."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for change in changes:
        values = [_csv_text(change.row[name]) for name in config.columns or {}]
        writer.writerow(values if full_load else [change.op, *values])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(buffer.getvalue().encode("utf-8"), mtime=0))


def flattened_event(change: Change, *, snapshot: bool) -> dict[str, Any]:
    """A Postgres change after ExtractNewRecordState (add.fields=op,source.ts_ms,lsn; delete.handling.mode=rewrite)."""
    op = {INSERT: "r" if snapshot else "c", UPDATE: "u", DELETE: "d"}[change.op]
    return {
        **change.row,
        "__op": op,
        "__source_ts_ms": int(OrderingClock.moment(change.ordering).timestamp() * 1000),
        "__lsn": 24_000_000 + change.ordering * 64,
        "__deleted": "true" if change.op == DELETE else "false",
    }


def debezium_event(config: TableConfig, change: Change, *, snapshot: bool) -> dict[str, Any]:
    """A Debezium MySQL change event, payload only (JsonConverter schemas.enable=false)."""
    op = {INSERT: "r" if snapshot else "c", UPDATE: "u", DELETE: "d"}[change.op]
    ts = int(OrderingClock.moment(change.ordering).timestamp() * 1000)
    return {
        "before": None if change.op == INSERT else change.row,
        "after": None if change.op == DELETE else change.row,
        "source": {
            "version": "2.7.3.Final",
            "connector": "mysql",
            "name": "dbserver1",
            "ts_ms": ts,
            "snapshot": "true" if snapshot else "false",
            "db": config.schema_name,
            "table": config.table,
            "server_id": 223344,
            "file": "mysql-bin.000003",
            "pos": 154 + change.ordering * 10,
            "row": 0,
        },
        "op": op,
        "ts_ms": ts + 7,
    }


def debezium_with_schema(event: dict[str, Any]) -> dict[str, Any]:
    """The same event in the envelope form (JsonConverter schemas.enable=true)."""
    row_fields = [
        {"type": "int32", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "string", "optional": True, "field": "description"},
        {"type": "double", "optional": True, "field": "weight"},
    ]
    schema = {
        "type": "struct",
        "name": "dbserver1.inventory.products.Envelope",
        "optional": False,
        "fields": [
            {"type": "struct", "fields": row_fields, "optional": True, "field": "before"},
            {"type": "struct", "fields": row_fields, "optional": True, "field": "after"},
            {"type": "struct", "fields": [], "optional": False, "field": "source"},
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
        ],
    }
    return {"schema": schema, "payload": event}


def dynamodb_attribute(value: Any) -> dict[str, Any] | None:
    """A plain value as a typed DynamoDB attribute (None: the attribute is absent)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | Decimal):
        return {"N": str(value)}
    return {"S": value}


def dynamodb_image(row: dict[str, Any]) -> dict[str, Any]:
    image: dict[str, Any] = {}
    for name, value in row.items():
        if name in ("tags", "shipping_address") and value is not None:
            plain = json.loads(value)
            image[name] = (
                {"L": [{"S": tag} for tag in plain]}
                if isinstance(plain, list)
                else {"M": {k: {"S": v} for k, v in plain.items()}}
            )
            continue
        attribute = dynamodb_attribute(value)
        if attribute is not None:
            image[name] = attribute
    return image


def dynamodb_record(config: TableConfig, change: Change) -> dict[str, Any]:
    """A DynamoDB stream record as Kinesis Data Streams delivers it (and Firehose writes it)."""
    event = {INSERT: "INSERT", UPDATE: "MODIFY", DELETE: "REMOVE"}[change.op]
    keys = {name: dynamodb_attribute(change.row[name]) for name in config.primary_key}
    body: dict[str, Any] = {
        "ApproximateCreationDateTime": int(OrderingClock.moment(change.ordering).timestamp() * 1000),
        "Keys": keys,
        "SizeBytes": 100 + len(json.dumps(change.row, default=str)),
    }
    if change.op == DELETE:
        body["OldImage"] = dynamodb_image(change.row)
    else:
        body["NewImage"] = dynamodb_image(change.row)
    return {
        "awsRegion": "eu-west-1",
        "eventID": f"{change.ordering:08d}-0000-4000-8000-000000000000",
        "eventName": event,
        "userIdentity": None,
        "recordFormat": "application/json",
        "tableName": config.table,
        "dynamodb": body,
        "eventSource": "aws:dynamodb",
    }


def write_json_lines(path: Path, documents: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(doc, default=str) + "\n" for doc in documents), encoding="utf-8")


# -------------------------------------------------------------------------------------------
# The generator
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoScenarios:
    """Which tables carry the special cases (table ids)."""

    late_file: tuple[str, ...] = ("taxi_trips_dms.taxi_trips.table_5", "taxi_trips_dms.taxi_trips.table_14")
    relanded_file: tuple[str, ...] = ("taxi_trips_dms.taxi_trips.table_3", "inventory_debezium.inventory.products")
    redelivered_event: tuple[str, ...] = ("taxi_trips_dms.taxi_trips.table_2", "orders_dynamodb.app.orders")
    envelope_form: tuple[str, ...] = ("inventory_debezium.inventory.products",)
    csv_form: tuple[str, ...] = ("billing_dms_csv.billing.accounts",)  # DMS tables written as gzip CSV
    late_round: int = 2  # the late file is made in this round and lands in the next
    relanded_round: int = 2
    redelivered_round: int = 1


@dataclass
class DemoGenerator:
    """Generates rounds of change files for the configured tables into a staging folder."""

    config: OdpConfig
    staging: Path
    scale: int = 1
    seed: int = 20260101
    scenarios: DemoScenarios = field(default_factory=DemoScenarios)
    table_ids: tuple[str, ...] | None = None  # None: every active table of the configuration
    # True: each DMS table changes in one CDC round of three (a scenario table: in its scenario's rounds), so the
    # default demo stays within its time budget; the Debezium and DynamoDB tables change every round.
    rotate_cdc: bool = True
    clock: OrderingClock = field(default_factory=OrderingClock)
    tables: dict[str, SourceTable] = field(default_factory=dict)
    redelivered_keys: list[str] = field(default_factory=list)  # keys whose event is delivered twice
    _held_back: list[ChangeFile] = field(default_factory=list)
    _protected: dict[str, set[tuple[Any, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for table in self.config.tables:
            if not table.is_active or (self.table_ids is not None and table.table_id not in self.table_ids):
                continue
            if table.stream is not None:  # streamed tables are the stream demo's (sandbox/streaming_demo.py)
                continue
            self.tables[table.table_id] = SourceTable(config=table)

    def rng(self, table_id: str, round_number: int) -> random.Random:
        return random.Random(f"{self.seed}:{table_id}:{round_number}")  # noqa: S311 - demo data, not secrets

    # -- sizes -----------------------------------------------------------------------------
    def initial_rows(self, table: SourceTable) -> int:
        base = {SourceFormat.DMS: 40, SourceFormat.DEBEZIUM: 12, SourceFormat.DYNAMODB: 20}[table.config.format]
        return base * self.scale

    # -- rounds ----------------------------------------------------------------------------
    def generate_round(self, round_number: int) -> list[ChangeFile]:
        """Write the files of one round under staging; returns the files that landed in it."""
        landed: list[ChangeFile] = []
        for table_id, table in self.tables.items():
            rng = self.rng(table_id, round_number)
            if round_number == 0:
                landed += self._full_load(table, rng)
            elif self.changes_in_round(table, round_number):
                landed += self._cdc_round(table, rng, round_number)
        for held in list(self._held_back):
            if held.landed_round == round_number:
                self._write(self.tables[held.table_id], held)  # recorded in table.files when made
                landed.append(held)
                self._held_back.remove(held)
                self._protected.pop(held.table_id, None)
        return landed

    def changes_in_round(self, table: SourceTable, round_number: int) -> bool:
        """Whether a table gets CDC files in this round (always, unless rotate_cdc thins DMS tables out)."""
        table_id = table.config.table_id
        if not self.rotate_cdc or table.config.format is not SourceFormat.DMS or table_id in self.scenarios.csv_form:
            return True
        scenario_rounds = {
            **{t: {self.scenarios.redelivered_round} for t in self.scenarios.redelivered_event},
            **{t: {self.scenarios.relanded_round} for t in self.scenarios.relanded_file},
            **{t: {self.scenarios.late_round, self.scenarios.late_round + 1} for t in self.scenarios.late_file},
        }
        if table_id in scenario_rounds:
            return round_number in scenario_rounds[table_id]
        slot = sum(ord(char) for char in table_id) % CDC_ROUNDS
        return slot == round_number % CDC_ROUNDS

    def _full_load(self, table: SourceTable, rng: random.Random) -> list[ChangeFile]:
        changes = [self._insert(table, rng) for _ in range(self.initial_rows(table))]
        fmt = table.config.format
        prefix = table.config.staging_prefix
        if fmt is SourceFormat.DMS:
            key = f"{prefix}LOAD00000001.{self._dms_suffix(table)}"
        elif fmt is SourceFormat.DEBEZIUM:
            name = f"dbserver1.{table.config.schema_name}.{table.config.table}+0+0000000000"
            key = f"{prefix}{name}{self._json_suffix(table)}"
        else:
            key = f"{prefix}{self._firehose_name(changes[0].ordering)}"
        change_file = ChangeFile(table.config.table_id, key, changes, landed_round=0, full_load=True)
        table.files.append(change_file)
        self._write(table, change_file)
        return [change_file]

    def _cdc_round(self, table: SourceTable, rng: random.Random, round_number: int) -> list[ChangeFile]:
        table_id = table.config.table_id
        size = self.initial_rows(table)
        late = table_id in self.scenarios.late_file and round_number == self.scenarios.late_round
        landed: list[ChangeFile] = []
        files_this_round = 2
        for index in range(files_this_round):
            changes = self._changes(
                table, rng, inserts=max(2, size // 8), updates=max(2, size // 6), deletes=max(1, size // 12)
            )
            change_file = ChangeFile(table_id, self._cdc_key(table, changes, index), changes, round_number)
            table.files.append(change_file)
            if late and index == 0:
                # Held back: it holds the older changes and lands one round later, after newer ones.
                change_file.landed_round = round_number + 1
                self._held_back.append(change_file)
                self._protected[table_id] = {change.key for change in changes}
                continue
            self._write(table, change_file)
            landed.append(change_file)
        if table_id in self.scenarios.relanded_file and round_number == self.scenarios.relanded_round:
            original = landed[-1]
            copy = ChangeFile(
                table_id, _relanded_key(original.key), original.changes, round_number, copy_of=original.key
            )
            table.files.append(copy)
            self._write(table, copy)
            landed.append(copy)
        if table_id in self.scenarios.redelivered_event and round_number == self.scenarios.redelivered_round:
            self.redelivered_keys.append(landed[0].key)
        return landed

    def _changes(
        self, table: SourceTable, rng: random.Random, *, inserts: int, updates: int, deletes: int
    ) -> list[Change]:
        """A file's worth of changes in commit order, some keys changed twice in the file."""
        changes: list[Change] = []
        plan = [INSERT] * inserts + [UPDATE] * updates + [DELETE] * deletes
        rng.shuffle(plan)
        protected = self._protected.get(table.config.table_id, set())
        for op in plan:
            if op == INSERT or not table.rows:
                changes.append(self._insert(table, rng))
                continue
            candidates = sorted(table.rows)
            if op == DELETE:
                candidates = [key for key in candidates if key not in protected] or candidates
                if set(candidates) <= protected:
                    changes.append(self._update(table, rng, rng.choice(candidates)))
                    continue
                changes.append(self._delete(table, rng.choice(candidates)))
            else:
                # Half the updates touch a key changed earlier in this file: two changes, one key, one file.
                recent = [c.key for c in changes if c.op != DELETE and c.key in table.rows]
                key = rng.choice(recent) if recent and rng.random() < 0.5 else rng.choice(candidates)
                changes.append(self._update(table, rng, key))
        return changes

    def _insert(self, table: SourceTable, rng: random.Random) -> Change:
        ordering = self.clock.tick()
        number = table.next_key
        table.next_key += 1
        fmt = table.config.format
        when = OrderingClock.moment(ordering)
        if table.config.table_id in self.scenarios.csv_form:
            row = account_row(rng, number)
        elif fmt is SourceFormat.DMS:
            vendorid = 1 + number % 2 if table.config.partition_by else rng.randint(1, 2)
            row = taxi_row(rng, number, vendorid, when)
        elif table.config.debezium_shape is DebeziumShape.FLATTENED:
            row = customer_row(rng, 1000 + number)
        elif fmt is SourceFormat.DEBEZIUM:
            row = product_row(rng, 100 + number)
        else:
            row = order_row(rng, number, when)
        return self._apply(table, INSERT, row, ordering)

    def _update(self, table: SourceTable, rng: random.Random, key: tuple[Any, ...]) -> Change:
        ordering = self.clock.tick()
        row = updated_row(rng, table.config, table.rows[key], OrderingClock.moment(ordering))
        return self._apply(table, UPDATE, row, ordering)

    def _delete(self, table: SourceTable, key: tuple[Any, ...]) -> Change:
        ordering = self.clock.tick()
        return self._apply(table, DELETE, dict(table.rows[key]), ordering)

    def _apply(self, table: SourceTable, op: str, row: dict[str, Any], ordering: int) -> Change:
        if "cdc_timestamp_seq" in row:
            row = {**row, "cdc_timestamp_seq": dms_sequence(ordering)}
        if "change_ts" in row:
            row = {**row, "change_ts": OrderingClock.moment(ordering)}
        key = table.key_of(row)
        if op == DELETE:
            table.rows.pop(key)
        else:
            table.rows[key] = row
        return Change(op=op, key=key, row=row, ordering=ordering)

    # -- keys and files --------------------------------------------------------------------
    @staticmethod
    def _firehose_name(ordering: int) -> str:
        moment = OrderingClock.moment(ordering)
        return f"{moment:%Y/%m/%d/%H}/odp-orders-firehose-1-{moment:%Y-%m-%d-%H-%M-%S}-{ordering:08d}.jsonl"

    def _cdc_key(self, table: SourceTable, changes: list[Change], index: int) -> str:
        first = changes[0].ordering
        moment = OrderingClock.moment(first)
        prefix = table.config.staging_prefix
        fmt = table.config.format
        if fmt is SourceFormat.DMS:
            return f"{prefix}{moment:%Y/%m/%d}/{moment:%Y%m%d-%H%M%S}{index:03d}.{self._dms_suffix(table)}"
        if fmt is SourceFormat.DEBEZIUM:
            name = f"dbserver1.{table.config.schema_name}.{table.config.table}+0+{first:010d}"
            return f"{prefix}{name}{self._json_suffix(table)}"
        return f"{prefix}{self._firehose_name(first)}"

    def _dms_suffix(self, table: SourceTable) -> str:
        return "csv.gz" if table.config.table_id in self.scenarios.csv_form else "parquet"

    @staticmethod
    def _json_suffix(table: SourceTable) -> str:
        return ".json.gz" if table.config.debezium_shape is DebeziumShape.FLATTENED else ".json"

    def _write(self, table: SourceTable, change_file: ChangeFile) -> None:
        path = self.staging / change_file.key
        config = table.config
        if config.table_id in self.scenarios.csv_form:
            write_dms_csv(path, config, change_file.changes, full_load=change_file.full_load)
        elif config.debezium_shape is DebeziumShape.FLATTENED:
            events = [flattened_event(change, snapshot=change_file.full_load) for change in change_file.changes]
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(json.dumps(event) + "\n" for event in events)
            path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
        elif config.format is SourceFormat.DMS:
            write_dms_parquet(path, config, change_file.changes, full_load=change_file.full_load)
        elif config.format is SourceFormat.DEBEZIUM:
            events = [debezium_event(config, change, snapshot=change_file.full_load) for change in change_file.changes]
            if config.table_id in self.scenarios.envelope_form and not change_file.full_load:
                events = [debezium_with_schema(event) for event in events]
            write_json_lines(path, [_strip_decimal(event) for event in events])
        else:
            write_json_lines(path, [dynamodb_record(config, change) for change in change_file.changes])


def _relanded_key(key: str) -> str:
    """The same file name with ``-relanded`` before its suffix (a second PUT of the same bytes)."""
    folder, _, name = key.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    return f"{folder}/{stem}-relanded{dot}{suffix}"


def _strip_decimal(event: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(event, default=lambda v: float(v) if isinstance(v, Decimal) else str(v)))


def iter_rounds() -> Iterator[int]:
    yield from range(CDC_ROUNDS + 1)

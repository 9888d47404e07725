"""``python -m sandbox stream``: DynamoDB changes of three tables through a local stand-in for Kinesis.

Rounds of DynamoDB-for-Kinesis change records (inserts, updates, REMOVEs, a late record, a record
delivered twice, a record of a table nobody streams, a line that is not JSON) are written as files of
Kinesis event records; Spark Structured Streaming reads them with a real checkpoint, one file per
micro-batch, and the streaming job's micro-batch function writes the Hudi tables. Every table is then
validated (Spark and hudi-rs) against the model of the source kept here, never against the job.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import shutil
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from etl.hudi.options import HudiProfile, WriteProfile
from etl.streaming.batch import BatchOutcome, StreamTarget
from etl.streaming.sources import kinesis_event_record
from odp.config.loader import OdpConfig, load_config
from odp.config.models import TableConfig, TableMode
from odp.config.streams import streamed_tables
from sandbox.report import render_table
from sandbox.validation import TableCheck, check_table

LOG = logging.getLogger("sandbox.stream")
STREAM = "demo_changes"
SOURCE = "demo_dynamodb"
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
POISON_LINE = "this line is not a Kinesis record"
# The demo's tables: what a user writes in config/tables/<source>.yaml and config/streams.yaml.
DEMO_TABLES = {
    "source": SOURCE,
    "format": "dynamodb",
    "defaults": {"stream": STREAM, "database": "demo_stream_raw", "primary_key": ["id"]},
    "tables": [
        {"schema": "app", "table": "customers", "columns": {"id": "string", "name": "string", "tier": "string"}},
        {
            "schema": "app",
            "table": "orders",
            "table_type": "MERGE_ON_READ",
            "columns": {"id": "string", "customer_id": "string", "amount": "decimal(12,2)", "status": "string"},
        },
        {
            "schema": "app",
            "table": "order_events",
            "mode": "historical",
            "columns": {"id": "string", "order_id": "string", "kind": "string"},
        },
    ],
}
DEMO_STREAMS = {"streams": {STREAM: {"window_seconds": 100}}}


def attribute(value: Any) -> dict[str, Any]:
    """A plain value as a typed DynamoDB attribute."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | float | Decimal):
        return {"N": str(value)}
    return {"S": str(value)}


def change_record(
    event: str, table: str, item: dict[str, Any], *, created_ms: int, key: str = "id", event_id: str | None = None
) -> dict[str, Any]:
    """One DynamoDB change record as the Kinesis streaming destination writes it (REMOVE carries OldImage)."""
    image = {name: attribute(value) for name, value in item.items()}
    body: dict[str, Any] = {"ApproximateCreationDateTime": created_ms, "Keys": {key: image[key]}, "SizeBytes": 60}
    body["OldImage" if event == "REMOVE" else "NewImage"] = image
    return {
        "awsRegion": "eu-west-1",
        "eventID": event_id or f"{table}-{item[key]}-{event}-{created_ms}",
        "eventName": event,
        "userIdentity": None,
        "recordFormat": "application/json",
        "tableName": table,
        "dynamodb": body,
        "eventSource": "aws:dynamodb",
    }


def with_precision(record: dict[str, Any], precision: str, created: int) -> dict[str, Any]:
    """A copy of a Kinesis-form record that declares ``ApproximateCreationDateTimePrecision`` (in its ``dynamodb``
    object) with ``created`` in that precision. ``SECONDS``: no field, ``created`` in seconds (the magnitude
    decides, as for the Lambda streams form and records older than the field)."""
    document = copy.deepcopy(record)
    document["dynamodb"]["ApproximateCreationDateTime"] = created
    if precision == "SECONDS":
        document["dynamodb"].pop("ApproximateCreationDateTimePrecision", None)
    else:
        document["dynamodb"]["ApproximateCreationDateTimePrecision"] = precision
    return document


class KinesisFolder:
    """A folder the local source reads: one file per micro-batch, Kinesis sequence numbers increasing."""

    def __init__(self, root: Path, first_sequence: int = 49657828409187701520019995242508390119953358325192589314):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.sequence = first_sequence
        self.files = 0

    def record(self, document: dict[str, Any]) -> str:
        """One Kinesis event record line (a new sequence number)."""
        self.sequence += 1000
        return json.dumps(kinesis_event_record(document, str(self.sequence)))

    def write(self, lines: list[str]) -> Path:
        """One file, written then renamed: the file source never sees a half-written file."""
        path = self.root / f"part-{self.files:05d}.json"
        self.files += 1
        partial = self.root / f".{path.name}.tmp"
        partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
        partial.rename(path)
        return path


@dataclass
class SourceModel:
    """What the source holds: per table, the latest change per key (current) or every change (historical)."""

    tables: dict[str, TableConfig]
    latest: dict[str, dict[str, tuple[int, str, dict[str, Any]]]] = field(default_factory=dict)
    changes: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # table -> event id -> row

    def apply(self, table: TableConfig, event: str, item: dict[str, Any], created_ms: int, event_id: str) -> None:
        if table.mode is TableMode.HISTORICAL:
            self.changes.setdefault(table.table, {})[event_id] = item
            return
        stored = self.latest.setdefault(table.table, {})
        current = stored.get(item["id"])
        if current is None or current[0] < created_ms:  # a late change (older) never wins
            stored[item["id"]] = (created_ms, event, item)

    def expected_rows(self, table: TableConfig) -> list[dict[str, Any]]:
        if table.mode is TableMode.HISTORICAL:
            return list(self.changes.get(table.table, {}).values())
        return [item for _, event, item in self.latest.get(table.table, {}).values() if event != "REMOVE"]


@dataclass
class StreamDemoResult:
    outcomes: list[BatchOutcome] = field(default_factory=list)
    checks: list[TableCheck] = field(default_factory=list)
    expected_bad_records: int = 0
    expected_duplicates: int = 0
    seconds: float = 0.0

    @property
    def bad_records(self) -> int:
        return sum(o.bad_records for o in self.outcomes)

    @property
    def duplicates(self) -> int:
        return sum(o.duplicates for o in self.outcomes)

    @property
    def ok(self) -> bool:
        return (
            bool(self.checks)
            and all(c.ok for c in self.checks)
            and not any(o.failed for o in self.outcomes)
            and self.bad_records == self.expected_bad_records
            and self.duplicates == self.expected_duplicates
        )


def write_demo_config(config_dir: Path, repo_config: Path) -> OdpConfig:
    """The repository's configuration plus the demo's streamed tables and stream, validated as one unit."""
    shutil.copytree(repo_config, config_dir, ignore=shutil.ignore_patterns("schema"))
    (config_dir / "tables" / f"{SOURCE}.yaml").write_text(yaml.safe_dump(DEMO_TABLES, sort_keys=False))
    streams_file = config_dir / "streams.yaml"
    streams = yaml.safe_load(streams_file.read_text()) if streams_file.is_file() else None
    streams = streams or {"streams": {}}
    streams.setdefault("streams", {}).update(DEMO_STREAMS["streams"])  # the repository's own streams stay
    streams_file.write_text(yaml.safe_dump(streams, sort_keys=False))
    return load_config(config_dir)


class DemoStream:
    """Generates the rounds: each round is one file (one micro-batch) of changes across the three tables."""

    def __init__(self, tables: list[TableConfig], folder: KinesisFolder, *, rows: int, seed: int = 14) -> None:
        self.tables = {table.table: table for table in tables}
        self.folder = folder
        self.rows = rows
        self.random = random.Random(seed)  # noqa: S311 - demo data, not security
        self.model = SourceModel(self.tables)
        self.clock = BASE_MS
        self.next_id = 0
        self.live: dict[str, list[dict[str, Any]]] = {name: [] for name in self.tables}
        self.last_duplicate: str | None = None
        self.expected_bad = 0
        self.expected_duplicates = 0

    def _change(self, table: str, event: str, item: dict[str, Any], created_ms: int | None = None) -> str:
        if created_ms is None:
            self.clock += 10
            created_ms = self.clock
        document = change_record(event, table, item, created_ms=created_ms)
        self.model.apply(self.tables[table], event, item, created_ms, document["eventID"])
        return self.folder.record(document)

    def _new_item(self, table: str) -> dict[str, Any]:
        self.next_id += 1
        key = f"{table[:1]}{self.next_id:06d}"
        if table == "customers":
            return {"id": key, "name": f"customer {self.next_id}", "tier": self.random.choice(["gold", "silver"])}
        if table == "orders":
            cents = self.random.randint(100, 99_999)
            return {"id": key, "customer_id": f"c{self.random.randint(1, 50):06d}", "amount": Decimal(cents) / 100,
                    "status": "new"}  # fmt: skip
        return {"id": key, "order_id": f"o{self.random.randint(1, 50):06d}", "kind": "created"}

    def _updated(self, table: str, item: dict[str, Any]) -> dict[str, Any]:
        if table == "customers":
            return {**item, "tier": "platinum" if item["tier"] != "platinum" else "gold"}
        if table == "orders":
            return {**item, "status": self.random.choice(["paid", "shipped"]), "amount": item["amount"] + 1}
        return {**item, "kind": self.random.choice(["paid", "shipped", "refunded"])}

    def round(self, number: int) -> Path:
        """One micro-batch: inserts, updates and REMOVEs per table, and from round 1 the awkward records."""
        lines: list[str] = []
        for table in self.tables:
            live = self.live[table]
            for _ in range(self.rows):
                item = self._new_item(table)
                live.append(item)
                lines.append(self._change(table, "INSERT", item))
            for index in self.random.sample(range(len(live)), k=min(len(live), max(1, self.rows // 2))):
                live[index] = self._updated(table, live[index])
                lines.append(self._change(table, "MODIFY", live[index]))
            if self.tables[table].mode is TableMode.CURRENT and len(live) > 2:
                gone = live.pop(self.random.randrange(len(live)))
                lines.append(self._change(table, "REMOVE", gone))
        if number >= 1:
            lines += self._awkward_records()
        self.random.shuffle(lines)  # arrival order is not event order; ordering comes from the records
        return self.folder.write(lines)

    def _awkward_records(self) -> list[str]:
        """A late change, a record delivered twice in the batch, last batch's record again, two bad records."""
        customers = self.live["customers"]
        # Late: older than every change of the key, so the stored row never goes back to it.
        late = self._change("customers", "MODIFY", {**customers[0], "name": "a late, stale name"}, BASE_MS + 1)
        again = [self.last_duplicate] if self.last_duplicate else []  # Hudi absorbs it (same record, same order)
        updated = self._updated("orders", self.live["orders"][0])
        self.live["orders"][0] = updated
        self.last_duplicate = self._change("orders", "MODIFY", updated)
        unknown = self.folder.record(change_record("INSERT", "invoices", {"id": "i1"}, created_ms=self.clock))
        self.expected_bad += 2
        self.expected_duplicates += 1
        return [late, *again, self.last_duplicate, self.last_duplicate, unknown, POISON_LINE]


def run_stream_demo(
    spark: Any, workdir: Path, repo_config: Path, *, rounds: int = 4, rows: int = 20
) -> StreamDemoResult:
    """Write the demo's config, generate ``rounds`` micro-batches, stream them, validate every table."""
    from etl.streaming.local import run_local_stream  # Spark only when the demo runs

    started = time.monotonic()
    for part in ("config", "kinesis", "lake"):
        shutil.rmtree(workdir / part, ignore_errors=True)
    config = write_demo_config(workdir / "config", repo_config)
    tables = streamed_tables(config.tables, STREAM)
    folder = KinesisFolder(workdir / "kinesis")
    demo = DemoStream(tables, folder, rows=rows)
    for number in range(rounds):
        demo.round(number)
    LOG.info("%d micro-batch file(s) of Kinesis records written to %s", rounds, folder.root)
    target = StreamTarget(
        stream=STREAM,
        tables=tuple(tables),
        raw_root=f"file://{workdir / 'lake' / 'raw'}",
        error_root=f"file://{workdir / 'lake' / 'streaming' / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
    )
    result = StreamDemoResult(expected_bad_records=demo.expected_bad, expected_duplicates=demo.expected_duplicates)
    result.outcomes = run_local_stream(
        spark, str(folder.root), str(workdir / "lake" / "streaming" / "checkpoint"), target
    )
    for outcome in result.outcomes:
        LOG.info(
            "batch %s: %d record(s), %d bad, %d duplicate(s), %.1f s, %s",
            outcome.batch_tag.rsplit(":", 1)[-1],
            outcome.records,
            outcome.bad_records,
            outcome.duplicates,
            outcome.seconds,
            ", ".join(f"{t.table_id.rsplit('.', 1)[-1]} {t.status}" for t in outcome.tables),
        )
    for table in tables:
        check = check_table(spark, target.base_path(table), table, demo.model.expected_rows(table))
        LOG.info("validated %s: %s", table.table_id, "ok" if check.ok else "MISMATCH")
        result.checks.append(check)
    result.seconds = time.monotonic() - started
    return result


def render_stream_demo(result: StreamDemoResult) -> str:
    headers = ["table", "mode", "expected rows", "spark rows", "hudi-rs", "result"]
    rows = [
        [c.table_id, c.mode, c.expected_rows, c.actual_rows, "same" if c.hudi_rs_ok else f"{c.hudi_rs_rows} rows",
         "ok" if c.ok else f"MISMATCH{': ' + c.error if c.error else ''}"]
        for c in result.checks
    ]  # fmt: skip
    lines = [render_table(headers, rows), ""]
    lines.append(
        f"{len(result.outcomes)} micro-batch(es); bad records set aside: {result.bad_records} "
        f"(expected {result.expected_bad_records}); failed tables: {sum(len(o.failed) for o in result.outcomes)}"
    )
    verdict = "every table validated" if result.ok else "VALIDATION FAILED"
    lines.append(
        f"{sum(c.ok for c in result.checks)}/{len(result.checks)} tables match; {verdict} in {result.seconds:.0f} s"
    )
    return "\n".join(lines)

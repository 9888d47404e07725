"""``python -m sandbox onboard``: a whole Debezium source from one entry, shards merged, an unmatched prefix.

Writes a configuration (the repository's plus ``tables/warehouse.yaml``: ``include: [public.*]`` with
``exclude: [public.tmp_*]`` and one ``from: shard_*.orders`` entry) and a staging folder with a file for each
of N generated tables, the ``orders`` table of S shards (the same order ids in each, a delete in one shard, a
late change in another) and two files no glob takes. Then one sandbox run of the ``shards`` cadence: the File
Manager onboards the N tables from the one entry (their table_config items written from the defaults), files
every shard under the merged table, keeps the other two unmatched; the real File Processor writes the merged
table. ``write`` onboarded tables are then written too (``python -m odp retry``'s path: the File Processor for
those tables), and every written table is checked with Spark and hudi-rs against the source's rows;
``python -m odp status`` lists the unmatched prefixes.

The same run also loads two configured tables of the ``shards`` cadence: ``public.documents`` (a per-table
entry of the one source), whose Debezium Postgres update file, landed for a second sandbox run, leaves its
TOASTed ``body`` unchanged (``__debezium_unavailable_value``): the stored text must survive; and a DynamoDB
table streamed through Kinesis Data Streams and Firehose, one file of Kinesis-form records whose
``ApproximateCreationDateTime`` is in seconds (no precision field), MILLISECOND and MICROSECOND, out of event
order in the file: the table must hold each key's latest change by event time.
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from odp import __main__ as odp_cli
from odp.config.loader import OdpConfig, load_config
from odp.config.models import DEBEZIUM_UNAVAILABLE_VALUE, TableConfig
from odp.config.store import TableConfigStore
from odp.operations.backend import file_tracker
from sandbox.account import SandboxLayout
from sandbox.operator import sandbox_backend
from sandbox.report import RunReport
from sandbox.runner import run_sandbox
from sandbox.streaming_demo import change_record, with_precision
from sandbox.validation import TableCheck, check_table

SOURCE = "warehouse"
ONBOARD_CADENCE = "onboarding"  # the onboarded tables' (not run by the demo's sandbox run: see write)
SHARDS_CADENCE = "shards"  # the merged table's
MERGED_ID = f"{SOURCE}.shard_*.orders"
UNMATCHED_KEYS = (f"{SOURCE}/audit/log/changes+0+0000000000.json", f"{SOURCE}/public/tmp_import/a.json")
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in milliseconds
DOCUMENTS_ID = f"{SOURCE}.public.documents"  # a configured table with a TOASTed column
STREAMED_SOURCE = "sessions_dynamodb"
STREAMED_ID = f"{STREAMED_SOURCE}.app.sessions"  # a DynamoDB table streamed at every precision
DOCUMENTS_UPDATE_KEY = f"{SOURCE}/public/documents/documents+0+0000000002.json"  # landed for the second run


def flattened(op: str, ts: int, **row: Any) -> dict[str, Any]:
    """A Debezium record as ExtractNewRecordState writes it (add.fields=op,source.ts_ms; delete rewrite)."""
    return {**row, "__op": op, "__source_ts_ms": T0 + ts, "__deleted": str(op == "d").lower()}


def table_name(number: int) -> str:
    return f"table_{number:03d}"


def table_changes(number: int) -> list[dict[str, Any]]:
    """One generated table's file: two inserts and an update of the first row."""
    return [
        flattened("c", 0, id=1, name=f"{table_name(number)}-a"),
        flattened("c", 1, id=2, name=f"{table_name(number)}-b"),
        flattened("u", 2, id=1, name=f"{table_name(number)}-a2"),
    ]


def table_rows(number: int) -> list[dict[str, Any]]:
    """The source's rows of a generated table after its changes (written out, not derived from the changes)."""
    return [{"id": 1, "name": f"{table_name(number)}-a2"}, {"id": 2, "name": f"{table_name(number)}-b"}]


def shard_changes(shard: int) -> list[dict[str, Any]]:
    """Every shard inserts orders 1 and 2; shard 2 deletes its order 1; shard 3 ships order 2, and its older
    'paid' change arrives after it (late: the newer value stays)."""
    changes = [flattened("c", 0, order_id=1, status="new"), flattened("c", 1, order_id=2, status="new")]
    if shard == 2:
        changes.append(flattened("d", 10, order_id=1, status=None))
    if shard == 3:
        changes += [flattened("u", 20, order_id=2, status="shipped"), flattened("u", 15, order_id=2, status="paid")]
    return changes


def merged_rows(shards: int) -> list[dict[str, Any]]:
    """The merged table's rows: one per (shard, order)."""
    rows = []
    for shard in range(1, shards + 1):
        name = shard_name(shard)
        if shard != 2:
            rows.append({"shard": name, "order_id": 1, "status": "new"})
        rows.append({"shard": name, "order_id": 2, "status": "shipped" if shard == 3 else "new"})
    return rows


def documents_changes() -> list[dict[str, Any]]:
    """The documents table's first file: two rows with their large ``body`` text."""
    return [
        flattened("c", 0, id=1, title="a", body="the long body of document one"),
        flattened("c", 1, id=2, title="b", body="the long body of document two"),
    ]


def documents_update() -> list[dict[str, Any]]:
    """The second file: updates that leave the TOASTed ``body`` unchanged (REPLICA IDENTITY DEFAULT), so
    Debezium's Postgres connector writes its unavailable-value placeholder for it; document 2 twice."""
    return [
        flattened("u", 5, id=1, title="a2", body=DEBEZIUM_UNAVAILABLE_VALUE),
        flattened("u", 6, id=2, title="b2", body=DEBEZIUM_UNAVAILABLE_VALUE),
        flattened("u", 7, id=2, title="b3", body=DEBEZIUM_UNAVAILABLE_VALUE),
    ]


def documents_rows() -> list[dict[str, Any]]:
    """The source's documents after both files: the titles updated, every body as first written."""
    return [
        {"id": 1, "title": "a2", "body": "the long body of document one"},
        {"id": 2, "title": "b3", "body": "the long body of document two"},
    ]


def _session(event: str, key: str, state: str, precision: str, created: int) -> dict[str, Any]:
    """A Kinesis-form DynamoDB record (the streaming demo's builder, as the published Kinesis sample) whose
    ApproximateCreationDateTime is ``created`` in ``precision`` (``SECONDS``: no precision field)."""
    record = change_record(event, "sessions", {"id": key, "state": state}, created_ms=T0)
    return with_precision(record, precision, created)


def session_records() -> list[dict[str, Any]]:
    """One Firehose file, in this order (not event order; times in milliseconds after T0):
    s-1: MICROSECOND 2000.5, seconds 3000 (latest), MILLISECOND INSERT 1000;
    s-2: seconds INSERT 1000, MICROSECOND 2000.9 (latest), MICROSECOND 2000.1 (same millisecond, earlier),
    MILLISECOND 1500; s-3: MICROSECOND INSERT 1000.0, MILLISECOND 4000 (latest)."""
    micros = T0 * 1000
    return [
        _session("MODIFY", "s-1", "s1-micro", "MICROSECOND", micros + 2_000_500),
        _session("MODIFY", "s-1", "s1-seconds", "SECONDS", T0 // 1000 + 3),
        _session("INSERT", "s-1", "s1-milli", "MILLISECOND", T0 + 1000),
        _session("INSERT", "s-2", "s2-seconds", "SECONDS", T0 // 1000 + 1),
        _session("MODIFY", "s-2", "s2-micro-900", "MICROSECOND", micros + 2_000_900),
        _session("MODIFY", "s-2", "s2-micro-100", "MICROSECOND", micros + 2_000_100),
        _session("MODIFY", "s-2", "s2-milli", "MILLISECOND", T0 + 1500),
        _session("INSERT", "s-3", "s3-micro", "MICROSECOND", micros + 1_000_000),
        _session("MODIFY", "s-3", "s3-milli", "MILLISECOND", T0 + 4000),
    ]


def session_rows() -> list[dict[str, Any]]:
    """The DynamoDB table after the file: each key's latest change by event time (written out by hand)."""
    return [
        {"id": "s-1", "state": "s1-seconds"},
        {"id": "s-2", "state": "s2-micro-900"},
        {"id": "s-3", "state": "s3-milli"},
    ]


def shard_name(shard: int) -> str:
    return f"shard_{shard:03d}"


def _json_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def write_source(workdir: Path, repo_config: Path, *, tables: int, shards: int) -> tuple[OdpConfig, SandboxLayout]:
    """The configuration and the staging folder of the demo, under ``workdir`` (emptied first)."""
    if workdir.exists():
        shutil.rmtree(workdir)
    config_dir = workdir / "config"
    shutil.copytree(repo_config, config_dir)
    cadences_file = config_dir / "cadences.yaml"
    cadences = yaml.safe_load(cadences_file.read_text(encoding="utf-8"))
    for name in (ONBOARD_CADENCE, SHARDS_CADENCE):
        cadences["cadences"][name] = {"schedule": "rate(1 hour)", "batch_size": 50}
    cadences_file.write_text(yaml.safe_dump(cadences, sort_keys=False), encoding="utf-8")
    source = {
        "source": SOURCE,
        "format": "debezium",
        "defaults": {
            "primary_key": ["id"],
            "cadence": ONBOARD_CADENCE,
            "database": f"{SOURCE}_raw",
            "debezium_shape": "flattened",
        },
        "include": ["public.*"],
        "exclude": ["public.tmp_*"],
        "tables": [
            {
                "from": "shard_*.orders",
                "target_table": "orders",
                "primary_key": ["order_id"],
                "cadence": SHARDS_CADENCE,
            },
            {
                "schema": "public",
                "table": "documents",
                "primary_key": ["id"],
                "cadence": SHARDS_CADENCE,
                "columns": {"id": "int", "title": "string", "body": "string"},
            },
        ],
    }
    (config_dir / "tables" / f"{SOURCE}.yaml").write_text(yaml.safe_dump(source, sort_keys=False), encoding="utf-8")
    streamed = {
        "source": STREAMED_SOURCE,
        "format": "dynamodb",
        "tables": [
            {
                "schema": "app",
                "table": "sessions",
                "primary_key": ["id"],
                "cadence": SHARDS_CADENCE,
                "database": f"{STREAMED_SOURCE}_raw",
                "columns": {"id": "string", "state": "string"},
            }
        ],
    }
    (config_dir / "tables" / f"{STREAMED_SOURCE}.yaml").write_text(
        yaml.safe_dump(streamed, sort_keys=False), encoding="utf-8"
    )
    staging = workdir / "staging"
    for number in range(tables):
        _json_lines(
            staging / SOURCE / "public" / table_name(number) / "changes+0+0000000000.json", table_changes(number)
        )
    for shard in range(1, shards + 1):
        _json_lines(staging / SOURCE / shard_name(shard) / "orders" / "orders+0+0000000000.json", shard_changes(shard))
    for key in UNMATCHED_KEYS:
        _json_lines(staging / key, [flattened("c", 0, id=1)])
    _json_lines(staging / SOURCE / "public" / "documents" / "documents+0+0000000000.json", documents_changes())
    firehose_key = "2026/01/01/00/odp-sessions-firehose-1-2026-01-01-00-00-00-0001.jsonl"
    _json_lines(staging / STREAMED_SOURCE / "app" / "sessions" / firehose_key, session_records())
    return load_config(config_dir), SandboxLayout(lake=workdir / "lake", staging=staging)


@dataclass
class OnboardingResult:
    run: RunReport
    toast_run: RunReport  # the second sandbox run: the documents update file with TOAST placeholders
    onboarded: int  # tables the File Manager onboarded from the one include entry
    pending: int  # of those, how many have their file landed
    checks: list[TableCheck] = field(default_factory=list)
    status: str = ""  # python -m odp status --cadence shards, as printed
    unmatched: str = ""  # python -m odp status --unmatched, as printed

    @property
    def ok(self) -> bool:
        return self.run.ok and self.toast_run.ok and bool(self.checks) and all(check.ok for check in self.checks)


def _odp(layout: SandboxLayout, *argv: str) -> str:
    """``python -m odp --sandbox <lake> --staging <staging> ...``, its output."""
    out = io.StringIO()
    odp_cli.run(
        odp_cli._parser().parse_args(["--sandbox", str(layout.lake), "--staging", str(layout.staging), *argv]), out=out
    )
    return out.getvalue()


def _checked(spark: Any, layout: SandboxLayout, table: TableConfig, rows: list[dict[str, Any]]) -> TableCheck:
    columns = dict.fromkeys(rows[0], "string")  # the compared columns (validation reads names only)
    base_path = f"{layout.raw_root}/{table.database}/{table.target_table}"
    return check_table(spark, base_path, table.model_copy(update={"columns": columns}), rows)


def run_onboarding_demo(
    spark: Any, workdir: Path, repo_config: Path, *, tables: int = 200, shards: int = 4, write: int = 1
) -> OnboardingResult:
    """Generate, run the ``shards`` cadence through the sandbox, land the documents' TOAST update and run it
    again, write ``write`` onboarded tables, check."""
    config, layout = write_source(workdir, repo_config, tables=tables, shards=shards)
    report = run_sandbox(config, layout, spark, cadence=SHARDS_CADENCE)
    _json_lines(layout.staging / DOCUMENTS_UPDATE_KEY, documents_update())
    toast_report = run_sandbox(config, layout, spark, cadence=SHARDS_CADENCE)
    written = [f"{SOURCE}.public.{table_name(n)}" for n in range(min(write, tables))]
    with sandbox_backend(layout.lake, layout.staging) as backend:
        store = TableConfigStore(backend.dynamodb.Table(backend.names.table_config))
        onboarded = [t for t in store.scan(cadence=ONBOARD_CADENCE) if t.onboarded]
        pending = sum(1 for t in onboarded if file_tracker(backend).landed_files(t.table_id))
        if written:
            backend.start_run(ONBOARD_CADENCE, written, "onboard-demo")
        merged = store.get(MERGED_ID)
        checks = [_checked(spark, layout, merged, merged_rows(shards))]
        checks.append(_checked(spark, layout, store.get(DOCUMENTS_ID), documents_rows()))
        checks.append(_checked(spark, layout, store.get(STREAMED_ID), session_rows()))
        checks += [_checked(spark, layout, store.get(t), table_rows(n)) for n, t in enumerate(written)]
    return OnboardingResult(
        run=report,
        toast_run=toast_report,
        onboarded=len(onboarded),
        pending=pending,
        checks=checks,
        status=_odp(layout, "status", "--cadence", SHARDS_CADENCE),
        unmatched=_odp(layout, "status", "--unmatched"),
    )


def render_onboarding(result: OnboardingResult) -> str:
    lines = [
        f"onboarded from one include entry: {result.onboarded} table(s), {result.pending} with their file landed",
        f"announced {result.run.announced_files} file(s); not applied: {len(result.run.skipped_files)}",
        f"second run (the documents' TOAST update): announced {result.toast_run.announced_files} file(s)",
    ]
    lines += [f"  {key}: {reason}" for key, reason in result.run.skipped_files.items()]
    for check in result.checks:
        verdict = "ok" if check.ok else f"FAILED ({check.error or 'rows or checksum differ'})"
        lines.append(
            f"  {check.table_id}: {check.actual_rows}/{check.expected_rows} rows (Spark), "
            f"{check.hudi_rs_rows}/{check.expected_rows} (hudi-rs): {verdict}"
        )
    lines += [result.status.rstrip(), result.unmatched.rstrip(), "OK" if result.ok else "FAILED"]
    return "\n".join(lines)

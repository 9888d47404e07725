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
from odp.config.models import TableConfig
from odp.config.store import TableConfigStore
from odp.operations.backend import file_tracker
from sandbox.account import SandboxLayout
from sandbox.operator import sandbox_backend
from sandbox.report import RunReport
from sandbox.runner import run_sandbox
from sandbox.validation import TableCheck, check_table

SOURCE = "warehouse"
ONBOARD_CADENCE = "onboarding"  # the onboarded tables' (not run by the demo's sandbox run: see write)
SHARDS_CADENCE = "shards"  # the merged table's
MERGED_ID = f"{SOURCE}.shard_*.orders"
UNMATCHED_KEYS = (f"{SOURCE}/audit/log/changes+0+0000000000.json", f"{SOURCE}/public/tmp_import/a.json")
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in milliseconds


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
            }
        ],
    }
    (config_dir / "tables" / f"{SOURCE}.yaml").write_text(yaml.safe_dump(source, sort_keys=False), encoding="utf-8")
    staging = workdir / "staging"
    for number in range(tables):
        _json_lines(
            staging / SOURCE / "public" / table_name(number) / "changes+0+0000000000.json", table_changes(number)
        )
    for shard in range(1, shards + 1):
        _json_lines(staging / SOURCE / shard_name(shard) / "orders" / "orders+0+0000000000.json", shard_changes(shard))
    for key in UNMATCHED_KEYS:
        _json_lines(staging / key, [flattened("c", 0, id=1)])
    return load_config(config_dir), SandboxLayout(lake=workdir / "lake", staging=staging)


@dataclass
class OnboardingResult:
    run: RunReport
    onboarded: int  # tables the File Manager onboarded from the one include entry
    pending: int  # of those, how many have their file landed
    checks: list[TableCheck] = field(default_factory=list)
    status: str = ""  # python -m odp status --cadence shards, as printed
    unmatched: str = ""  # python -m odp status --unmatched, as printed

    @property
    def ok(self) -> bool:
        return self.run.ok and bool(self.checks) and all(check.ok for check in self.checks)


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
    spark: Any, workdir: Path, repo_config: Path, *, tables: int = 200, shards: int = 4, write: int = 3
) -> OnboardingResult:
    """Generate, run the ``shards`` cadence through the sandbox, write ``write`` onboarded tables, check."""
    config, layout = write_source(workdir, repo_config, tables=tables, shards=shards)
    report = run_sandbox(config, layout, spark, cadence=SHARDS_CADENCE)
    written = [f"{SOURCE}.public.{table_name(n)}" for n in range(min(write, tables))]
    with sandbox_backend(layout.lake, layout.staging) as backend:
        store = TableConfigStore(backend.dynamodb.Table(backend.names.table_config))
        onboarded = [t for t in store.scan(cadence=ONBOARD_CADENCE) if t.onboarded]
        pending = sum(1 for t in onboarded if file_tracker(backend).landed_files(t.table_id))
        if written:
            backend.start_run(ONBOARD_CADENCE, written, "onboard-demo")
        merged = store.get(MERGED_ID)
        checks = [_checked(spark, layout, merged, merged_rows(shards))]
        checks += [_checked(spark, layout, store.get(t), table_rows(n)) for n, t in enumerate(written)]
    return OnboardingResult(
        run=report,
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

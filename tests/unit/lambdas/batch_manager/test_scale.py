"""The Batch Manager at production scale: 3,000 configured tables, 20,400 pending files.

A plan reads the pending files in one paginated Scan of the sparse pending index (its pages grow with the
pending files of every cadence, never with the tables), the cadence's active tables in one paginated Query, and
leases in one BatchGetItem per 100 pending tables: never a call per table (docs/decisions/024).

Layout: 1,500 tables every 10 minutes and 300 hourly (10 pending files each), 600 tables of
another cadence and 600 deactivated tables (2 pending files each, which no plan here may count). moto is slow per item (see tests/unit/lambdas/moto_reads.py), so seeding goes through
its table model and reads through :func:`partition_reads`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lambdas.batch_manager import handler as batch_manager_handler
from lambdas.batch_manager.manager import BatchManager
from odp.config.items import batch_config_item, table_config_item
from odp.config.loader import OdpConfig
from odp.contracts.batches import PlanLocation
from odp.naming import TrackerTableNames
from odp.tracker import make_file_id
from odp.tracker.items import iso
from tests.support.aws import CallCounter, Clock
from tests.support.batch_manager import pending_file
from tests.support.moto_reads import partition_reads, seed_items
from tests.support.paths import AWS_REGION

CONFIGURED = 3_000
FILES = 20_400
BATCH_SIZE = 25
FAST, HOURLY, OTHER = "every_10_minutes", "hourly", "every_15_minutes"
START = datetime(2024, 5, 1, 0, 0, tzinfo=UTC)
FILES_PER_PLANNED_TABLE = 10


def cadence_of(number: int) -> str | None:
    """Tables 0-1499 every 10 minutes, 1500-1799 hourly, 1800-2399 every 15 minutes, the rest inactive."""
    if number < 1_500:
        return FAST
    if number < 1_800:
        return HOURLY
    if number < 2_400:
        return OTHER
    return None


def files_of(number: int) -> int:
    """10 files per table of the planned cadences; 2 per table of the other 1,200."""
    return FILES_PER_PLANNED_TABLE if number < 1_800 else 2


def table_id(number: int) -> str:
    return f"src.sales.table_{number:05d}"


def oldest_minute(number: int) -> int:
    """A scrambled, distinct landing minute per table, so 'oldest first' is not table order."""
    return (number * 7_919) % CONFIGURED


LEASED = set(range(0, 1_500, 50))  # 30 live leases in the fast cadence: skipped
EXPIRED = set(range(25, 1_500, 50))  # 30 expired leases: planned as usual


@pytest.fixture
def scale(
    tracker_tables: dict[str, Any], tracker_names: TrackerTableNames, repo_config: OdpConfig, clock: Clock
) -> dict[int, int]:
    """Seeds everything; returns table number -> pending bytes (the test's own bookkeeping)."""
    assert sum(files_of(n) for n in range(CONFIGURED)) == FILES
    template = repo_config.table("taxi_trips_dms.taxi_trips.table_1")
    with tracker_tables["table_config"].batch_writer() as writer:
        for number in range(CONFIGURED):
            cadence = cadence_of(number)
            table = template.model_copy(
                update={
                    "source": "src",
                    "schema_name": "sales",
                    "table": f"table_{number:05d}",
                    "cadence": cadence or OTHER,
                    "is_active": cadence is not None,
                }
            )
            writer.put_item(Item=table_config_item(table))
    for name, cadence in repo_config.cadences.cadences.items():
        tracker_tables["batch_config"].put_item(
            Item={**batch_config_item("test", name, cadence), "batch_size": BATCH_SIZE}
        )

    pending_bytes = dict.fromkeys(range(CONFIGURED), 0)
    template_item = pending_file(table_id(0), "0.parquet", iso(START))

    def files() -> Any:
        for number in range(CONFIGURED):
            first = iso(START + timedelta(minutes=oldest_minute(number)))
            for nth in range(files_of(number)):
                key = f"src/sales/table_{number:05d}/{nth:03d}.parquet"
                size = 1_000 + nth
                pending_bytes[number] += size
                yield {
                    **template_item,
                    "table_id": table_id(number),
                    "pending_table_id": table_id(number),
                    "file_id": make_file_id(template_item["bucket"], key, template_item["etag"]),
                    "key": key,
                    "size": size,
                    "landed_at": first.replace(":00.000Z", f":{nth:02d}.000Z"),  # 0th file is the oldest
                }

    assert seed_items(tracker_names.file_tracker, AWS_REGION, files()) == FILES
    now = int(clock().timestamp())
    leases = [
        {
            "table_id": table_id(n),
            "lease_owner": "another-run",
            "lease_expires_at": now + (600 if n in LEASED else -600),
            "status": "updating_table",
        }
        for n in LEASED | EXPIRED
    ]
    seed_items(tracker_names.processing_tracker, AWS_REGION, leases)
    return pending_bytes


def plan_counted(manager: BatchManager, tracker_tables: dict[str, Any], cadence: str) -> tuple[dict, CallCounter]:
    counter = CallCounter(tracker_tables["file_tracker"].meta.client)
    with partition_reads():
        event = {"action": "plan", "cadence": cadence, "execution_name": "exec"}
        return batch_manager_handler.handle(event, None, manager), counter


@pytest.mark.slow
def test_plan_at_scale_reads_pending_files_in_one_scan_never_per_table(
    manager: BatchManager, tracker_tables: dict[str, Any], tracker_names: TrackerTableNames, scale: dict[int, int]
) -> None:
    result, counter = plan_counted(manager, tracker_tables, FAST)

    active = [n for n in range(CONFIGURED) if cadence_of(n) == FAST]
    assert counter.targets[("Query", tracker_names.file_tracker, "pending_by_table")] == 0
    scan_pages = counter.targets[("Scan", tracker_names.file_tracker, "pending_by_table")]
    assert 1 <= scan_pages <= FILES // 1_000  # 1 MB pages of 20,400 files: far fewer calls than tables
    assert counter.calls["Scan"] == scan_pages  # the pending index only, never a table
    config_pages = counter.targets[("Query", tracker_names.table_config, "active_by_cadence")]
    assert 1 <= config_pages <= 2
    assert counter.targets[("BatchGetItem", tracker_names.processing_tracker, None)] == math.ceil(len(active) / 100)
    assert counter.targets[("GetItem", tracker_names.batch_config, None)] == 1
    assert counter.total == 1 + config_pages + scan_pages + math.ceil(len(active) / 100)

    eligible = [n for n in active if n not in LEASED]
    expected_order = [table_id(n) for n in sorted(eligible, key=oldest_minute)]
    batches = [batch.to_payload() for batch in manager.plans.read_plan(PlanLocation.model_validate(result["location"]))]
    assert result["batches"] == len(batches) == math.ceil(len(eligible) / BATCH_SIZE)
    assert all(len(batch["table_ids"]) <= BATCH_SIZE for batch in batches)
    assert [table for batch in batches for table in batch["table_ids"]] == expected_order
    oldest = min(oldest_minute(n) for n in active)
    assert result["pending"] == {
        "tables": len(active),
        "files": len(active) * FILES_PER_PLANNED_TABLE,
        "bytes": sum(scale[n] for n in active),
        "oldest_age_seconds": int((datetime(2024, 5, 1, 12, 0, tzinfo=UTC) - START).total_seconds()) - oldest * 60,
    }

    # A cadence with a fifth of the active tables reads the same pending files: the same scan, fewer lease reads.
    hourly, hourly_counter = plan_counted(manager, tracker_tables, HOURLY)
    hourly_active = [n for n in range(CONFIGURED) if cadence_of(n) == HOURLY]
    assert hourly_counter.targets[("Scan", tracker_names.file_tracker, "pending_by_table")] == scan_pages
    assert (
        hourly_counter.calls["Query"]
        == hourly_counter.targets[("Query", tracker_names.table_config, "active_by_cadence")]
    )
    assert hourly_counter.calls["Query"] <= 2
    assert hourly_counter.calls["BatchGetItem"] == math.ceil(len(hourly_active) / 100)
    assert hourly["batches"] == math.ceil(len(hourly_active) / BATCH_SIZE)
    assert hourly["pending"]["files"] == len(hourly_active) * FILES_PER_PLANNED_TABLE

"""The lease keeper renews a held lease and notices when another run took it (moto, no Spark)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from etl.lease import LeaseKeeper
from odp.tracker import LeaseLostError, ProcessingTracker


def test_lease_keeper_renews_then_reports_a_lost_lease(tracker_tables: dict[str, Any]) -> None:
    tracker = ProcessingTracker(tracker_tables["processing_tracker"], tracker_tables["processing_tracker_history"])
    assert tracker.acquire("a.b.c", "run-1", lease_seconds=3)
    first_expiry = tracker.state("a.b.c").lease_expires_at
    with LeaseKeeper(tracker, "a.b.c", "run-1", lease_seconds=3) as keeper:
        time.sleep(2.2)  # renews every second
        keeper.check()
        assert tracker.state("a.b.c").lease_expires_at > first_expiry
        tracker_tables["processing_tracker"].update_item(
            Key={"table_id": "a.b.c"},
            UpdateExpression="SET lease_owner = :other",
            ExpressionAttributeValues={":other": "run-2"},
        )
        time.sleep(1.5)
        with pytest.raises(LeaseLostError):
            keeper.check()

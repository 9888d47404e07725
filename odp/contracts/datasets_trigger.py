"""What starts the datasets state machine, declared once: the changed tables a File Processor names, and the event a
warm tick sends in place of a scheduled execution's.

A scheduled cadence's execution ends with the Batch Manager's summary, whose ``changed_tables`` EventBridge carries to
the datasets state machine (its SUCCEEDED event's ``detail.output``). A warm cadence has no execution per tick, so
each tick that planned runs puts an event of its own on the default bus (:func:`warm_tick_event`): its ``detail`` has
the same two fields the state machine reads (``executionArn``, ``output``), and the datasets rule matches it by
source, detail type and environment (infrastructure/jobs/datasets.py). stepfunctions/datasets.glue.asl.json reads
both alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from odp.config.datasets import ALL_TABLES

# The changed tables handed to the datasets state machine (--odp_changed_tables, in the EventBridge event); more than
# this many and the answer is [ALL_TABLES]: every dataset is refreshed (each finds its sources' new commits itself,
# waits for a source without one, or has nothing to do). 500 ids stay far below an event's 256 KB.
MAX_CHANGED_TABLES = 500
WARM_TICK_SOURCE = "odp.file-processor"
WARM_TICK_DETAIL_TYPE = "ODP warm tick finished"


def changed_tables(table_ids: Sequence[str]) -> list[str]:
    """Pure: the tables a run names to the datasets state machine: each, or [ALL_TABLES] past MAX_CHANGED_TABLES."""
    return list(table_ids) if len(table_ids) <= MAX_CHANGED_TABLES else [ALL_TABLES]


def warm_tick_event(environment: str, tick: str, table_ids: Sequence[str]) -> dict[str, Any]:
    """Pure: the PutEvents entry of a warm tick that planned ``table_ids``: ``detail`` as a File Processor
    execution's SUCCEEDED event has it (``executionArn``: the tick, ``output``: a JSON string whose
    ``summary.changed_tables`` names the tables), plus the environment the datasets rule matches."""
    output = {"summary": {"changed_tables": changed_tables(table_ids)}}
    detail = {"environment": environment, "executionArn": tick, "output": json.dumps(output)}
    return {"Source": WARM_TICK_SOURCE, "DetailType": WARM_TICK_DETAIL_TYPE, "Detail": json.dumps(detail)}

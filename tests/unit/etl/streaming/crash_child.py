"""A local streaming job in its own process, for the crash test: ``python -m tests.unit.etl.streaming.crash_child``.

Arguments: a JSON file with the target and folders, and optionally ``--pause-after <table_id> <n>``:
after the n-th commit (1-based) of that table, write ``<marker>`` and wait to be killed. The outcomes
of the batches it ran are written to ``<outcomes>`` as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path

from pydantic import BaseModel

from etl.hudi.options import HudiProfile, WriteProfile
from etl.spark_session import local_spark_session
from etl.streaming.batch import StreamTarget
from etl.streaming.local import run_local_stream
from odp.config.models import TableConfig
from odp.faults import on_fault


class PauseAfterCommit:
    """The action at ``streaming.after_commit``: after the n-th commit of one table, mark it and wait."""

    def __init__(self, table_id: str, nth: int, marker: Path) -> None:
        self.table_id, self.nth, self.marker, self.seen = table_id, nth, marker, 0

    def __call__(self, *, table_id: str, instant: str) -> None:
        if table_id != self.table_id:
            return
        self.seen += 1
        if self.seen == self.nth:
            self.marker.write_text(instant)
            time.sleep(600)  # the parent kills this process with SIGKILL here


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("job", type=Path)
    parser.add_argument("--pause-after", nargs=2, metavar=("TABLE_ID", "N"))
    args = parser.parse_args()
    job = json.loads(args.job.read_text())
    target = StreamTarget(
        stream=job["stream"],
        tables=tuple(TableConfig.model_validate(table) for table in job["tables"]),
        raw_root=job["raw_root"],
        error_root=job["error_root"],
        profile=WriteProfile(HudiProfile.LOCAL),
    )
    spark = local_spark_session("odp-stream-crash-test")
    spark.sparkContext.setLogLevel("ERROR")
    with ExitStack() as stack:
        if args.pause_after:
            pause = PauseAfterCommit(args.pause_after[0], int(args.pause_after[1]), Path(job["marker"]))
            stack.enter_context(on_fault("streaming.after_commit", pause))
        outcomes = run_local_stream(spark, job["source"], job["checkpoint"], target)
    Path(job["outcomes"]).write_text(json.dumps([asdict(outcome) for outcome in outcomes], default=_stored_form))
    return 0


def _stored_form(value: object) -> object:
    """A table's run (a pydantic TableRun inside the dataclass outcome) as JSON: its fields, as the ledger keeps them."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


if __name__ == "__main__":
    sys.exit(main())

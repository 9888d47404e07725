"""A warm tick's event (odp.contracts.datasets_trigger) starts the datasets state machine as a scheduled File Processor
execution's SUCCEEDED event does: stepfunctions/datasets.glue.asl.json on moto, started with the event EventBridge
forwards, its Glue task bound to a recorder instead of the dataset job (tests/e2e/test_sandbox_run_datasets.py runs
the job itself after a scheduled execution). No Spark."""

from __future__ import annotations

import json
from pathlib import Path

from odp.config.loader import load_config
from odp.contracts.datasets_trigger import MAX_CHANGED_TABLES, warm_tick_event
from sandbox.account import ENVIRONMENT, REGION, LocalAccount, SandboxLayout, environment_variables
from sandbox.datasets_flow import DatasetsStateMachine
from sandbox.moto_patches import GlueRunResult
from sandbox.runner import PROCESS_ENVIRONMENT

TABLES = ["taxi_trips_dms.taxi_trips.table_2", "taxi_trips_dms.taxi_trips.table_3"]


def forwarded(entry: dict) -> dict:
    """The event as EventBridge hands it to a Step Functions target: the PutEvents entry's fields, ``detail`` as JSON."""
    return {
        "version": "0",
        "source": entry["Source"],
        "detail-type": entry["DetailType"],
        "region": REGION,
        "detail": json.loads(entry["Detail"]),
    }


def test_a_warm_ticks_event_starts_the_dataset_job_with_the_tables_it_names(repo_root: Path, tmp_path: Path) -> None:
    layout = SandboxLayout(lake=tmp_path / "lake", staging=tmp_path / "staging")
    layout.staging.mkdir(parents=True)
    started: list[dict[str, str]] = []

    def dataset_job(job_name: str, run_id: str, arguments: dict[str, str]) -> GlueRunResult:
        started.append(arguments)
        return GlueRunResult("SUCCEEDED")

    many = [f"src.app.t{n:04d}" for n in range(MAX_CHANGED_TABLES + 1)]
    with environment_variables(PROCESS_ENVIRONMENT), LocalAccount(load_config(repo_root / "config"), layout) as account:
        machine = DatasetsStateMachine(account, spark=None)
        machine.create()
        machine.bindings.glue_jobs[machine.job_name] = dataset_job
        tick = machine.run(forwarded(warm_tick_event(ENVIRONMENT, "warm:jr_1:tick-3", TABLES)))
        past_bound = machine.run(forwarded(warm_tick_event(ENVIRONMENT, "warm:jr_1:tick-4", many)))

    assert (tick.status, past_bound.status) == ("SUCCEEDED", "SUCCEEDED"), (tick, past_bound)
    assert [json.loads(arguments["--odp_changed_tables"]) for arguments in started] == [TABLES, ["*"]]
    assert {arguments["--odp_engine"] for arguments in started} == {"glue"}

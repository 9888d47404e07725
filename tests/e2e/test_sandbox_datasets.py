"""The demo's datasets on the sandbox: refreshed after every round through the real flow, each checked
against the plain-Python model of raw table_1 (sandbox.datasets), and a failed rule leaves trips_clean as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from odp.config.loader import load_config
from sandbox.account import SandboxLayout
from sandbox.datasets import TRIPS
from sandbox.demo import run_demo


@pytest.mark.spark
@pytest.mark.slow
def test_demo_datasets_follow_the_model_every_round(repo_root: Path, tmp_path: Path, spark: object) -> None:
    config = load_config(repo_root / "config")
    layout = SandboxLayout(lake=tmp_path / "lake", staging=tmp_path / "staging")
    layout.staging.mkdir()
    result = run_demo(config, layout, spark, table_ids=(TRIPS,), rounds=2, rotate_cdc=False, consumer_read=False)
    dataset_checks = [c for c in result.round_checks if "dataset" in c.description]
    assert [c.description for c in dataset_checks] == [
        f"round {n}: dataset {check}"
        for n in range(3)
        for check in (
            "trips_clean: refreshed",
            "revenue_per_vendor_day: refreshed",
            "trips_clean: matches the model",
            "revenue_per_vendor_day: matches the model",
        )
    ] + ["dataset trips_clean: a failed rule leaves it untouched"]
    assert all(c.ok for c in dataset_checks), [c for c in dataset_checks if not c.ok]
    assert result.ok

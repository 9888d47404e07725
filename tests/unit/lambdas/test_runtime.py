"""lambdas.runtime: metrics never leak from one invocation into the next."""

from __future__ import annotations

import json

import pytest
from aws_lambda_powertools.metrics import MetricUnit

from lambdas.runtime import new_metrics, publish_metrics


def test_disabled_metrics_are_cleared_so_the_next_invocation_starts_empty(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The sandbox runs with metrics disabled; Powertools then skips its own clear.
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    for _ in range(2):
        metrics = new_metrics({}, service="")
        metrics.add_dimension(name="cadence", value="hourly")
        metrics.add_metric(name="PendingFiles", unit=MetricUnit.Count, value=3)
        publish_metrics(metrics)
    # A later, enabled invocation publishes only its own metric, once, with one dimension.
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED")
    capsys.readouterr()
    metrics = new_metrics({}, service="")
    metrics.add_dimension(name="cadence", value="hourly")
    metrics.add_metric(name="PendingFiles", unit=MetricUnit.Count, value=7)
    publish_metrics(metrics)
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    blob = json.loads(line)
    assert blob["PendingFiles"] == [7.0]
    assert blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["cadence"]]

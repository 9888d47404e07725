"""Names spelled once: tracker tables, Lambda environment variables, schedules."""

from __future__ import annotations

import pytest

from odp.config.models import schedule_interval_minutes
from odp.contracts.lambda_env import LambdaConfigurationError, lambda_environment, tracker_names_from_env
from odp.naming import TrackerTableNames, file_processor_job_name


def test_lambda_environment_round_trips_the_table_names() -> None:
    names = TrackerTableNames.for_environment("prod")
    variables = lambda_environment("prod", names, service="file-manager")
    assert variables["ODP_TABLE_FILE_TRACKER"] == "odp-prod-file-tracker"
    assert variables["POWERTOOLS_SERVICE_NAME"] == "file-manager"
    assert tracker_names_from_env(variables) == names


def test_missing_variables_are_all_named() -> None:
    with pytest.raises(LambdaConfigurationError, match="ODP_TABLE_FILE_TRACKER, ODP_TABLE_FILE_TRACKER_HISTORY"):
        tracker_names_from_env({})


def test_job_names_carry_environment_and_cadence() -> None:
    assert file_processor_job_name("test", "hourly") == "odp-test-file-processor-hourly"


@pytest.mark.parametrize(
    ("expression", "minutes"),
    [
        ("rate(1 minute)", 1),
        ("rate(10 minutes)", 10),
        ("rate(2 hours)", 120),
        ("rate(1 day)", 1440),
        ("cron(5 * * * ? *)", None),
    ],
)
def test_schedule_intervals(expression: str, minutes: int | None) -> None:
    assert schedule_interval_minutes(expression) == minutes

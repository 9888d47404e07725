"""Answers of EMR Serverless for botocore's Stubber (valid against the service model), shared by the canary tests
and the permission test's recording of the canary's EMR run."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.stub import Stubber

RUN_ID = "run1"


def run_arn(application_id: str, run_id: str = RUN_ID) -> str:
    return f"arn:aws:emr-serverless:eu-west-1:111111111111:/applications/{application_id}/jobruns/{run_id}"


def stub_job_run(stub: Stubber, request: dict[str, Any], states: list[tuple[str, str]]) -> None:
    """``start_job_run`` of ``request`` answers run :data:`RUN_ID`; each following ``get_job_run`` answers the
    next (state, stateDetails) of ``states``."""
    application = request["applicationId"]
    stub.add_response("start_job_run", {"applicationId": application, "jobRunId": RUN_ID, "arn": run_arn(application)})
    run = {
        "applicationId": application,
        "jobRunId": RUN_ID,
        "arn": run_arn(application),
        "createdBy": "arn:aws:iam::111111111111:role/odp-dev-config-loader",
        "createdAt": datetime(2026, 1, 1),
        "updatedAt": datetime(2026, 1, 1),
        "executionRole": request["executionRoleArn"],
        "releaseLabel": "emr-7.12.0",
        "jobDriver": request["jobDriver"],
    }
    for state, details in states:
        stub.add_response("get_job_run", {"jobRun": {**run, "state": state, "stateDetails": details}})

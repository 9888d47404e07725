"""EMR Serverless job runs in moto: a lease holder that is running or has ended."""

from __future__ import annotations

import boto3

from odp.tracker import JobRunRef
from odp.tracker.job_runs import EMR_SERVERLESS_PREFIX
from tests.support.paths import AWS_REGION


def moto_emr_run(*, cancel: bool) -> JobRunRef:
    """A job run of a new moto EMR Serverless application, cancelled (ended) or left running."""
    client = boto3.client("emr-serverless", region_name=AWS_REGION)
    application = client.create_application(name="odp", releaseLabel="emr-7.5.0", type="SPARK")["applicationId"]
    run = client.start_job_run(
        applicationId=application,
        executionRoleArn="arn:aws:iam::123456789012:role/odp-emr",
        jobDriver={"sparkSubmit": {"entryPoint": "s3://artifacts/emr_serverless.py"}},
    )["jobRunId"]
    if cancel:
        client.cancel_job_run(applicationId=application, jobRunId=run)
    return JobRunRef(f"{EMR_SERVERLESS_PREFIX}{application}", run)

"""Stop ODP's EMR Serverless application before CloudFormation updates it, and wait until it is stopped.

A CloudFormation custom resource (``Custom::EmrApplicationStop``) the application depends on: CloudFormation creates or
updates it first, so when the application's settings change (its image above all) this handler runs before the
application's update. EMR Serverless updates an application only while it is CREATED or STOPPED (UpdateApplication;
its "Updating running applications" page: a custom image update of a started application is not supported when the
application has pre-initialized capacity, as ODP's has). The handler:

1. finds the application's id from the stack (``cloudformation:DescribeStackResource`` of the application's logical
   id: the custom resource comes first, so it cannot ``Ref`` the application); none yet (the stack's first create):
   nothing to stop;
2. ``emr-serverless:GetApplication``; STARTED or STARTING: ``emr-serverless:StopApplication`` (refused while job runs
   are running: asked again at the next poll, the runs are never cancelled); every :data:`POLL_SECONDS` until the
   state is STOPPED, CREATED or TERMINATED;
3. fails, naming the application and its state, when the function's time runs out first (a long job run holds the
   application: wait for it, or stop the application by hand, and deploy again).

It answers CloudFormation itself (the response URL of the event), success or failure, so a deployment never hangs on
it. A Delete does nothing. Its role may call only these three actions, the first on its stack, the others on this
application (granted by a policy that names the application, so created after it: on the first deploy that adds this
custom resource to a stack with an application, that policy is not there yet, and a denied GetApplication on Create is
reported in the response's data instead of failing: the application's update then fails as before if it is started,
and the next deploys stop it).
"""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

import boto3
from botocore.exceptions import ClientError

LOGGER = logging.getLogger(__name__)
LOGGER.setLevel(logging.INFO)
POLL_SECONDS = 10
MARGIN_SECONDS = 30  # kept from the function's remaining time to answer CloudFormation
SETTLED = ("STOPPED", "CREATED", "TERMINATED")  # UpdateApplication accepts CREATED and STOPPED; TERMINATED is gone
STOPPABLE = ("STARTED", "STARTING")
# StopApplication refuses while job runs are running (and while the application is still starting): ask again later.
RETRIED_CODES = ("ValidationException", "ConflictException")


class StopTimeoutError(RuntimeError):
    """The application did not reach a stopped state in the time the function had."""


def application_id(cloudformation: Any, stack_id: str, logical_id: str) -> str | None:
    """The physical id (the application id) of ``logical_id`` in the stack; None when the stack has no such resource
    yet (the custom resource is created before the application)."""
    try:
        found = cloudformation.describe_stack_resource(StackName=stack_id, LogicalResourceId=logical_id)
    except ClientError as error:
        if error.response["Error"]["Code"] == "ValidationError" and "does not exist" in str(error):
            return None
        raise
    return found["StackResourceDetail"].get("PhysicalResourceId") or None


def stop_and_wait(
    emr: Any,
    application: str,
    *,
    seconds_left: Callable[[], float],
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Stop ``application`` if it is started or starting and wait until it is STOPPED (or CREATED / TERMINATED);
    returns that state.

    Raises:
        StopTimeoutError: ``seconds_left()`` reached 0 first; the message names the application and its state.
        botocore.exceptions.ClientError: any other refusal (a missing permission, an unknown application).
    """
    while True:
        state = emr.get_application(applicationId=application)["application"]["state"]
        if state in SETTLED:
            return state
        if state in STOPPABLE:
            try:
                emr.stop_application(applicationId=application)
            except ClientError as error:
                if error.response["Error"]["Code"] not in RETRIED_CODES:
                    raise
                LOGGER.info("StopApplication refused for now (%s): %s", state, error.response["Error"]["Message"])
        if seconds_left() < POLL_SECONDS:
            raise StopTimeoutError(
                f"EMR Serverless application {application} is still {state}: job runs still running keep it started. "
                "Wait for them to end (or stop the application: aws emr-serverless stop-application --application-id "
                f"{application}), then deploy again"
            )
        sleep(POLL_SECONDS)


def handle(
    event: Mapping[str, Any], cloudformation: Any, emr: Any, seconds_left: Callable[[], float]
) -> dict[str, str]:
    """Create / Update: stop the application named by ``ApplicationLogicalId`` and wait; Delete: nothing. Returns the
    response's ``Data``."""
    if event["RequestType"] == "Delete":
        return {"State": "not checked"}
    logical = event["ResourceProperties"]["ApplicationLogicalId"]
    application = application_id(cloudformation, event["StackId"], logical)
    if application is None:
        return {"State": "no application yet"}
    try:
        return {"ApplicationId": application, "State": stop_and_wait(emr, application, seconds_left=seconds_left)}
    except ClientError as error:
        if event["RequestType"] == "Create" and error.response["Error"]["Code"] == "AccessDeniedException":
            note = f"not stopped: this deploy creates the permission on {application} after it (see the module)"
            LOGGER.warning(note)
            return {"ApplicationId": application, "State": note}
        raise


def respond(event: Mapping[str, Any], status: str, reason: str, data: Mapping[str, str]) -> None:
    """Answer CloudFormation on the event's pre-signed response URL."""
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[:3000],
            "PhysicalResourceId": f"{event['LogicalResourceId']}-stop-before-update",
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "Data": dict(data),
        }
    ).encode("utf-8")
    request = urllib.request.Request(  # noqa: S310 - CloudFormation's https response URL
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    with urllib.request.urlopen(request, timeout=30):  # noqa: S310
        pass


def handler(event: Mapping[str, Any], context: Any) -> None:
    """The Lambda entry point: run :func:`handle` and answer CloudFormation, SUCCESS or FAILED with the reason."""
    LOGGER.info("%s %s", event["RequestType"], event["LogicalResourceId"])
    try:
        data = handle(
            event,
            boto3.client("cloudformation"),
            boto3.client("emr-serverless"),
            seconds_left=lambda: context.get_remaining_time_in_millis() / 1000 - MARGIN_SECONDS,
        )
    except Exception as error:
        LOGGER.exception("failed")
        respond(event, "FAILED", f"{type(error).__name__}: {error}", {})
        return  # not raised: an asynchronous invocation that raises is retried, and would answer twice
    respond(event, "SUCCESS", data["State"], data)

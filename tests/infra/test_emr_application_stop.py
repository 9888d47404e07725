"""The step that stops ODP's EMR Serverless application before CloudFormation updates it (issue 48, item 3):
the handler's stop-then-wait logic against moto's EMR Serverless (which refuses UpdateApplication on a started
application, as AWS does) and, for the sequences moto does not model (a refused stop while job runs run, STOPPING,
time running out), botocore's Stubber; the template's order (the application DependsOn the custom resource, the
function never waits for the policy that names the application) and the handler's exact permissions."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from infrastructure.jobs.engines.emr_application_stop import RESOURCE_TYPE, STOP_ACTIONS
from infrastructure.jobs.engines.emr_application_stop_handler import handler as stop
from tests.support.streaming_stage import StreamingStage

REGION = "eu-west-1"
APPLICATION = "00fabc123"
STACK = f"arn:aws:cloudformation:{REGION}:111111111111:stack/odp-dev-DataLake/1f2e"


def _emr() -> Any:
    return boto3.client("emr-serverless", region_name=REGION)


def _application(state: str) -> dict[str, Any]:
    return {
        "application": {
            "applicationId": APPLICATION,
            "arn": f"arn:aws:emr-serverless:{REGION}:111111111111:/applications/{APPLICATION}",
            "releaseLabel": "emr-7.12.0",
            "type": "Spark",
            "state": state,
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z",
        }
    }


class Sleeps:
    def __init__(self) -> None:
        self.slept: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_a_started_application_refuses_the_update_until_the_handler_stopped_it(aws: None) -> None:
    emr = _emr()
    application = emr.create_application(name="odp-dev-spark", releaseLabel="emr-7.12.0", type="SPARK")
    identifier = application["applicationId"]
    emr.start_application(applicationId=identifier)
    update = {"applicationId": identifier, "maximumCapacity": {"cpu": "8 vCPU", "memory": "32 GB"}}
    with pytest.raises(ClientError, match="CREATED, STOPPED"):
        emr.update_application(**update)  # what CloudFormation's update met before this step
    sleeps = Sleeps()
    assert stop.stop_and_wait(emr, identifier, seconds_left=lambda: 600, sleep=sleeps) == "STOPPED"
    assert emr.get_application(applicationId=identifier)["application"]["state"] == "STOPPED"
    emr.update_application(**update)  # now accepted
    assert sleeps.slept == [stop.POLL_SECONDS]  # one poll after the stop, then STOPPED


def test_a_stopped_or_created_application_is_left_alone(aws: None) -> None:
    emr = _emr()
    identifier = emr.create_application(name="odp-dev-spark", releaseLabel="emr-7.12.0", type="SPARK")["applicationId"]
    with Stubber(emr) as stubber:  # no StopApplication may be sent
        stubber.add_response("get_application", _application("CREATED"), {"applicationId": identifier})
        assert stop.stop_and_wait(emr, identifier, seconds_left=lambda: 600, sleep=Sleeps()) == "CREATED"
        stubber.assert_no_pending_responses()


def test_a_refused_stop_is_asked_again_and_the_handler_waits_through_stopping() -> None:
    """Job runs still running: StopApplication is refused (never a job cancelled), asked again at the next poll,
    then the handler waits while the application is STOPPING. The Stubber holds the exact order of the calls."""
    emr = _emr()
    sleeps = Sleeps()
    target = {"applicationId": APPLICATION}
    with Stubber(emr) as stubber:
        stubber.add_response("get_application", _application("STARTED"), target)
        stubber.add_client_error(
            "stop_application", "ValidationException", "Application has running jobs", expected_params=target
        )
        stubber.add_response("get_application", _application("STARTED"), target)
        stubber.add_response("stop_application", {}, target)
        stubber.add_response("get_application", _application("STOPPING"), target)
        stubber.add_response("get_application", _application("STOPPED"), target)
        assert stop.stop_and_wait(emr, APPLICATION, seconds_left=lambda: 600, sleep=sleeps) == "STOPPED"
        stubber.assert_no_pending_responses()
    assert sleeps.slept == [stop.POLL_SECONDS] * 3


def test_the_handler_fails_naming_the_application_when_its_time_runs_out() -> None:
    emr = _emr()
    left = iter([60.0, 5.0])
    target = {"applicationId": APPLICATION}
    with Stubber(emr) as stubber:
        for _ in range(2):
            stubber.add_response("get_application", _application("STARTED"), target)
            stubber.add_client_error("stop_application", "ValidationException", "running jobs", expected_params=target)
        with pytest.raises(stop.StopTimeoutError, match=f"{APPLICATION} is still STARTED.*deploy again"):
            stop.stop_and_wait(emr, APPLICATION, seconds_left=lambda: next(left), sleep=Sleeps())


def test_any_other_refusal_fails_at_once() -> None:
    emr = _emr()
    with Stubber(emr) as stubber:
        stubber.add_client_error("get_application", "AccessDeniedException", "not allowed")
        with pytest.raises(ClientError, match="AccessDenied"):
            stop.stop_and_wait(emr, APPLICATION, seconds_left=lambda: 600, sleep=Sleeps())


def _cloudformation(physical: str | None) -> tuple[Any, Stubber]:
    client = boto3.client("cloudformation", region_name=REGION)
    stubber = Stubber(client)
    expected = {"StackName": STACK, "LogicalResourceId": "Application"}
    if physical is None:
        message = "Resource Application does not exist for stack odp-dev-DataLake"
        stubber.add_client_error("describe_stack_resource", "ValidationError", message, expected_params=expected)
    else:
        detail = {
            "LogicalResourceId": "Application",
            "PhysicalResourceId": physical,
            "ResourceType": "AWS::EMRServerless::Application",
            "LastUpdatedTimestamp": "2026-01-01T00:00:00Z",
            "ResourceStatus": "UPDATE_COMPLETE",
        }
        stubber.add_response("describe_stack_resource", {"StackResourceDetail": detail}, expected)
    return client, stubber


def _event(request: str) -> dict[str, Any]:
    return {
        "RequestType": request,
        "StackId": STACK,
        "RequestId": "r-1",
        "LogicalResourceId": "StopBeforeUpdate",
        "ResponseURL": "https://cloudformation-custom-resource-response.example/r-1",
        "ResourceProperties": {"ApplicationLogicalId": "Application", "ImageUri": "x"},
    }


def test_the_stacks_first_create_has_no_application_to_stop() -> None:
    cloudformation, stubber = _cloudformation(None)
    with stubber, Stubber(_emr()) as emr_stubber:  # no EMR Serverless call at all
        data = stop.handle(_event("Create"), cloudformation, emr_stubber.client, seconds_left=lambda: 600)
    assert data == {"State": "no application yet"}


def test_an_update_finds_the_application_in_the_stack_and_stops_it() -> None:
    cloudformation, stubber = _cloudformation(APPLICATION)
    emr = _emr()
    with stubber, Stubber(emr) as emr_stubber:
        emr_stubber.add_response("get_application", _application("STOPPED"), {"applicationId": APPLICATION})
        data = stop.handle(_event("Update"), cloudformation, emr, seconds_left=lambda: 600)
    assert data == {"ApplicationId": APPLICATION, "State": "STOPPED"}


def test_a_denied_read_fails_an_update_but_not_the_create_that_adds_the_permission_after_the_application() -> None:
    for request, fails in (("Update", True), ("Create", False)):
        cloudformation, stubber = _cloudformation(APPLICATION)
        emr = _emr()
        with stubber, Stubber(emr) as emr_stubber:
            emr_stubber.add_client_error("get_application", "AccessDeniedException", "not allowed")
            if fails:
                with pytest.raises(ClientError, match="AccessDenied"):
                    stop.handle(_event(request), cloudformation, emr, seconds_left=lambda: 600)
            else:
                data = stop.handle(_event(request), cloudformation, emr, seconds_left=lambda: 600)
                assert data["State"].startswith("not stopped: this deploy creates the permission")


def test_a_delete_calls_nothing() -> None:
    assert stop.handle(_event("Delete"), None, None, seconds_left=lambda: 600) == {"State": "not checked"}


class _Context:
    def get_remaining_time_in_millis(self) -> int:
        return 900_000


@pytest.fixture
def responses(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    def urlopen(request: Any, timeout: float) -> io.BytesIO:
        assert request.get_method() == "PUT"
        assert request.full_url == _event("Create")["ResponseURL"]
        sent.append(json.loads(request.data))
        return io.BytesIO(b"")

    monkeypatch.setattr(stop.urllib.request, "urlopen", urlopen)
    monkeypatch.setattr(stop.boto3, "client", lambda service: service)
    return sent


def test_the_handler_answers_cloudformation_success_or_failure_and_never_raises(responses, monkeypatch) -> None:
    monkeypatch.setattr(stop, "handle", lambda *args, **kwargs: {"ApplicationId": APPLICATION, "State": "STOPPED"})
    stop.handler(_event("Update"), _Context())

    def broken(*args: Any, **kwargs: Any) -> dict[str, str]:
        raise stop.StopTimeoutError(f"EMR Serverless application {APPLICATION} is still STARTED")

    monkeypatch.setattr(stop, "handle", broken)
    stop.handler(_event("Update"), _Context())
    assert [(r["Status"], r["Reason"]) for r in responses] == [
        ("SUCCESS", "STOPPED"),
        ("FAILED", f"StopTimeoutError: EMR Serverless application {APPLICATION} is still STARTED"),
    ]
    # one physical id for every request: an update never replaces the resource
    assert {r["PhysicalResourceId"] for r in responses} == {"StopBeforeUpdate-stop-before-update"}


# --- the template: order and permissions (the EMR test stage, tests/support/emr_stage.py) ---------------------------


def _resources(template: dict[str, Any], kind: str) -> dict[str, Any]:
    return {logical: r for logical, r in template["Resources"].items() if r["Type"] == kind}


def _depends_on(template: dict[str, Any], logical: str) -> set[str]:
    """Every resource ``logical`` waits for: its DependsOn and the resources its properties Ref or GetAtt, transitively."""
    found: set[str] = set()
    pending = [logical]
    while pending:
        resource = template["Resources"][pending.pop()]
        direct = set(resource.get("DependsOn", []))
        text = json.dumps(resource.get("Properties", {}))
        direct |= {name for name in template["Resources"] if f'{{"Ref": "{name}"}}' in text}
        direct |= {name for name in template["Resources"] if f'"Fn::GetAtt": ["{name}"' in text}
        pending += sorted(direct - found)
        found |= direct
    return found


@pytest.fixture(scope="module")
def stage_parts(emr_stage: StreamingStage) -> dict[str, Any]:
    template = emr_stage.template
    ((application, _),) = _resources(template, "AWS::EMRServerless::Application").items()
    ((step, resource),) = _resources(template, RESOURCE_TYPE).items()
    function = resource["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    (policy,) = [
        logical
        for logical, p in _resources(template, "AWS::IAM::Policy").items()
        if {"Fn::GetAtt": [application, "Arn"]}
        in [s["Resource"] for s in p["Properties"]["PolicyDocument"]["Statement"]]
        and any("StopApplication" in str(s["Action"]) for s in p["Properties"]["PolicyDocument"]["Statement"])
    ]
    return {"template": template, "application": application, "step": step, "function": function, "policy": policy}


def test_the_application_is_updated_after_the_stop_step_and_the_step_needs_nothing_of_it(stage_parts) -> None:
    template, application, step = stage_parts["template"], stage_parts["application"], stage_parts["step"]
    assert step in template["Resources"][application]["DependsOn"]
    properties = template["Resources"][step]["Properties"]
    assert properties["ApplicationLogicalId"] == application  # a literal: found in the stack at run time
    # the step changes, and so runs, whenever the application's image changes
    image = template["Resources"][application]["Properties"]["ImageConfiguration"]["ImageUri"]
    assert properties["ImageUri"] == image
    assert application not in _depends_on(template, step)
    assert stage_parts["policy"] not in _depends_on(template, step)  # the grant comes after the application
    assert application in _depends_on(template, stage_parts["policy"])


def test_the_stop_steps_role_may_do_exactly_what_the_handler_calls(stage_parts) -> None:
    template, application = stage_parts["template"], stage_parts["application"]
    role = template["Resources"][stage_parts["function"]]["Properties"]["Role"]["Fn::GetAtt"][0]
    statements = [
        (statement["Action"], statement["Resource"])
        for p in _resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for statement in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert not template["Resources"][role]["Properties"].get("ManagedPolicyArns")
    (logs,) = [resource for action, resource in statements if action == ["logs:CreateLogStream", "logs:PutLogEvents"]]
    assert sorted(map(str, statements)) == sorted(
        map(
            str,
            [
                (["logs:CreateLogStream", "logs:PutLogEvents"], logs),
                ("cloudformation:DescribeStackResource", {"Ref": "AWS::StackId"}),
                (list(STOP_ACTIONS), {"Fn::GetAtt": [application, "Arn"]}),
            ],
        )
    )
    assert logs["Fn::GetAtt"][1] == "Arn"
    assert template["Resources"][logs["Fn::GetAtt"][0]]["Type"] == "AWS::Logs::LogGroup"


# What EMR Serverless changes on a started application (AWS's "Updating running applications"), what ODP never changes
# (Name, Type, auto start), and Tags (TagResource / UntagResource: UpdateApplication takes no tags).
CHANGES_WHILE_STARTED = {"MaximumCapacity", "Name", "Type", "AutoStartConfiguration", "Tags"}


def test_every_application_setting_that_needs_a_stop_is_a_property_of_the_step(stage_parts) -> None:
    """A change of any of them changes the step, which CloudFormation then runs before the application; a setting
    added to the application fails here until it is classified."""
    template = stage_parts["template"]
    app = template["Resources"][stage_parts["application"]]["Properties"]
    step = template["Resources"][stage_parts["step"]]["Properties"]
    assert set(app) - CHANGES_WHILE_STARTED == {
        "ReleaseLabel",
        "Architecture",
        "ImageConfiguration",
        "InitialCapacity",
        "AutoStopConfiguration",
        "NetworkConfiguration",
        "MonitoringConfiguration",
    }
    assert step["ReleaseLabel"] == app["ReleaseLabel"]
    assert step["Architecture"] == app["Architecture"]
    assert step["ImageUri"] == app["ImageConfiguration"]["ImageUri"]
    for pair in app["InitialCapacity"]:
        worker = pair["Value"]["WorkerConfiguration"]
        assert step["InitialCapacity"][pair["Key"]] == pair["Value"]["WorkerCount"]
        assert step["Worker"] == [worker["Cpu"], worker["Memory"], worker["Disk"]]
    assert step["IdleTimeoutMinutes"] == app["AutoStopConfiguration"]["IdleTimeoutMinutes"]
    assert step["SubnetIds"] == app["NetworkConfiguration"]["SubnetIds"]
    assert step["SecurityGroupIds"] == app["NetworkConfiguration"]["SecurityGroupIds"]
    logging = app["MonitoringConfiguration"]["CloudWatchLoggingConfiguration"]
    assert step["LogGroupName"] == logging["LogGroupName"]

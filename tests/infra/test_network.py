"""Network on its own, with default and non-default props: aws_cdk.assertions and cdk-nag."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk.assertions import Match, Template

from infrastructure.application import cdk_json_context
from infrastructure.foundation.network import INTERFACE_ENDPOINTS, Network, NetworkProps
from infrastructure.nag import AUDIT_CONTEXT, audit_acknowledgments


def _synth(tmp_path, **overrides) -> tuple[App, Template]:
    app = App(context={**cdk_json_context(), AUDIT_CONTEXT: True}, outdir=str(tmp_path))
    stack = Stack(app, "S")
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    Network(stack, "Network", NetworkProps(environment="x", cidr="10.1.0.0/16", log_key=key, **overrides))
    return app, Template.from_stack(stack)


@pytest.mark.parametrize(
    ("overrides", "deletion", "days"),
    [
        ({}, "Retain", 30),
        ({"removal_policy": RemovalPolicy.DESTROY, "log_retention": logs.RetentionDays.ONE_WEEK}, "Delete", 7),
    ],
    ids=["default", "destroy-one-week"],
)
def test_network_props(tmp_path, overrides, deletion, days) -> None:
    app, template = _synth(tmp_path, **overrides)
    template.has_resource_properties("AWS::EC2::VPC", {"CidrBlock": "10.1.0.0/16"})
    template.resource_count_is("AWS::EC2::Subnet", 2)
    template.resource_count_is("AWS::EC2::NatGateway", 0)
    template.resource_count_is("AWS::EC2::InternetGateway", 0)
    template.resource_count_is("AWS::EC2::VPCEndpoint", 2 + len(INTERFACE_ENDPOINTS))
    template.has_resource(
        "AWS::Logs::LogGroup", {"DeletionPolicy": deletion, "Properties": Match.object_like({"RetentionInDays": days})}
    )
    for name in ("odp-x-vpc", "odp-x-vpc-2"):
        template.has_resource_properties(
            "AWS::Glue::Connection",
            {"ConnectionInput": Match.object_like({"Name": name, "ConnectionType": "NETWORK"})},
        )
    app.synth()
    audit = audit_acknowledgments(app)
    assert audit.unacknowledged == []
    assert audit.unmatched == []


def _services(template: Template) -> set[str]:
    """The endpoint service names (the part after com.amazonaws.<region>.)."""
    return {
        json.dumps(e["Properties"]["ServiceName"]).rsplit(".", 1)[1].rstrip('"]}')
        for e in template.find_resources("AWS::EC2::VPCEndpoint").values()
    }


def test_sns_and_kinesis_endpoints_only_when_asked_and_zones_from_props(tmp_path) -> None:
    """Items 2, 3 and 10 of issue 24: endpoints follow from the jobs; AZs come from config, never the region."""
    always = {"s3", "dynamodb", "glue", "kms", "logs", "monitoring", "sts"}
    _, template = _synth(tmp_path / "plain")
    assert _services(template) == always
    _, template = _synth(tmp_path / "sns", availability_zones=("eu-west-1b", "eu-west-1c"), sns_endpoint=True)
    assert _services(template) == always | {"sns"}
    zones = [s["Properties"]["AvailabilityZone"] for s in template.find_resources("AWS::EC2::Subnet").values()]
    assert sorted(zones) == ["eu-west-1b", "eu-west-1c"]
    _, template = _synth(tmp_path / "kinesis", kinesis_endpoint=True)
    assert _services(template) == always | {"kinesis-streams"}


def test_the_default_security_group_is_restricted(tmp_path) -> None:
    _, template = _synth(tmp_path)
    template.resource_count_is("Custom::VpcRestrictDefaultSG", 1)

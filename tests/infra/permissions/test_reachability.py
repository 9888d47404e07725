"""Reachability on its own (no Spark): the services of hand-written calls and of the derived requirements
against the synthesized templates' subnets, endpoints and routes. The recorded flow's calls are checked
the same way in test_permissions.py and test_streaming_permissions.py."""

from __future__ import annotations

import copy

import pytest

from odp.config.loader import OdpConfig, load_config
from sandbox.aws_calls import DATASET_JOB, FILE_PROCESSOR_JOB, AwsCall
from tests.infra.permissions.check import check_reachability
from tests.infra.permissions.reachability import placements, routes, without_endpoint
from tests.infra.permissions.template import Deployment, Resolver
from tests.support.streaming_stage import StreamingStage
from tests.support.synth import SynthesizedApp

PUBLISH = AwsCall(DATASET_JOB, "sns", "Publish", {}, "etl/jobs/dataset_job.py (record)")
GET_ITEM = AwsCall(FILE_PROCESSOR_JOB, "dynamodb", "GetItem", {}, "odp/tracker/x.py (get)")
SUBNETS = ("NetworkVpcprivateSubnet1Subnet", "NetworkVpcprivateSubnet2Subnet")


def _resolver(config: OdpConfig, template: dict, environment: str = "dev") -> Resolver:
    settings = config.environments.environments[environment]
    return Resolver(template, Deployment(environment, settings.account, settings.region))


def test_every_job_runs_in_both_subnets_and_they_reach_the_endpoints(synthesized: SynthesizedApp, config) -> None:
    resolver = _resolver(config, synthesized.data_lakes["dev"])
    found = placements(resolver)
    assert {p.principal for p in found} == {FILE_PROCESSOR_JOB, DATASET_JOB}
    for placement in found:
        assert len(placement.subnets) == 2, placement
        assert all(subnet.startswith(SUBNETS) for subnet in placement.subnets), placement
    assert routes(resolver, found[0].subnets[0]) == {
        "s3",
        "dynamodb",
        "glue",
        "kms",
        "logs",
        "monitoring",
        "sts",
        "sns",  # datasets are configured: the dataset job publishes
    }


@pytest.mark.parametrize("environment", ["dev", "test", "prod"])
def test_the_calls_and_derived_needs_are_reachable(synthesized: SynthesizedApp, config, environment) -> None:
    resolver = _resolver(config, synthesized.data_lakes[environment], environment)
    calls = {"sandbox": [PUBLISH, GET_ITEM]}
    assert check_reachability(resolver, calls, tables=config.tables, datasets=config.datasets) == []


def test_removing_the_sns_endpoint_fails_naming_principal_service_and_call(synthesized: SynthesizedApp, config) -> None:
    resolver = _resolver(config, synthesized.data_lakes["dev"])
    changed = without_endpoint(synthesized.data_lakes["dev"], resolver, "sns")

    failures = check_reachability(_resolver(config, changed), {"sandbox": [PUBLISH, GET_ITEM]})

    assert [f.split(" from subnet ")[0] for f in failures] == [
        "dataset-job (Glue job odp-dev-dataset-job) cannot reach sns",
        "dataset-job (Glue job odp-dev-dataset-job) cannot reach sns",
    ]
    assert failures[0].split(": ", 1)[1] == (
        "no VPC endpoint com.amazonaws.eu-west-1.sns in or for the subnet and no NAT route: needed by "
        "sns.Publish from etl/jobs/dataset_job.py (record)"
    )


def test_a_gateway_endpoint_counts_only_on_the_subnets_route_table(synthesized: SynthesizedApp, config) -> None:
    """DynamoDB's gateway endpoint off the subnets' route tables: every job's tracker call fails."""
    changed = copy.deepcopy(synthesized.data_lakes["dev"])
    for resource in changed["Resources"].values():
        properties = resource["Properties"]
        if resource["Type"] == "AWS::EC2::VPCEndpoint" and "dynamodb" in str(properties.get("ServiceName")):
            properties["RouteTableIds"] = []

    failures = check_reachability(_resolver(config, changed), {"sandbox": [GET_ITEM]})

    assert failures
    assert all(f.startswith("file-processor-job (Glue job odp-dev-file-processor-") for f in failures), failures
    assert all(" cannot reach dynamodb from subnet " in f for f in failures)
    assert all(f.endswith("needed by dynamodb.GetItem from odp/tracker/x.py (get)") for f in failures)


def test_a_nat_route_reaches_every_service(synthesized: SynthesizedApp, config) -> None:
    template = synthesized.data_lakes["dev"]
    changed = without_endpoint(template, _resolver(config, template), "sns")
    changed["Resources"] = dict(changed["Resources"])
    for logical, resource in template["Resources"].items():
        if resource["Type"] == "AWS::EC2::RouteTable":
            changed["Resources"][f"{logical}Nat"] = {
                "Type": "AWS::EC2::Route",
                "Properties": {
                    "RouteTableId": {"Ref": logical},
                    "DestinationCidrBlock": "0.0.0.0/0",
                    "NatGatewayId": {"Ref": "SomeNat"},
                },
            }

    assert check_reachability(_resolver(config, changed), {"sandbox": [PUBLISH]}) == []


def test_the_streaming_jobs_kinesis_source_needs_the_kinesis_endpoint(streaming_stage: StreamingStage) -> None:
    """Called on the job's behalf by Glue's Kinesis connector: derived, not recorded."""
    config = load_config(streaming_stage.config_dir)
    resolver = _resolver(config, streaming_stage.template)
    assert check_reachability(resolver, {}, tables=config.tables) == []

    changed = without_endpoint(streaming_stage.template, resolver, "kinesis-streams")
    failures = check_reachability(_resolver(config, changed), {}, tables=config.tables)

    assert {f.split(" from subnet ")[0] for f in failures} == {
        "streaming-job (Glue job odp-dev-stream-shop_changes) cannot reach kinesis-streams",
        "streaming-job (Glue job odp-dev-stream-partner_changes) cannot reach kinesis-streams",
    }
    assert all(
        "needed by kinesis:DescribeStream (Glue's Kinesis connector reads arn:aws:kinesis:eu-west-1:111111111111:"
        "stream/odp-dev-" in f
        for f in failures
    ), failures


def test_no_stream_no_kinesis_endpoint(synthesized: SynthesizedApp, config) -> None:
    """An interface endpoint costs every hour: the repository's config streams nothing, so none."""
    resolver = _resolver(config, synthesized.data_lakes["dev"])
    with pytest.raises(AssertionError, match="no VPC endpoint for kinesis-streams"):
        without_endpoint(synthesized.data_lakes["dev"], resolver, "kinesis-streams")

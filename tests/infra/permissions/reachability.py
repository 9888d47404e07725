"""Reachability: every AWS service a principal in the VPC calls has a route from its subnets.

The subnets are isolated (no internet route): a call to a service without a VPC endpoint waits out
boto3's connect timeouts and fails. :func:`placements` finds where each principal runs from the
template: a Glue job in the subnets of the NETWORK connections it lists (any of them: Glue takes the
next when one fails), an EMR Serverless application in the subnets of its network configuration, a Lambda function in its ``VpcConfig.SubnetIds``. :func:`routes` reads what each
subnet reaches: an interface endpoint placed in it, a gateway endpoint on its route table, or a NAT
route (``0.0.0.0/0`` to a NAT gateway, which reaches every service). :func:`unreachable` checks each
need (a recorded call's service, or a derived requirement's action: what Glue's Kinesis connector,
Hudi's catalog sync or Glue's metrics do inside the job) and returns a sentence per (principal, job,
service) that has no route, naming the first call that needs it.

A KMS use with ``kms:ViaService`` is made by S3, DynamoDB, SNS or Kinesis for the caller, not from
the subnet: it needs no route (the call that implied it does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.aws_calls import AwsCall
from tests.infra.permissions.requirements import Requirement, function_principal, glue_job_principal
from tests.infra.permissions.template import EMR_FILE_PROCESSOR, Resolver, TemplateError, emr_serverless_runs

# boto3 service name or IAM action prefix -> the service name of its VPC endpoint (com.amazonaws.<region>.<name>)
_ENDPOINT_NAMES = {"cloudwatch": "monitoring", "kinesis": "kinesis-streams", "stepfunctions": "states"}
ANYWHERE = "*"  # a NAT route reaches every service


def endpoint_name(service: str) -> str:
    """``sns`` -> ``sns``; ``cloudwatch`` -> ``monitoring``; ``kinesis`` -> ``kinesis-streams``."""
    return _ENDPOINT_NAMES.get(service, service)


@dataclass(frozen=True)
class Need:
    """``principal`` calls ``service`` (endpoint name) because of ``reason`` (the call or action and why)."""

    principal: str
    service: str
    reason: str


@dataclass(frozen=True)
class Placement:
    """Where one deployed thing of a principal runs: ``label`` (``Glue job odp-dev-dataset-job``) and its subnets."""

    principal: str
    label: str
    subnets: tuple[str, ...]  # logical ids


def needs_of(calls: Iterable[AwsCall], requirements: Iterable[Requirement]) -> list[Need]:
    """The services each recorded call and each derived requirement reaches, in order."""
    found = [Need(call.principal, endpoint_name(call.service), call.describe()) for call in calls]
    for requirement in requirements:
        if any(key == "kms:ViaService" for key, _ in requirement.context):
            continue  # the service calls KMS for the caller
        prefix = requirement.action.split(":", 1)[0]
        found.append(Need(requirement.principal, endpoint_name(prefix), f"{requirement.action} ({requirement.reason})"))
    return found


def _subnets_of_connection(resolver: Resolver, name: str) -> str:
    for logical, connection in resolver.of_type("AWS::Glue::Connection").items():
        connection_input = connection["Properties"]["ConnectionInput"]
        # a job names its connection by Ref (resolved to the logical id) or, in older templates, by its name
        if name in (logical, resolver.resolve(connection_input["Name"])):
            requirements = connection_input.get("PhysicalConnectionRequirements", {})
            if "SubnetId" not in requirements:
                raise TemplateError(f"Glue connection {name} ({logical}) names no subnet")
            return resolver.logical_id_of(requirements["SubnetId"])
    raise TemplateError(f"no Glue connection named {name!r} in the template")


def placements(resolver: Resolver) -> list[Placement]:
    """Every Glue job with connections, every EMR Serverless application a cadence runs its File Processor
    on (its ``NetworkConfiguration``) and every Lambda function with a VpcConfig, with its subnets."""
    found: list[Placement] = []
    for job in resolver.of_type("AWS::Glue::Job").values():
        properties = job["Properties"]
        name = str(resolver.resolve(properties["Name"]))
        principal = glue_job_principal(resolver, name)
        connections = resolver.resolve(properties.get("Connections", {}).get("Connections", []))
        if principal is None or not connections:
            continue
        subnets = tuple(_subnets_of_connection(resolver, connection) for connection in connections)
        found.append(Placement(principal, f"Glue job {name}", subnets))
    for run in emr_serverless_runs(resolver):  # the File Processor's runs on EMR Serverless
        network = resolver.resources[run.application]["Properties"].get("NetworkConfiguration", {})
        subnets = tuple(resolver.logical_id_of(subnet) for subnet in network.get("SubnetIds", []))
        label = (
            f"EMR Serverless application {resolver.resolve(resolver.resources[run.application]['Properties']['Name'])}"
        )
        if subnets and not any(p.label == label for p in found):
            found.append(Placement(EMR_FILE_PROCESSOR, label, subnets))
    for logical, function in resolver.of_type("AWS::Lambda::Function").items():
        principal = function_principal(resolver, logical)
        subnet_ids = function["Properties"].get("VpcConfig", {}).get("SubnetIds", [])
        if principal is None or not subnet_ids:
            continue
        subnets = tuple(resolver.logical_id_of(subnet) for subnet in subnet_ids)
        found.append(Placement(principal, f"Lambda function {resolver.physical_name(logical)}", subnets))
    return found


def _service_of_endpoint(resolver: Resolver, endpoint: Mapping[str, Any]) -> str:
    """``com.amazonaws.eu-west-1.sns`` -> ``sns`` (the endpoint must be in the deployment's region)."""
    service_name = str(resolver.resolve(endpoint["Properties"]["ServiceName"]))
    prefix = f"com.amazonaws.{resolver.deployment.region}."
    if not service_name.startswith(prefix):
        raise TemplateError(f"VPC endpoint for {service_name} is not a service of {resolver.deployment.region}")
    return service_name.removeprefix(prefix)


def _route_table_of(resolver: Resolver, subnet: str) -> str | None:
    for association in resolver.of_type("AWS::EC2::SubnetRouteTableAssociation").values():
        properties = association["Properties"]
        if resolver.logical_id_of(properties["SubnetId"]) == subnet:
            return resolver.logical_id_of(properties["RouteTableId"])
    return None


def routes(resolver: Resolver, subnet: str) -> set[str]:
    """The endpoint service names a subnet reaches (:data:`ANYWHERE` through a NAT route)."""
    table = _route_table_of(resolver, subnet)
    reached: set[str] = set()
    for endpoint in resolver.of_type("AWS::EC2::VPCEndpoint").values():
        properties = endpoint["Properties"]
        kind = properties.get("VpcEndpointType", "Gateway")
        if kind == "Interface":
            placed = {resolver.logical_id_of(s) for s in properties.get("SubnetIds", [])}
        else:
            placed = {resolver.logical_id_of(t) for t in properties.get("RouteTableIds", [])}
        if (subnet if kind == "Interface" else table) in placed:
            reached.add(_service_of_endpoint(resolver, endpoint))
    for route in resolver.of_type("AWS::EC2::Route").values():
        properties = route["Properties"]
        on_table = table is not None and resolver.logical_id_of(properties["RouteTableId"]) == table
        if on_table and properties.get("DestinationCidrBlock") == "0.0.0.0/0" and "NatGatewayId" in properties:
            reached.add(ANYWHERE)
    return reached


def unreachable(resolver: Resolver, needs: Iterable[Need]) -> list[str]:
    """A sentence for each (placement, service) some subnet of the placement cannot reach; empty: all reachable.

    ``<principal> (<label>) cannot reach <service> from subnet <logical id>: no VPC endpoint
    com.amazonaws.<region>.<service> in or for the subnet and no NAT route: needed by <first need>``
    """
    first: dict[tuple[str, str], Need] = {}
    for need in needs:
        first.setdefault((need.principal, need.service), need)
    region = resolver.deployment.region
    failures = []
    for placement in placements(resolver):
        for subnet in placement.subnets:
            reached = routes(resolver, subnet)
            for (principal, service), need in first.items():
                if principal != placement.principal or service in reached or ANYWHERE in reached:
                    continue
                failures.append(
                    f"{principal} ({placement.label}) cannot reach {service} from subnet {subnet}: no VPC endpoint "
                    f"com.amazonaws.{region}.{service} in or for the subnet and no NAT route: needed by {need.reason}"
                )
    return failures


def without_endpoint(template: Mapping[str, Any], resolver: Resolver, service: str) -> dict[str, Any]:
    """A copy of ``template`` without the VPC endpoint of ``service`` (endpoint name, e.g. ``sns``).

    Raises:
        AssertionError: the template has no endpoint for it (nothing to remove).
    """
    endpoints = [
        logical
        for logical, endpoint in resolver.of_type("AWS::EC2::VPCEndpoint").items()
        if _service_of_endpoint(resolver, endpoint) == service
    ]
    assert endpoints, f"no VPC endpoint for {service} in the template: nothing to remove"
    resources = {logical: r for logical, r in template["Resources"].items() if logical not in endpoints}
    return {**template, "Resources": resources}

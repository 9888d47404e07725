"""Creation order in a synthesized template: each property whose target must exist when its resource is
created names that target by ``Ref`` / ``Fn::GetAtt`` / ``Fn::ImportValue`` (CloudFormation then orders
them), or the resource carries a ``DependsOn`` on a resource of the target's type with that physical name.

A literal name without either lets CloudFormation create both at once: CreateNamedQuery for a workgroup that
does not exist yet, CreateJob with a security configuration or connection still being created, fail the stack.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# (resource type, property path) -> the resource types the property may point to. A path step over a list
# applies to every element.
ORDERED_PROPERTIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("AWS::Athena::NamedQuery", "WorkGroup"): ("AWS::Athena::WorkGroup",),
    ("AWS::Glue::Job", "SecurityConfiguration"): ("AWS::Glue::SecurityConfiguration",),
    ("AWS::Glue::Job", "Connections.Connections"): ("AWS::Glue::Connection",),
    ("AWS::Glue::Job", "Role"): ("AWS::IAM::Role",),
    ("AWS::Glue::Trigger", "Actions.JobName"): ("AWS::Glue::Job",),
    ("AWS::Glue::Trigger", "Actions.SecurityConfiguration"): ("AWS::Glue::SecurityConfiguration",),
    ("AWS::Glue::Trigger", "Predicate.Conditions.JobName"): ("AWS::Glue::Job",),
    ("AWS::Glue::Trigger", "WorkflowName"): ("AWS::Glue::Workflow",),
    ("AWS::Glue::Table", "DatabaseName"): ("AWS::Glue::Database",),
    ("AWS::Glue::Crawler", "DatabaseName"): ("AWS::Glue::Database",),
    ("AWS::Glue::Crawler", "Role"): ("AWS::IAM::Role",),
    ("AWS::Glue::Connection", "ConnectionInput.PhysicalConnectionRequirements.SubnetId"): ("AWS::EC2::Subnet",),
    ("AWS::Glue::Connection", "ConnectionInput.PhysicalConnectionRequirements.SecurityGroupIdList"): (
        "AWS::EC2::SecurityGroup",
    ),
    ("AWS::Lambda::EventSourceMapping", "FunctionName"): ("AWS::Lambda::Function",),
    ("AWS::Lambda::EventSourceMapping", "EventSourceArn"): (
        "AWS::SQS::Queue",
        "AWS::Kinesis::Stream",
        "AWS::DynamoDB::Table",
        "AWS::DynamoDB::GlobalTable",
    ),
    ("AWS::Lambda::Permission", "FunctionName"): ("AWS::Lambda::Function",),
    ("AWS::Lambda::Function", "Role"): ("AWS::IAM::Role",),
    ("AWS::StepFunctions::StateMachine", "RoleArn"): ("AWS::IAM::Role",),
    ("AWS::Scheduler::Schedule", "Target.Arn"): ("AWS::StepFunctions::StateMachine", "AWS::Lambda::Function"),
    ("AWS::Scheduler::Schedule", "Target.RoleArn"): ("AWS::IAM::Role",),
    ("AWS::Events::Rule", "Targets.RoleArn"): ("AWS::IAM::Role",),
    ("AWS::SNS::Subscription", "TopicArn"): ("AWS::SNS::Topic",),
    ("AWS::IAM::Policy", "Roles"): ("AWS::IAM::Role",),
    ("AWS::EC2::Subnet", "VpcId"): ("AWS::EC2::VPC",),
    ("AWS::EC2::VPCEndpoint", "VpcId"): ("AWS::EC2::VPC",),
    ("AWS::EC2::VPCEndpoint", "SubnetIds"): ("AWS::EC2::Subnet",),
    ("AWS::EC2::VPCEndpoint", "SecurityGroupIds"): ("AWS::EC2::SecurityGroup",),
    ("AWS::EC2::FlowLog", "LogGroupName"): ("AWS::Logs::LogGroup",),
    ("AWS::EMRServerless::Application", "NetworkConfiguration.SubnetIds"): ("AWS::EC2::Subnet",),
    ("AWS::EMRServerless::Application", "NetworkConfiguration.SecurityGroupIds"): ("AWS::EC2::SecurityGroup",),
    ("AWS::EMRServerless::Application", "MonitoringConfiguration.CloudWatchLoggingConfiguration.LogGroupName"): (
        "AWS::Logs::LogGroup",
    ),
    # Lake Formation (infrastructure/access/lake_formation.py): databases, LF-Tags, filters and locations by name.
    ("AWS::LakeFormation::Resource", "RoleArn"): ("AWS::IAM::Role",),
    ("AWS::LakeFormation::TagAssociation", "Resource.Database.Name"): ("AWS::Glue::Database",),
    ("AWS::LakeFormation::TagAssociation", "LFTags.TagKey"): ("AWS::LakeFormation::Tag",),
    ("AWS::LakeFormation::DataCellsFilter", "DatabaseName"): ("AWS::Glue::Database",),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.Database.Name"): ("AWS::Glue::Database",),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.Table.DatabaseName"): ("AWS::Glue::Database",),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.TableWithColumns.DatabaseName"): ("AWS::Glue::Database",),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.DataCellsFilter.DatabaseName"): ("AWS::Glue::Database",),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.DataCellsFilter.Name"): (
        "AWS::LakeFormation::DataCellsFilter",
    ),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.LFTagPolicy.Expression.TagKey"): (
        "AWS::LakeFormation::Tag",
    ),
    ("AWS::LakeFormation::PrincipalPermissions", "Resource.DataLocation.ResourceArn"): (
        "AWS::LakeFormation::Resource",
    ),
}
# The property of each target type that holds its physical name (what a literal would repeat).
NAME_PROPERTIES: dict[str, str] = {
    "AWS::Athena::WorkGroup": "Name",
    "AWS::Glue::SecurityConfiguration": "Name",
    "AWS::Glue::Connection": "ConnectionInput.Name",
    "AWS::Glue::Job": "Name",
    "AWS::Glue::Workflow": "Name",
    "AWS::Glue::Database": "DatabaseInput.Name",
    "AWS::IAM::Role": "RoleName",
    "AWS::Lambda::Function": "FunctionName",
    "AWS::Logs::LogGroup": "LogGroupName",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::SNS::Topic": "TopicName",
    "AWS::LakeFormation::Tag": "TagKey",
    "AWS::LakeFormation::DataCellsFilter": "Name",
}
_REFERENCES = ("Ref", "Fn::GetAtt", "Fn::ImportValue")


def _values(node: Any, path: list[str]) -> Iterator[Any]:
    """Every value at ``path`` under ``node`` (lists fan out)."""
    if isinstance(node, list) and not (len(node) == 1 and isinstance(node[0], dict) and _is_intrinsic(node[0])):
        for item in node:
            yield from _values(item, path)
        return
    if not path:
        yield node
        return
    if isinstance(node, dict) and path[0] in node:
        yield from _values(node[path[0]], path[1:])


def _is_intrinsic(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith(("Ref", "Fn::"))


def _references_a_resource(value: Any, resources: Mapping[str, Any]) -> bool:
    """A Ref / GetAtt of a resource of the template (not a pseudo parameter) or an import, anywhere in value."""
    if isinstance(value, dict):
        for key, argument in value.items():
            if key == "Fn::ImportValue":
                return True
            if key == "Ref" and argument in resources:
                return True
            if key == "Fn::GetAtt":
                target = argument[0] if isinstance(argument, list) else str(argument).split(".")[0]
                if target in resources:
                    return True
            if _references_a_resource(argument, resources):
                return True
    if isinstance(value, list):
        return any(_references_a_resource(item, resources) for item in value)
    return False


def _physical_name(resource: Mapping[str, Any]) -> Any:
    path = NAME_PROPERTIES.get(resource["Type"])
    if path is None:
        return None
    node: Any = resource.get("Properties", {})
    for step in path.split("."):
        node = node.get(step) if isinstance(node, dict) else None
    return node


def _depends_on(resource: Mapping[str, Any]) -> list[str]:
    depends = resource.get("DependsOn", [])
    return [depends] if isinstance(depends, str) else list(depends)


def ordering_problems(template: Mapping[str, Any], label: str) -> list[str]:
    """Every ordered property of the template given as a literal without a DependsOn on its target."""
    resources: Mapping[str, Any] = template.get("Resources", {})
    problems = []
    for logical, resource in resources.items():
        for (kind, path), target_types in ORDERED_PROPERTIES.items():
            if resource["Type"] != kind:
                continue
            for value in _values(resource.get("Properties", {}), path.split(".")):
                if _references_a_resource(value, resources):
                    continue
                depended = [
                    d
                    for d in _depends_on(resource)
                    if d in resources and resources[d]["Type"] in target_types and _physical_name(resources[d]) == value
                ]
                if depended:
                    continue
                problems.append(
                    f"{label}: {logical} ({kind}) {path} = {value!r} is neither a Ref/GetAtt/ImportValue of its "
                    f"target ({' or '.join(target_types)}) nor covered by a DependsOn on it: CloudFormation may "
                    "create the resource before its target exists"
                )
    return problems

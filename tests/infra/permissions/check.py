"""The permission check: every requirement of every principal against its role's policies in a template.

``check_template`` is what the test calls: the recorded calls of the code principals (File Manager,
Batch Manager, the Glue job, the config loader and smoke check) and every state machine's Task
integrations become requirements, each is evaluated against the policies of the principal's role,
and each one IAM would refuse is returned as a sentence naming the principal, its role, the action,
the resource and the call that needed it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from odp.config.datasets import DatasetConfig
from odp.config.models import TableConfig
from odp.contracts.state_machines import render_substituted
from sandbox.aws_calls import DATASET_JOB, FILE_PROCESSOR_JOB, STREAMING_JOB, AwsCall
from tests.infra.permissions.iam_policy import Request, as_list, evaluate, evaluate_resource_policy
from tests.infra.permissions.reachability import needs_of, unreachable
from tests.infra.permissions.requirements import (
    Delivery,
    Requirement,
    Translation,
    call_requirements,
    catalog_sync_requirements,
    configuration_requirements,
    dataset_canary_requirements,
    dataset_catalog_requirements,
    emr_serverless_requirements,
    lake_formation_requirements,
    lease_requirements,
    raw_canary_requirements,
    rule_requirements,
    scheduler_requirements,
    state_machine_platform_requirements,
    state_machine_requirements,
    streaming_runtime_requirements,
)
from tests.infra.permissions.template import (
    RUNS_CODE_OF,
    STATE_MACHINE,
    Resolver,
    Role,
    encryption_key_arn,
    find_by_name,
    principals,
    resource_policy,
    role_of,
    role_policies,
)


def unique(requirements: Iterable[Requirement]) -> list[Requirement]:
    """One requirement per (principal, action, resource, context), the first reason kept."""
    seen: dict[tuple[Any, ...], Requirement] = {}
    for requirement in requirements:
        seen.setdefault(requirement.key, requirement)
    return list(seen.values())


def _resource_refusal(resolver: Resolver, role: Role, request: Request) -> str | None:
    """How the resource's own policy refuses the request (``refused ... by <policy>``), or None.

    A KMS key policy must allow the role, directly or by delegating to the account's IAM policies; a
    bucket, queue or topic policy in the same account only refuses by an explicit Deny.
    """
    found = resource_policy(resolver, request.resource)
    if found is None:
        return None
    label, documents = found
    decision = evaluate_resource_policy(documents, request, resolver.get_att(role.logical_id, "Arn"))
    if decision.denied_by:
        return f"by an explicit Deny in {label} ({', '.join(decision.denied_by)})"
    if request.action.startswith("kms:") and not decision.allowed:
        return f"by {label}, which neither names the role nor delegates to IAM"
    return None


def refusals(
    resolver: Resolver, role: Role, documents: list[dict[str, Any]], requirements: Iterable[Requirement]
) -> list[str]:
    """A sentence for each requirement the role's policies, or the resource's policy, refuse (empty: all allowed)."""
    failures = []
    for requirement in unique(requirements):
        request = Request(requirement.action, requirement.resource, dict(requirement.context))
        decision = evaluate(documents, request)
        what = f"{requirement.action} on {requirement.resource}"
        who = f"{requirement.principal} ({role.label})"
        if decision.denied_by:
            failure = f"{who} is explicitly denied {what} by {', '.join(decision.denied_by)}"
        elif not decision.allowed:
            failure = f"{who} is not allowed {what}"
        elif (refused_by := _resource_refusal(resolver, role, request)) is not None:
            failure = f"{who} is refused {what} {refused_by}"
        else:
            continue
        failures.append(f"{failure}: needed by {requirement.reason}")
    return failures


def state_machine_definition(resolver: Resolver, logical: str, asset_text: Callable[[str], str]) -> dict[str, Any]:
    """The definition a state machine runs: its asset file rendered with its resolved substitutions."""
    properties = resolver.resources[logical]["Properties"]
    values = {name: str(resolver.resolve(value)) for name, value in properties["DefinitionSubstitutions"].items()}
    return render_substituted(values, asset_text(properties["DefinitionS3Location"]["Key"]))


def engine_requirements(
    resolver: Resolver, *, tables: Iterable[TableConfig] = (), datasets: Iterable[DatasetConfig] = ()
) -> list[Requirement]:
    """What an engine does with a job's role because of the template: Glue loading the job's code (and the
    functions' logs, tracing, event sources), Glue's Kinesis connector and metrics for the streaming jobs, EMR
    Serverless loading the entry point and writing the application's logs; and the dataset job's catalog sync of
    the datasets each engine refreshes and its canary table among them (an engine's own: not copied to the other
    engine's role)."""
    return (
        configuration_requirements(resolver)
        + streaming_runtime_requirements(resolver, tables)
        + emr_serverless_requirements(resolver)
        + dataset_catalog_requirements(resolver, datasets)
        + dataset_canary_requirements(resolver, datasets)
    )


def code_requirements(
    resolver: Resolver, *, tables: Iterable[TableConfig] = (), datasets: Iterable[DatasetConfig] = ()
) -> list[Requirement]:
    """What the jobs' own code does on any engine and the local flow cannot record: Hudi's catalog sync of the
    tables, the File Processor's and streaming job's canary tables, the lease takeover's GetJobRun, and (Lake
    Formation on) the jobs' data access."""
    tables, datasets = list(tables), list(datasets)
    jobs = [
        FILE_PROCESSOR_JOB,
        *([DATASET_JOB] if datasets else []),
        *([STREAMING_JOB] if any(table.stream is not None for table in tables) else []),
    ]
    return (
        catalog_sync_requirements(resolver, [table for table in tables if table.stream is None])
        + raw_canary_requirements(resolver, tables)
        + lease_requirements(resolver)
        + lake_formation_requirements(resolver, jobs)
    )


def derived_requirements(
    resolver: Resolver, *, tables: Iterable[TableConfig] = (), datasets: Iterable[DatasetConfig] = ()
) -> list[Requirement]:
    """:func:`engine_requirements` and :func:`code_requirements`."""
    tables, datasets = list(tables), list(datasets)
    return engine_requirements(resolver, tables=tables, datasets=datasets) + code_requirements(
        resolver, tables=tables, datasets=datasets
    )


def on_every_engine(
    resolver: Resolver, calls: Iterable[AwsCall], requirements: Iterable[Requirement]
) -> tuple[list[AwsCall], list[Requirement]]:
    """The code's calls and requirements, also as each other engine's principal that runs the same code in this
    template (the File Processor of a cadence, the dataset job of a dataset, on EMR Serverless: :data:`RUNS_CODE_OF`)."""
    calls, requirements = list(calls), list(requirements)
    present = set(principals(resolver))
    for variant, code in RUNS_CODE_OF.items():
        if variant not in present:
            continue
        calls += [replace(call, principal=variant) for call in calls if call.principal == code]
        requirements += [replace(r, principal=variant) for r in requirements if r.principal == code]
    return calls, requirements


def check_reachability(
    resolver: Resolver,
    calls: Mapping[str, list[AwsCall]],
    *,
    tables: Iterable[TableConfig] = (),
    datasets: Iterable[DatasetConfig] = (),
) -> list[str]:
    """Every service a principal in the VPC needs (recorded calls, derived requirements) that its
    subnets cannot reach (tests/infra/permissions/reachability.py)."""
    tables, datasets = list(tables), list(datasets)
    recorded, code = on_every_engine(
        resolver,
        [call for found in calls.values() for call in found],
        code_requirements(resolver, tables=tables, datasets=datasets),
    )
    engines = engine_requirements(resolver, tables=tables, datasets=datasets)
    return unreachable(resolver, needs_of(recorded, engines + code))


def check_template(
    resolver: Resolver,
    calls: Mapping[str, list[AwsCall]],
    translations: Mapping[str, Translation],
    asset_text: Callable[[str], str],
    *,
    tables: Iterable[TableConfig] = (),
    datasets: Iterable[DatasetConfig] = (),
) -> list[str]:
    """Every refusal in this template: ``calls`` and ``translations`` are keyed by the environment the
    calls were recorded in (``sandbox`` for the local flow, the deployed name for the smoke check);
    ``tables`` and ``datasets``: the configured ones, whose catalog sync the jobs perform on Glue
    (and on EMR Serverless: the code's requirements apply to every engine's role, :func:`on_every_engine`)."""
    roles = principals(resolver)
    tables, datasets = list(tables), list(datasets)
    failures: list[str] = []
    by_principal: dict[str, list[Requirement]] = {}
    recorded_requirements = [
        requirement
        for recorded_in, recorded in calls.items()
        for call in recorded
        for requirement in call_requirements(call, resolver, translations[recorded_in])
    ]
    _, code = on_every_engine(
        resolver, [], recorded_requirements + code_requirements(resolver, tables=tables, datasets=datasets)
    )
    for requirement in code + engine_requirements(resolver, tables=tables, datasets=datasets):
        by_principal.setdefault(requirement.principal, []).append(requirement)
    for principal, requirements in by_principal.items():
        for role in roles[principal]:
            failures += refusals(resolver, role, role_policies(resolver, role), requirements)
    for logical in resolver.of_type("AWS::StepFunctions::StateMachine"):
        role = Role(resolver.logical_id_of(resolver.resources[logical]["Properties"]["RoleArn"]), None)
        definition = state_machine_definition(resolver, logical, asset_text)
        principal = f"{STATE_MACHINE} {resolver.physical_name(logical)}"
        d = resolver.deployment
        own_arn = f"arn:{d.partition}:states:{d.region}:{d.account}:stateMachine:{resolver.physical_name(logical)}"
        requirements = state_machine_requirements(principal, definition, resolver, own_arn=own_arn)
        requirements += state_machine_platform_requirements(resolver, logical, principal)
        failures += refusals(resolver, role, role_policies(resolver, role), requirements)
    with_role, deliveries = rule_requirements(resolver)
    for _principal, reference, requirement in scheduler_requirements(resolver) + with_role:
        role = role_of(resolver, resolver.logical_id_of(reference))
        failures += refusals(resolver, role, role_policies(resolver, role), [requirement])
    failures += delivery_refusals(resolver, deliveries)
    return failures


def _admitting(documents: Iterable[Mapping[str, Any]], service: str) -> list[dict[str, Any]]:
    """The statements of resource policies that apply to an AWS service principal (it by name, or everyone)."""
    kept = []
    for document in documents:
        for statement in as_list(document.get("Statement")):
            principal = statement.get("Principal")
            named = isinstance(principal, Mapping) and (
                service in as_list(principal.get("Service")) or "*" in as_list(principal.get("AWS"))
            )
            if principal == "*" or named:
                kept.append({k: v for k, v in statement.items() if k != "Principal"})
    return [{"Statement": kept}]


def delivery_refusals(resolver: Resolver, deliveries: Iterable[Delivery]) -> list[str]:
    """A sentence for each rule target (or dead-letter queue) whose resource policy, or whose key's policy,
    does not admit EventBridge from that rule (``aws:SourceArn``, ``aws:SourceAccount``)."""
    failures = []
    account = resolver.deployment.account
    for delivery in deliveries:
        context = {"aws:SourceArn": delivery.source_arn, "aws:SourceAccount": account, "aws:SecureTransport": "true"}
        who = f"{delivery.principal} ({delivery.service})"
        why = f"needed by the delivery of rule {delivery.rule}'s events (EventBridge sends without a role)"
        found = resource_policy(resolver, delivery.resource)
        checks = [(delivery.action, delivery.resource, found)]
        target = next(
            (
                logical
                for kind in ("AWS::SQS::Queue", "AWS::SNS::Topic")
                for logical in resolver.of_type(kind)
                if resolver.get_att(logical, "Arn") == delivery.resource
            ),
            None,
        )
        key = None if target is None else encryption_key_arn(resolver, target)
        if key is not None:
            checks += [
                (action, key, resource_policy(resolver, key)) for action in ("kms:GenerateDataKey", "kms:Decrypt")
            ]
        for action, resource, policy in checks:
            if policy is None:
                failures.append(f"{who} is not allowed {action} on {resource}: it has no resource policy: {why}")
                continue
            label, documents = policy
            decision = evaluate(_admitting(documents, delivery.service), Request(action, resource, context))
            if decision.denied_by or not decision.allowed:
                failures.append(f"{who} is not allowed {action} on {resource} by {label}: {why}")
    return failures


def roles_of(resolver: Resolver, principal: str) -> set[str]:
    """Logical ids of the roles of a principal (``state-machine <name>`` for one state machine)."""
    for _principal, reference, _requirement in scheduler_requirements(resolver) + rule_requirements(resolver)[0]:
        if _principal == principal:
            return {resolver.logical_id_of(reference)}
    if principal.startswith(f"{STATE_MACHINE} "):
        logical = find_by_name(resolver, "AWS::StepFunctions::StateMachine", principal.split(" ", 1)[1])
        return {resolver.logical_id_of(resolver.resources[logical]["Properties"]["RoleArn"])}
    return {role.logical_id for role in principals(resolver)[principal]}


def without_action(resolver: Resolver, principal: str, action: str) -> dict[str, Any]:
    """A copy of the resolver's template in which no policy statement of the principal's roles grants
    ``action`` (a statement left with no action is deleted).

    Raises:
        AssertionError: no statement of the principal's roles grants it (nothing to remove).
    """
    roles = roles_of(resolver, principal)
    changed = copy.deepcopy(dict(resolver.template))
    removed = 0
    for resource in changed["Resources"].values():
        # a role's inline DefaultPolicy, and the OverflowPolicy<n> managed policies CDK moves statements into when it
        # grows past what an inline policy holds
        if resource["Type"] not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            continue
        if not any(r.get("Ref") in roles for r in resource["Properties"].get("Roles", [])):
            continue
        statements = []
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            kept = [a for a in actions if a != action]
            removed += len(actions) - len(kept)
            if kept:
                statements.append({**statement, "Action": kept})
        resource["Properties"]["PolicyDocument"]["Statement"] = statements
    assert removed, f"no policy statement of {principal} grants {action}: nothing to remove"
    return changed

"""The permission check: every requirement of every principal against its role's policies in a template.

``check_template`` is what the test calls: the recorded calls of the code principals (File Manager,
Batch Manager, the Glue job, the config loader and smoke check) and every state machine's Task
integrations become requirements, each is evaluated against the policies of the principal's role,
and each one IAM would refuse is returned as a sentence naming the principal, its role, the action,
the resource and the call that needed it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from odp.state_machine import render_definition
from sandbox.aws_calls import AwsCall
from tests.infra.permissions.iam_policy import Request, evaluate
from tests.infra.permissions.requirements import (
    Requirement,
    Translation,
    call_requirements,
    configuration_requirements,
    state_machine_platform_requirements,
    state_machine_requirements,
)
from tests.infra.permissions.template import STATE_MACHINE, Resolver, Role, principals, role_policies


def unique(requirements: Iterable[Requirement]) -> list[Requirement]:
    """One requirement per (principal, action, resource, context), the first reason kept."""
    seen: dict[tuple[Any, ...], Requirement] = {}
    for requirement in requirements:
        seen.setdefault(requirement.key, requirement)
    return list(seen.values())


def refusals(role: Role, documents: list[dict[str, Any]], requirements: Iterable[Requirement]) -> list[str]:
    """A sentence for each requirement the role's policies do not allow (empty: all allowed)."""
    failures = []
    for requirement in unique(requirements):
        decision = evaluate(documents, Request(requirement.action, requirement.resource, dict(requirement.context)))
        if decision.allowed:
            continue
        how = f"explicitly denied by {', '.join(decision.denied_by)}" if decision.denied_by else "not allowed"
        failures.append(
            f"{requirement.principal} ({role.label}) is {how} {requirement.action} on {requirement.resource}: "
            f"needed by {requirement.reason}"
        )
    return failures


def state_machine_definition(resolver: Resolver, logical: str, asset_text: Callable[[str], str]) -> dict[str, Any]:
    """The definition a state machine runs: its asset file rendered with its resolved substitutions."""
    properties = resolver.resources[logical]["Properties"]
    values = {name: str(resolver.resolve(value)) for name, value in properties["DefinitionSubstitutions"].items()}
    return render_definition(values, asset_text(properties["DefinitionS3Location"]["Key"]))


def check_template(
    resolver: Resolver,
    calls: Mapping[str, list[AwsCall]],
    translations: Mapping[str, Translation],
    asset_text: Callable[[str], str],
) -> list[str]:
    """Every refusal in this template: ``calls`` and ``translations`` are keyed by the environment the
    calls were recorded in (``sandbox`` for the local flow, the deployed name for the smoke check)."""
    roles = principals(resolver)
    failures: list[str] = []
    by_principal: dict[str, list[Requirement]] = {}
    recorded_requirements = [
        requirement
        for recorded_in, recorded in calls.items()
        for call in recorded
        for requirement in call_requirements(call, resolver, translations[recorded_in])
    ]
    for requirement in recorded_requirements + configuration_requirements(resolver):
        by_principal.setdefault(requirement.principal, []).append(requirement)
    for principal, requirements in by_principal.items():
        for role in roles[principal]:
            failures += refusals(role, role_policies(resolver, role), requirements)
    for logical in resolver.of_type("AWS::StepFunctions::StateMachine"):
        role = Role(resolver.logical_id_of(resolver.resources[logical]["Properties"]["RoleArn"]), None)
        definition = state_machine_definition(resolver, logical, asset_text)
        principal = f"{STATE_MACHINE} {resolver.physical_name(logical)}"
        requirements = state_machine_requirements(principal, definition, resolver)
        requirements += state_machine_platform_requirements(resolver, logical, principal)
        failures += refusals(role, role_policies(resolver, role), requirements)
    return failures

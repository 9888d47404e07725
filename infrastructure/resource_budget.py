"""The resource budget of every stack of a stage: the synth refuses a stack past it, long before CloudFormation's
limit of 500 resources a stack refuses the deploy (``TooManyResourcesInStack``), naming the stack, its count and
what to do (docs/decisions/034)."""

from __future__ import annotations

import jsii
from aws_cdk import CfnResource, Stack
from constructs import IValidation

# CloudFormation refuses a template of more than 500 resources; a stack stays well below, with room for what a
# change adds before its next synth (a cadence, a dataset, an IAM overflow policy).
CLOUDFORMATION_RESOURCE_LIMIT = 500
STACK_RESOURCE_BUDGET = 350


def resource_count(stack: Stack) -> int:
    """The CloudFormation resources ``stack`` synthesizes (every CfnResource in its tree, nested constructs
    included; parameters, rules and outputs are not resources)."""
    return sum(1 for node in stack.node.find_all() if isinstance(node, CfnResource) and Stack.of(node) is stack)


def budget_refusal(stack_path: str, count: int, budget: int, advice: str) -> str | None:
    """Pure: the refusal of a stack of ``count`` resources over ``budget``, or None within it."""
    if count <= budget:
        return None
    return (
        f"stack {stack_path}: {count} resources, over its budget of {budget} (CloudFormation refuses more than "
        f"{CLOUDFORMATION_RESOURCE_LIMIT}): {advice} (docs/decisions/034)"
    )


@jsii.implements(IValidation)
class _ResourceBudget:
    def __init__(self, stack: Stack, budget: int, advice: str) -> None:
        self.stack, self.budget, self.advice = stack, budget, advice

    def validate(self) -> list[str]:
        refusal = budget_refusal(self.stack.node.path, resource_count(self.stack), self.budget, self.advice)
        return [] if refusal is None else [refusal]


def enforce_resource_budget(stack: Stack, advice: str, budget: int = STACK_RESOURCE_BUDGET) -> None:
    """Refuse the synth when ``stack`` has more than ``budget`` resources. A validation, so it counts after CDK's
    aspects ran (IAM's overflow policies are added then)."""
    stack.node.add_validation(_ResourceBudget(stack, budget, advice))

"""What EventBridge and EventBridge Scheduler do for the template (issue 24, item 9), without the recorded
flow: each schedule's role may start its state machine, each rule target's role may start its target, and
each rule target without a role (the File Manager's queue and its dead-letter queue, the alerts topic)
admits EventBridge from that rule by its resource policy and its key's policy."""

from __future__ import annotations

import copy

import pytest

from odp.config.loader import OdpConfig
from tests.infra.permissions.check import check_template, delivery_refusals, without_action
from tests.infra.permissions.requirements import Translation, rule_requirements, scheduler_requirements
from tests.infra.permissions.template import Deployment, Resolver
from tests.support.synth import SynthesizedApp

QUEUE = "arn:aws:sqs:eu-west-1:111111111111:odp-dev-file-manager"
RULE = "arn:aws:events:eu-west-1:111111111111:rule/odp-dev-staging-object-created"


def _resolver(config: OdpConfig, template: dict, environment: str = "dev") -> Resolver:
    settings = config.environments.environments[environment]
    return Resolver(template, Deployment(environment, settings.account, settings.region))


def _failures(synthesized: SynthesizedApp, config: OdpConfig, template: dict, environment: str = "dev") -> list[str]:
    translations = {environment: Translation(environment, {})}
    return check_template(_resolver(config, template, environment), {}, translations, synthesized.asset_text)


@pytest.mark.parametrize("environment", ["dev", "test", "prod"])
def test_schedules_rules_and_their_targets_are_allowed(synthesized: SynthesizedApp, config, environment) -> None:
    resolver = _resolver(config, synthesized.data_lakes[environment], environment)
    schedules = scheduler_requirements(resolver)
    with_role, deliveries = rule_requirements(resolver)
    assert {r.action for _, _, r in schedules} == {"states:StartExecution"}
    assert len(schedules) == len(config.cadences.cadences)
    assert [(p, r.action) for p, _, r in with_role] == [
        (f"events-rule odp-{environment}-datasets-after-file-processor", "states:StartExecution")
    ]
    assert {(d.rule, d.action, d.resource.rsplit(":", 1)[1]) for d in deliveries} >= {
        (f"odp-{environment}-staging-object-created", "sqs:SendMessage", f"odp-{environment}-file-manager"),
        (f"odp-{environment}-staging-object-created", "sqs:SendMessage", f"odp-{environment}-file-manager-dlq"),
        (f"odp-{environment}-glue-job-failed", "sns:Publish", f"odp-{environment}-alerts"),
    }
    assert _failures(synthesized, config, synthesized.data_lakes[environment], environment) == []


def test_removing_the_schedulers_start_execution_fails_naming_it(synthesized: SynthesizedApp, config) -> None:
    principal = "scheduler odp-dev-file-processor-hourly"
    template = without_action(_resolver(config, synthesized.data_lakes["dev"]), principal, "states:StartExecution")

    failures = _failures(synthesized, config, template)

    assert len(failures) == 1
    assert failures[0].startswith(f"{principal} (role ")
    assert failures[0].endswith(
        " is not allowed states:StartExecution on arn:aws:states:eu-west-1:111111111111:stateMachine:"
        "odp-dev-file-processor-hourly: needed by EventBridge Scheduler starts the target of schedule "
        "odp-dev-file-processor-hourly"
    )


def test_removing_the_datasets_rules_start_execution_fails_naming_it(synthesized: SynthesizedApp, config) -> None:
    principal = "events-rule odp-dev-datasets-after-file-processor"
    template = without_action(_resolver(config, synthesized.data_lakes["dev"]), principal, "states:StartExecution")

    failures = _failures(synthesized, config, template)

    assert [f.split(" (role ")[0] for f in failures] == [principal]
    assert " is not allowed states:StartExecution on arn:aws:states:eu-west-1:111111111111:stateMachine:" in failures[0]


def test_a_queue_policy_without_the_rules_source_arn_fails(synthesized: SynthesizedApp, config) -> None:
    """The queue must admit EventBridge from this rule (aws:SourceArn): another rule's ARN is refused."""
    template = copy.deepcopy(synthesized.data_lakes["dev"])
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::SQS::QueuePolicy":
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                if "ArnEquals" in statement.get("Condition", {}):
                    statement["Condition"]["ArnEquals"]["aws:SourceArn"] = "arn:aws:events:eu-west-1:1:rule/other"
    resolver = _resolver(config, template)

    failures = delivery_refusals(resolver, rule_requirements(resolver)[1])

    why = "needed by the delivery of rule odp-dev-staging-object-created's events (EventBridge sends without a role)"
    assert failures == [
        f"events-rule odp-dev-staging-object-created (events.amazonaws.com) is not allowed sqs:SendMessage on {QUEUE} "
        f"by the queue policy of odp-dev-file-manager: {why}",
        f"events-rule odp-dev-staging-object-created (events.amazonaws.com) is not allowed sqs:SendMessage on "
        f"{QUEUE}-dlq by the queue policy of odp-dev-file-manager-dlq: {why}",
    ]


def test_the_rule_to_queue_target_has_a_dead_letter_queue(synthesized: SynthesizedApp) -> None:
    """Issue 24, item 10: an event EventBridge cannot deliver lands in the DLQ (alarmed), not nowhere."""
    rules = synthesized.resources(synthesized.data_lakes["dev"], "AWS::Events::Rule")
    (target,) = next(r for r in rules.values() if r["Properties"]["Name"] == "odp-dev-staging-object-created")[
        "Properties"
    ]["Targets"]
    assert target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0].startswith("FileManagerDeadLetterQueue")
    assert target["RetryPolicy"] == {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}

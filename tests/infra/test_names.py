"""Worst-case names: synthesize a configuration whose environment and cadence names are as long as
validation allows (in the region with the longest name) and check every physical name in the templates
against its service's rule; every such name is one odp.naming.physical_names lists (what validation checks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from odp.config import ConfigError, load_config
from odp.naming import NAME_RULES, physical_names, stream_physical_names

LONGEST_REGION = "ap-southeast-2"
# Resource type -> (the property holding its physical name, the rule it follows).
NAMED_RESOURCES: dict[str, tuple[tuple[str, ...], str]] = {
    "AWS::S3::Bucket": (("BucketName",), "s3_bucket"),
    "AWS::StepFunctions::StateMachine": (("StateMachineName",), "state_machine"),
    "AWS::Scheduler::Schedule": (("Name",), "schedule"),
    "AWS::Glue::Job": (("Name",), "glue_job"),
    "AWS::Glue::Connection": (("ConnectionInput", "Name"), "glue_connection"),
    "AWS::Glue::SecurityConfiguration": (("Name",), "glue_security_configuration"),
    "AWS::IAM::Role": (("RoleName",), "iam_role"),
    "AWS::DynamoDB::GlobalTable": (("TableName",), "dynamodb_table"),
    "AWS::Logs::LogGroup": (("LogGroupName",), "log_group"),
    "AWS::Lambda::Function": (("FunctionName",), "lambda_function"),
    "AWS::SQS::Queue": (("QueueName",), "sqs_queue"),
    "AWS::Events::Rule": (("Name",), "events_rule"),
    "AWS::SNS::Topic": (("TopicName",), "sns_topic"),
    "AWS::CloudWatch::Alarm": (("AlarmName",), "cloudwatch_alarm"),
    "AWS::CloudWatch::Dashboard": (("DashboardName",), "dashboard"),
    "AWS::CodePipeline::Pipeline": (("Name",), "pipeline"),
    "AWS::Athena::WorkGroup": (("Name",), "athena_workgroup"),
    "AWS::KMS::Alias": (("AliasName",), "kms_alias"),
}
# Named by CDK from the stack name (CDK keeps it within the limit), not from our configuration.
GENERATED_PREFIXES = ("alias/codepipeline-",)


def _write_config(repo_root: Path, root: Path, environment: str, cadence: str) -> Path:
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(repo_root / "config", root)
    environments = yaml.safe_load((root / "environments.yaml").read_text())
    zones = [f"{LONGEST_REGION}a", f"{LONGEST_REGION}b"]  # test data: the zones of the config written here
    dev = {**environments["environments"]["dev"], "region": LONGEST_REGION, "availability_zones": zones}
    environments["deployment"]["region"] = LONGEST_REGION
    environments["environments"] = {environment: dev}
    (root / "environments.yaml").write_text(yaml.safe_dump(environments))
    cadences = yaml.safe_load((root / "cadences.yaml").read_text())
    cadences["cadences"][cadence] = cadences["cadences"]["hourly"]
    (root / "cadences.yaml").write_text(yaml.safe_dump(cadences))
    return root


def _valid(repo_root: Path, root: Path, environment: str, cadence: str) -> bool:
    try:
        load_config(_write_config(repo_root, root, environment, cadence))
    except ConfigError:
        return False
    return True


def _longest(valid, alphabet: str) -> str:
    """The longest prefix of ``alphabet`` repeated that ``valid`` accepts."""
    length = 1
    while valid((alphabet * (length + 1))[: length + 1]):
        length += 1
    return (alphabet * length)[:length]


def _text(value: Any, pseudo: dict[str, str]) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_text(part, pseudo) for part in parts)
    if isinstance(value, dict) and value.get("Ref") in pseudo:
        return pseudo[value["Ref"]]
    raise AssertionError(f"a physical name that is not text: {value}")


@pytest.fixture(scope="module")
def worst_case(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str], dict[str, dict]]:
    from infrastructure.application import build_app, cdk_json_context, new_app

    root = tmp_path_factory.mktemp("worst") / "config"
    # Letters and a dash: the longest names the rules accept, environment first, then the cadence.
    environment = _longest(lambda name: _valid(repo_root, root, "w" + name, "c"), "x-")
    environment = "w" + environment
    cadence = _longest(lambda name: _valid(repo_root, root, environment, "c" + name), "y_")
    cadence = "c" + cadence
    _write_config(repo_root, root, environment, cadence)
    app = new_app(context={**cdk_json_context()}, outdir=str(tmp_path_factory.mktemp("worst.out")))
    assembly = build_app(app, config_dir=root).synth()
    templates = {}
    stacks = list(assembly.stacks)
    for nested in assembly.nested_assemblies:
        stacks.extend(nested.nested_assembly.stacks)
    for stack in stacks:
        templates[stack.hierarchical_id] = json.loads(Path(stack.template_full_path).read_text(encoding="utf-8"))
    return environment, list(load_config(root).cadences.cadences), templates


def test_worst_case_names_are_as_long_as_validation_allows(worst_case) -> None:
    environment, cadences, _ = worst_case
    cadence = max(cadences, key=len)
    # odp-<env>-athena-results-<account>-ap-southeast-2 is the longest bucket name: 63 characters.
    assert len(f"odp-{environment}-athena-results-111111111111-{LONGEST_REGION}") == 63
    # odp-<env>-file-processor-<cadence>: the schedule name, 64 characters at most (or the 40-character cadence key).
    assert len(f"odp-{environment}-file-processor-{cadence}") == 64 or len(cadence) == 40


def test_every_physical_name_follows_its_service_rule(worst_case) -> None:
    environment, cadences, templates = worst_case
    pseudo = {"AWS::Region": LONGEST_REGION, "AWS::AccountId": "111111111111", "AWS::Partition": "aws"}
    checked: dict[str, int] = {}
    problems = []
    listed = {n.name for n in physical_names(environment, "111111111111", LONGEST_REGION, cadences)}
    unlisted = []
    for path, template in templates.items():
        for logical, resource in template["Resources"].items():
            if resource["Type"] not in NAMED_RESOURCES:
                continue
            keys, kind = NAMED_RESOURCES[resource["Type"]]
            value: Any = resource.get("Properties", {})
            for key in keys:
                value = value.get(key) if isinstance(value, dict) else None
            if value is None:
                continue  # CDK generates the name
            name = _text(value, pseudo)
            checked[kind] = checked.get(kind, 0) + 1
            problem = NAME_RULES[kind].problem(name)
            if problem:
                problems.append(f"{path}/{logical}: {problem}")
            if f"odp-{environment}" in name and not name.startswith(GENERATED_PREFIXES) and name not in listed:
                unlisted.append(name)
    assert problems == []
    assert set(checked) == {kind for _, kind in NAMED_RESOURCES.values()}  # every rule met a name
    # Validation checks odp.naming.physical_names: every name the stage derives from the configuration is there.
    assert unlisted == []


def test_every_stream_name_of_the_two_stream_stage_is_one_validation_checks(streaming_stage) -> None:
    """Issue 24, item 9: odp.naming.stream_physical_names lists every name a stream becomes (the Glue job,
    the Kinesis stream, the alarms, the job-stopped rule), so odp/config refuses a stream whose name AWS
    would refuse (tests/unit/odp/test_config_errors.py has the 64-character rule case)."""
    config = load_config(streaming_stage.config_dir)
    listed = {n.name: n.kind for s in config.streams.streams for n in stream_physical_names("dev", s)}
    kinds = {
        "AWS::Glue::Job": ("Name", "glue_job"),
        "AWS::Kinesis::Stream": ("Name", "kinesis_stream"),
        "AWS::CloudWatch::Alarm": ("AlarmName", "cloudwatch_alarm"),
        "AWS::Events::Rule": ("Name", "events_rule"),
    }
    made = {}
    for resource in streaming_stage.template["Resources"].values():
        if resource["Type"] in kinds:
            key, kind = kinds[resource["Type"]]
            name = resource["Properties"].get(key)
            if isinstance(name, str) and any(s in name for s in config.streams.streams):
                made[name] = kind
    assert made == listed

"""Config validation knows the AWS name rules of every physical name an environment and cadence become."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from odp.config import ConfigError, load_config
from odp.naming import NAME_RULES, physical_names


def config_with(repo_root: Path, tmp_path: Path, *, environment: str, cadence: str | None = None) -> Path:
    """The shipped configuration with one environment renamed (and one cadence added)."""
    root = tmp_path / "config"
    shutil.copytree(repo_root / "config", root)
    environments = yaml.safe_load((root / "environments.yaml").read_text())
    environments["environments"] = {environment: environments["environments"]["dev"]}
    (root / "environments.yaml").write_text(yaml.safe_dump(environments))
    if cadence is not None:
        cadences = yaml.safe_load((root / "cadences.yaml").read_text())
        cadences["cadences"][cadence] = cadences["cadences"]["hourly"]
        (root / "cadences.yaml").write_text(yaml.safe_dump(cadences))
    return root


def issues_of(root: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    return [str(issue) for issue in caught.value.issues]


def test_an_underscore_in_an_environment_name_is_refused_for_its_bucket_names(repo_root, tmp_path) -> None:
    found = issues_of(config_with(repo_root, tmp_path, environment="my_env"))
    assert found[0] == (
        "environments.yaml: environments.my_env: the S3 bucket name "
        "'odp-my_env-staging-111111111111-eu-west-1' may contain only lower-case letters, digits, '.' and '-' (no '_')"
    )
    assert len(found) == 7  # one per bucket


def test_a_long_environment_name_overflows_the_bucket_names(repo_root, tmp_path) -> None:
    # odp-<env>-athena-results-<account>-eu-west-1: 42 + env characters; S3 allows 63.
    assert load_config(config_with(repo_root, tmp_path / "a", environment="e" * 21))
    found = issues_of(config_with(repo_root, tmp_path / "b", environment="e" * 22))
    assert found == [
        f"environments.yaml: environments.{'e' * 22}: the S3 bucket name "
        f"'odp-{'e' * 22}-athena-results-111111111111-eu-west-1' has 64 characters; AWS allows 3 to 63"
    ]


def test_a_long_cadence_name_overflows_the_schedule_name(repo_root, tmp_path) -> None:
    # odp-<env>-file-processor-<cadence>: 20 + env + cadence characters; schedules allow 64, state machines 80.
    assert load_config(config_with(repo_root, tmp_path / "a", environment="e" * 5, cadence="c" * 39))
    found = issues_of(config_with(repo_root, tmp_path / "b", environment="e" * 5, cadence="c" * 40))
    assert found == [
        f"cadences.yaml: cadences.{'c' * 40}: in environment 'eeeee': the EventBridge Scheduler schedule name "
        f"'odp-eeeee-file-processor-{'c' * 40}' has 65 characters; AWS allows 1 to 64"
    ]


def test_every_rule_refuses_a_name_one_character_too_long() -> None:
    for kind, rule in NAME_RULES.items():
        name = ("alias/" if kind == "kms_alias" else "") + "a" * rule.max_length
        name = name[: rule.max_length]
        assert rule.problem(name) is None, kind
        assert rule.problem(name + "a") is not None, kind


def test_the_shipped_environments_have_no_name_problem(repo_root) -> None:
    config = load_config(repo_root / "config")
    for name, env in config.environments.environments.items():
        names = physical_names(name, env.account, env.region, list(config.cadences.cadences))
        assert [n.problem() for n in names if n.problem()] == []


def test_the_emr_serverless_names_are_listed_with_their_services_rules() -> None:
    """The application, its image's repository and its failed-run rule (infrastructure/jobs/engines/): validation
    checks them as it checks every other name; ECR takes lower-case names only."""
    listed = {(n.kind, n.name) for n in physical_names("dev", "111111111111", "eu-west-1", ["hourly"])}
    assert {
        ("emr_application", "odp-dev-spark"),
        ("ecr_repository", "odp-dev-emr-spark"),
        ("events_rule", "odp-dev-emr-job-run-failed"),
    } <= listed
    assert NAME_RULES["ecr_repository"].problem("odp-Dev-emr-spark") == (
        "the ECR repository name 'odp-Dev-emr-spark' may contain only lower-case letters, digits and separators "
        "('.', '_', '-', '/') between them"
    )
    assert NAME_RULES["emr_application"].problem("odp-dev spark") is not None

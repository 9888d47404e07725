"""Storage: keys with rotation, encrypted and locked-down buckets, lifecycle and retention from config."""

from __future__ import annotations

import pytest

from infrastructure.foundation.storage import DATA_ZONES


def _buckets(synthesized, env: str) -> dict[str, dict]:
    return synthesized.resources(synthesized.data_lakes[env], "AWS::S3::Bucket")


def _bucket(buckets: dict[str, dict], purpose: str) -> dict:
    name_part = f"-{purpose.replace('_', '-')}-"
    matches = [b for b in buckets.values() if name_part in b["Properties"]["BucketName"]]
    assert len(matches) == 1, purpose
    return matches[0]


@pytest.mark.parametrize("env", ["dev", "test", "prod"])
def test_every_key_rotates(synthesized, env) -> None:
    keys = synthesized.resources(synthesized.data_lakes[env], "AWS::KMS::Key")
    assert len(keys) == len(DATA_ZONES) + 1  # one per zone + the state key
    assert all(key["Properties"]["EnableKeyRotation"] is True for key in keys.values())


@pytest.mark.parametrize("env", ["dev", "test", "prod"])
def test_buckets_are_encrypted_private_versioned_and_logged(synthesized, env) -> None:
    buckets = _buckets(synthesized, env)
    template = synthesized.data_lakes[env]
    purposes = (*DATA_ZONES, "artifacts", "athena_results")
    access_logs = _bucket(buckets, "access_logs")
    assert access_logs["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0][
        "ServerSideEncryptionByDefault"
    ] == {"SSEAlgorithm": "AES256"}
    logs_logical = next(k for k, v in buckets.items() if v is access_logs)
    for purpose in purposes:
        props = _bucket(buckets, purpose)["Properties"]
        rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
        assert "KMSMasterKeyID" in rule["ServerSideEncryptionByDefault"]
        assert props["LoggingConfiguration"]["DestinationBucketName"] == {"Ref": logs_logical}
    for bucket in buckets.values():
        props = bucket["Properties"]
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }
        assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    policies = synthesized.resources(template, "AWS::S3::BucketPolicy").values()
    tls_denied = set()
    for policy in policies:
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and statement.get("Condition", {}).get("Bool") == {
                "aws:SecureTransport": "false"
            }:
                tls_denied.add(policy["Properties"]["Bucket"]["Ref"])
    assert tls_denied == set(buckets)


def test_staging_sends_events_to_eventbridge_and_expires_landed_files(synthesized, config) -> None:
    for env, settings in config.environments.environments.items():
        staging = _bucket(_buckets(synthesized, env), "staging")["Properties"]
        assert staging["NotificationConfiguration"]["EventBridgeConfiguration"]["EventBridgeEnabled"] is True
        rules = {rule["Id"]: rule for rule in staging["LifecycleConfiguration"]["Rules"]}
        assert rules["expire-landed-files"]["ExpirationInDays"] == settings.staging_retention_days
        assert (
            rules["expire-noncurrent-versions"]["NoncurrentVersionExpiration"]["NoncurrentDays"]
            == settings.data_retention_days
        )


def test_data_is_retained_where_config_says_retain(synthesized, config) -> None:
    for env, settings in config.environments.environments.items():
        template = synthesized.data_lakes[env]
        # retain: RetainExceptOnCreate, kept unless the create that made it rolls back (docs/decisions/028)
        expected = "RetainExceptOnCreate" if settings.removal_policy == "retain" else "Delete"
        for kind in ("AWS::S3::Bucket", "AWS::KMS::Key", "AWS::DynamoDB::GlobalTable"):
            policies = {r.get("DeletionPolicy") for r in synthesized.resources(template, kind).values()}
            assert policies == {expected}, (env, kind)
    assert {config.environments.environments[e].removal_policy for e in ("test", "prod")} == {"retain"}


def test_a_destroy_environment_can_be_torn_down_and_the_others_keep_their_data(synthesized, config) -> None:
    for env, settings in config.environments.environments.items():
        template = synthesized.data_lakes[env]
        buckets = synthesized.resources(template, "AWS::S3::Bucket")
        emptied = synthesized.resources(template, "Custom::S3AutoDeleteObjects")
        (workgroup,) = synthesized.resources(template, "AWS::Athena::WorkGroup").values()
        destroy = settings.removal_policy == "destroy"
        # Versioned buckets are emptied (every version) before CloudFormation deletes them.
        assert len(emptied) == (len(buckets) if destroy else 0), env
        assert {e["Properties"]["BucketName"]["Ref"] for e in emptied.values()} == (set(buckets) if destroy else set())
        assert workgroup["Properties"]["RecursiveDeleteOption"] is destroy, env
    assert config.environments.environments["dev"].removal_policy == "destroy"

"""File Manager: EventBridge rule -> encrypted SQS with a DLQ -> function with partial batch responses."""

from __future__ import annotations

import json

from infrastructure.ingest.file_manager import (
    EVENT_PATTERN_MAX_LENGTH,
    HANDLER,
    MAX_RECEIVE_COUNT,
    fits_event_pattern_quota,
    key_prefixes,
    object_created_pattern,
)
from odp.contracts.lambda_env import lambda_environment
from odp.naming import TrackerTableNames


def _by_name(resources: dict, key: str) -> dict[str, tuple[str, dict]]:
    return {
        r["Properties"][key]: (logical, r["Properties"]) for logical, r in resources.items() if key in r["Properties"]
    }


def test_queue_is_encrypted_with_a_dead_letter_queue_and_outlives_the_function(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    queues = _by_name(synthesized.resources(template, "AWS::SQS::Queue"), "QueueName")
    dlq_logical, dlq = queues["odp-dev-file-manager-dlq"]
    _, queue = queues["odp-dev-file-manager"]
    for props in (queue, dlq):
        assert "KmsMasterKeyId" in props
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_logical, "Arn"]},
        "maxReceiveCount": MAX_RECEIVE_COUNT,
    }
    function = _by_name(synthesized.resources(template, "AWS::Lambda::Function"), "FunctionName")[
        "odp-dev-file-manager"
    ][1]
    assert queue["VisibilityTimeout"] > function["Timeout"]


def test_function_reports_partial_batch_failures_and_gets_its_environment(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    functions = _by_name(synthesized.resources(template, "AWS::Lambda::Function"), "FunctionName")
    logical, function = functions["odp-dev-file-manager"]
    assert function["Handler"] == HANDLER
    assert function["Runtime"] == "python3.11"
    assert function["TracingConfig"] == {"Mode": "Active"}
    expected = lambda_environment("dev", TrackerTableNames.for_environment("dev"), service="file_manager")
    assert function["Environment"]["Variables"] == expected
    mappings = [
        m["Properties"]
        for m in synthesized.resources(template, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": logical}
    ]
    assert len(mappings) == 1
    assert mappings[0]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_rule_matches_data_files_of_configured_sources_in_staging(synthesized, config) -> None:
    template = synthesized.data_lakes["dev"]
    rule = next(
        r["Properties"]
        for r in synthesized.resources(template, "AWS::Events::Rule").values()
        if r["Properties"].get("Name") == "odp-dev-staging-object-created"
    )
    pattern = rule["EventPattern"]
    assert pattern["source"] == ["aws.s3"]
    assert pattern["detail-type"] == ["Object Created"]
    keys = pattern["detail"]["object"]["key"]
    # A prefix per source and no suffix filter: extension-less objects (Firehose's default) reach the queue.
    assert keys == [{"prefix": p} for p in key_prefixes(t.source for t in config.tables)]
    assert {"prefix": "inventory_debezium/"} in keys
    assert {"prefix": "taxi_trips_dms/"} in keys
    assert len(rule["Targets"]) == 1


def test_key_prefixes_one_per_source_sorted() -> None:
    assert key_prefixes(["b", "a", "a"]) == ["a/", "b/"]


def test_pattern_of_many_sources_stays_within_the_quota_or_matches_the_bucket() -> None:
    # 40 sources of 30 characters fit; the quota is measured with a 63-character bucket name.
    forty = [f"source_{i:02d}_{'x' * 20}" for i in range(40)]
    assert fits_event_pattern_quota(key_prefixes(forty))
    pattern = object_created_pattern("b" * 63, key_prefixes(forty))
    assert len(json.dumps(pattern, separators=(",", ":"))) <= EVENT_PATTERN_MAX_LENGTH
    hundred = [f"source_{i:03d}_{'x' * 20}" for i in range(100)]
    assert not fits_event_pattern_quota(key_prefixes(hundred))
    assert "object" not in object_created_pattern("b", None)["detail"]


def test_file_manager_may_register_and_onboard_but_not_scan(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    tables = {
        r["Properties"]["TableName"]: logical
        for logical, r in template["Resources"].items()
        if r["Type"] == "AWS::DynamoDB::GlobalTable"
    }
    functions = _by_name(synthesized.resources(template, "AWS::Lambda::Function"), "FunctionName")
    statements = synthesized.role_statements(template, functions["odp-dev-file-manager"][1]["Role"]["Fn::GetAtt"][0])

    def allowed(action: str, table: str) -> bool:
        arn = {"Fn::GetAtt": [tables[table], "Arn"]}
        return any(action in s["Action"] and (arn == s["Resource"] or arn in s["Resource"]) for s in statements)

    assert allowed("dynamodb:PutItem", "odp-dev-file-tracker")
    assert allowed("dynamodb:ConditionCheckItem", "odp-dev-file-tracker-history")
    assert not allowed("dynamodb:PutItem", "odp-dev-file-tracker-history")
    assert allowed("dynamodb:GetItem", "odp-dev-table-config")
    assert allowed("dynamodb:PutItem", "odp-dev-table-config")  # include: the File Manager onboards tables
    assert all("dynamodb:Scan" not in s["Action"] for s in statements)


def test_powertools_layer_is_the_version_the_tests_run(synthesized, repo_root) -> None:
    import re

    from infrastructure.ingest.lambda_function import POWERTOOLS_LAYER_PARAMETER, POWERTOOLS_VERSION

    pinned = re.search(
        r"^aws-lambda-powertools(?:\[[^\]]*\])?==(\S+)$",
        (repo_root / "requirements.txt").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert pinned is not None
    assert pinned.group(1) == POWERTOOLS_VERSION
    assert POWERTOOLS_LAYER_PARAMETER.endswith(f"/{POWERTOOLS_VERSION}")
    text = json.dumps(synthesized.data_lakes["dev"])
    assert POWERTOOLS_LAYER_PARAMETER in text
    assert "python3.11/latest" not in text

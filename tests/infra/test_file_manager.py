"""File Manager: EventBridge rule -> encrypted SQS with a DLQ -> function with partial batch responses."""

from __future__ import annotations

from infrastructure.file_manager import HANDLER, MAX_RECEIVE_COUNT, key_patterns
from odp.lambda_env import lambda_environment
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
    keys = [entry["wildcard"] for entry in pattern["detail"]["object"]["key"]]
    assert keys == key_patterns(t.source for t in config.tables)
    assert "inventory_debezium/*.jsonl" in keys
    assert "taxi_trips_dms/*.parquet" in keys
    assert len(rule["Targets"]) == 1


def test_key_patterns_drop_suffixes_already_covered() -> None:
    assert key_patterns(["b", "a", "a"]) == [
        f"{source}/*{suffix}" for source in ("a", "b") for suffix in (".csv", ".gz", ".json", ".jsonl", ".parquet")
    ]


def _role_statements(template: dict, function_props: dict) -> list[dict]:
    role = function_props["Role"]["Fn::GetAtt"][0]
    return [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role} in resource["Properties"]["Roles"]
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_file_manager_may_register_but_not_scan(synthesized) -> None:
    template = synthesized.data_lakes["dev"]
    tables = {
        r["Properties"]["TableName"]: logical
        for logical, r in template["Resources"].items()
        if r["Type"] == "AWS::DynamoDB::GlobalTable"
    }
    functions = _by_name(synthesized.resources(template, "AWS::Lambda::Function"), "FunctionName")
    statements = _role_statements(template, functions["odp-dev-file-manager"][1])

    def allowed(action: str, table: str) -> bool:
        arn = {"Fn::GetAtt": [tables[table], "Arn"]}
        return any(action in s["Action"] and (arn == s["Resource"] or arn in s["Resource"]) for s in statements)

    assert allowed("dynamodb:PutItem", "odp-dev-file-tracker")
    assert allowed("dynamodb:ConditionCheckItem", "odp-dev-file-tracker-history")
    assert not allowed("dynamodb:PutItem", "odp-dev-file-tracker-history")
    assert allowed("dynamodb:GetItem", "odp-dev-table-config")
    assert not allowed("dynamodb:PutItem", "odp-dev-table-config")
    assert all("dynamodb:Scan" not in s["Action"] for s in statements)

"""The IAM evaluator the permission test relies on: wildcards, Not* elements, Deny, conditions."""

from __future__ import annotations

import pytest

from tests.infra.permissions.iam_policy import (
    Request,
    UnsupportedPolicyError,
    conditions_hold,
    evaluate,
    evaluate_resource_policy,
    principal_matches,
    wildcard_match,
)

TABLE = "arn:aws:dynamodb:eu-west-1:111111111111:table/odp-dev-table-config"


def policy(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(actions: object, resources: object, **extra: object) -> dict:
    return {"Effect": "Allow", "Action": actions, "Resource": resources, **extra}


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("arn:aws:s3:::raw/*", "arn:aws:s3:::raw/db/table/.hoodie/x.commit", True),
        ("arn:aws:s3:::raw/*", "arn:aws:s3:::raw", False),
        ("arn:aws:s3:::raw/glue/*", "arn:aws:s3:::raw/other/x", False),
        ("arn:aws:lambda:*:*:function:f:?", "arn:aws:lambda:eu-west-1:1:function:f:1", True),
        ("arn:aws:lambda:*:*:function:f:?", "arn:aws:lambda:eu-west-1:1:function:f:12", False),
        ("arn:aws:s3:::a[1]", "arn:aws:s3:::a[1]", True),  # brackets are literal in IAM
        ("arn:aws:s3:::a.b", "arn:aws:s3:::aXb", False),  # so are dots
    ],
)
def test_wildcards(pattern: str, value: str, expected: bool) -> None:
    assert wildcard_match(pattern, value) is expected


def test_an_allow_for_another_action_or_table_is_an_implicit_deny() -> None:
    documents = [policy(allow(["dynamodb:GetItem", "dynamodb:Query"], TABLE))]
    assert evaluate(documents, Request("dynamodb:GetItem", TABLE)).allowed
    assert not evaluate(documents, Request("dynamodb:Scan", TABLE)).allowed
    assert not evaluate(documents, Request("dynamodb:GetItem", TABLE.replace("table-config", "batch-config"))).allowed


def test_actions_match_case_insensitively_and_with_wildcards() -> None:
    documents = [policy(allow("DynamoDB:get*", TABLE, Sid="Reads"))]
    decision = evaluate(documents, Request("dynamodb:GetItem", TABLE))
    assert decision.allowed
    assert decision.allowed_by == ("Reads",)


def test_an_explicit_deny_wins_over_an_allow() -> None:
    documents = [
        policy(allow("dynamodb:*", "*")),
        policy({"Effect": "Deny", "Action": "dynamodb:Scan", "Resource": TABLE, "Sid": "NoScan"}),
    ]
    decision = evaluate(documents, Request("dynamodb:Scan", TABLE))
    assert not decision.allowed
    assert decision.denied_by == ("NoScan",)
    assert evaluate(documents, Request("dynamodb:Query", TABLE)).allowed


def test_not_action_and_not_resource() -> None:
    documents = [
        policy(
            {"Effect": "Allow", "NotAction": "dynamodb:DeleteTable", "Resource": TABLE},
            {"Effect": "Allow", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::secret/*"},
        )
    ]
    assert evaluate(documents, Request("dynamodb:Scan", TABLE)).allowed
    assert not evaluate(documents, Request("dynamodb:DeleteTable", TABLE)).allowed
    assert evaluate(documents, Request("s3:GetObject", "arn:aws:s3:::raw/x")).allowed
    assert not evaluate(documents, Request("s3:GetObject", "arn:aws:s3:::secret/x")).allowed


def test_a_condition_must_hold_for_the_allow_to_count() -> None:
    statement = allow("cloudwatch:PutMetricData", "*", Condition={"StringEquals": {"cloudwatch:namespace": "Glue"}})
    documents = [policy(statement)]
    assert evaluate(documents, Request("cloudwatch:PutMetricData", "*", {"cloudwatch:namespace": "Glue"})).allowed
    assert not evaluate(documents, Request("cloudwatch:PutMetricData", "*", {"cloudwatch:namespace": "ODP"})).allowed
    assert not evaluate(documents, Request("cloudwatch:PutMetricData", "*")).allowed  # key absent


def test_condition_operators() -> None:
    context = {
        "aws:SecureTransport": "true",
        "s3:prefix": "db/table/",
        "kms:ViaService": "dynamodb.eu-west-1.amazonaws.com",
    }
    assert conditions_hold({"Bool": {"aws:SecureTransport": "true"}}, context)
    assert not conditions_hold({"Bool": {"aws:SecureTransport": False}}, context)
    assert conditions_hold({"StringLike": {"s3:prefix": ["other/*", "db/*"]}}, context)
    assert not conditions_hold({"StringNotLike": {"s3:prefix": "db/*"}}, context)
    assert conditions_hold({"StringEqualsIfExists": {"aws:SourceVpc": "vpc-1"}}, context)
    assert not conditions_hold({"StringEquals": {"aws:SourceVpc": "vpc-1"}}, context)
    assert conditions_hold({"Null": {"aws:SourceVpc": "true"}}, context)
    assert conditions_hold({"ForAnyValue:StringLike": {"kms:ViaService": "dynamodb.*"}}, context)
    # Every operator and key must hold: one false makes the block false.
    assert not conditions_hold({"Bool": {"aws:SecureTransport": "true"}, "StringEquals": {"s3:prefix": "x/"}}, context)


def test_unsupported_operators_and_variables_raise_instead_of_guessing() -> None:
    with pytest.raises(UnsupportedPolicyError, match="condition operator 'DateGreaterThan' is not supported"):
        conditions_hold({"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}}, {})
    with pytest.raises(UnsupportedPolicyError, match="policy variables are not supported"):
        evaluate([policy(allow("s3:GetObject", "arn:aws:s3:::b/${aws:username}/*"))], Request("s3:GetObject", "x"))


ROLE = "arn:aws:iam::111111111111:role/odp-dev-config-loader"


def test_numeric_conditions_such_as_the_buckets_tls_rule() -> None:
    tls_rule = {"NumericLessThan": {"s3:TlsVersion": 1.2}}
    assert not conditions_hold(tls_rule, {"s3:TlsVersion": "1.2"})
    assert conditions_hold(tls_rule, {"s3:TlsVersion": "1.1"})
    assert conditions_hold({"NumericGreaterThanEquals": {"s3:max-keys": "10"}}, {"s3:max-keys": "10"})


def test_resource_policies_apply_to_the_role_its_account_or_everyone() -> None:
    assert principal_matches({"Principal": "*"}, ROLE)
    assert principal_matches({"Principal": {"AWS": "arn:aws:iam::111111111111:root"}}, ROLE)
    assert principal_matches({"Principal": {"AWS": ["111111111111"]}}, ROLE)
    assert principal_matches({"Principal": {"AWS": ROLE}}, ROLE)
    assert not principal_matches({"Principal": {"AWS": "arn:aws:iam::222222222222:root"}}, ROLE)
    assert not principal_matches({"Principal": {"Service": "events.amazonaws.com"}}, ROLE)
    with pytest.raises(UnsupportedPolicyError, match="NotPrincipal is not supported"):
        principal_matches({"NotPrincipal": {"AWS": ROLE}}, ROLE)


def test_a_bucket_policy_denies_plain_http_and_old_tls_only() -> None:
    bucket_policy = policy(
        {
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "s3:*",
            "Resource": "*",
            "Sid": "TLS",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        },
        {
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "s3:*",
            "Resource": "*",
            "Sid": "TLS12",
            "Condition": {"NumericLessThan": {"s3:TlsVersion": 1.2}},
        },
        {
            "Effect": "Allow",
            "Principal": {"Service": "logging.s3.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": "*",
        },
    )
    secure = {"aws:SecureTransport": "true", "s3:TlsVersion": "1.2"}
    decision = evaluate_resource_policy([bucket_policy], Request("s3:PutObject", "arn:aws:s3:::b/k", secure), ROLE)
    assert (decision.allowed, decision.denied_by) == (False, ())  # no Allow for the role: IAM decides
    plain = {"aws:SecureTransport": "false", "s3:TlsVersion": "1.2"}
    decision = evaluate_resource_policy([bucket_policy], Request("s3:PutObject", "arn:aws:s3:::b/k", plain), ROLE)
    assert decision.denied_by == ("TLS",)

"""A small IAM identity-policy evaluator: does a set of policy documents allow an action on a resource?

The rules of AWS's policy evaluation logic for one principal's identity policies: an explicit Deny
wins, otherwise an Allow is needed, otherwise the request is implicitly denied. ``Action`` /
``NotAction`` and ``Resource`` / ``NotResource`` match with ``*`` and ``?`` wildcards (actions
case-insensitively); ``Condition`` blocks are evaluated against the request's context keys with
the operators below. An operator outside that list, or a policy variable (``${aws:username}``),
raises :class:`UnsupportedPolicyError`: never a silent allow or deny.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ALLOW = "Allow"
DENY = "Deny"
Context = Mapping[str, str | Sequence[str]]


class UnsupportedPolicyError(ValueError):
    """The policy uses a condition operator or a variable this evaluator does not implement."""


@dataclass(frozen=True)
class Request:
    """One authorisation question: ``action`` (``dynamodb:Scan``) on ``resource`` (an ARN or ``*``)."""

    action: str
    resource: str
    context: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)  # condition keys of the request


@dataclass(frozen=True)
class Decision:
    """``allowed`` and the statements that decided it (Sid or index, for messages)."""

    allowed: bool
    allowed_by: tuple[str, ...] = ()
    denied_by: tuple[str, ...] = ()


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def wildcard_match(pattern: str, value: str, *, case_sensitive: bool = True) -> bool:
    """IAM wildcards: ``*`` any run of characters (``/`` and ``:`` included), ``?`` one character."""
    if "${" in pattern:
        raise UnsupportedPolicyError(f"policy variables are not supported: {pattern!r}")
    return _wildcard_regex(pattern, case_sensitive).fullmatch(value) is not None


@functools.cache
def _wildcard_regex(pattern: str, case_sensitive: bool) -> re.Pattern[str]:
    """One compiled expression per pattern: a check evaluates the same few hundred patterns against every call."""
    flags = re.DOTALL if case_sensitive else re.DOTALL | re.IGNORECASE
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), flags)


def _string_values(value: Any) -> list[str]:
    return [str(v).lower() if isinstance(v, bool) else str(v) for v in as_list(value)]


def _equals(want: str, have: str) -> bool:
    return want == have


def _equals_ignore_case(want: str, have: str) -> bool:
    return want.lower() == have.lower()


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError as error:
        raise UnsupportedPolicyError(f"not a number in a Numeric condition: {text!r}") from error


# Operator (without IfExists) -> how one policy value matches one request value; negated ones invert.
_MATCHERS = {
    "NumericEquals": lambda want, have: _number(have) == _number(want),
    "NumericNotEquals": lambda want, have: _number(have) == _number(want),
    "NumericLessThan": lambda want, have: _number(have) < _number(want),
    "NumericLessThanEquals": lambda want, have: _number(have) <= _number(want),
    "NumericGreaterThan": lambda want, have: _number(have) > _number(want),
    "NumericGreaterThanEquals": lambda want, have: _number(have) >= _number(want),
    "StringEquals": _equals,
    "StringNotEquals": _equals,
    "StringEqualsIgnoreCase": _equals_ignore_case,
    "StringNotEqualsIgnoreCase": _equals_ignore_case,
    "StringLike": wildcard_match,
    "StringNotLike": wildcard_match,
    "ArnEquals": wildcard_match,
    "ArnLike": wildcard_match,
    "ArnNotEquals": wildcard_match,
    "ArnNotLike": wildcard_match,
    "Bool": _equals_ignore_case,
}
_NEGATED = {
    "NumericNotEquals",
    "StringNotEquals",
    "StringNotEqualsIgnoreCase",
    "StringNotLike",
    "ArnNotEquals",
    "ArnNotLike",
}


def _condition_holds(operator: str, key: str, wanted: Any, context: Context) -> bool:
    """One operator/key pair of a Condition block, with IAM's IfExists and set-operator rules."""
    set_operator = ""
    if ":" in operator:
        set_operator, operator = operator.split(":", 1)
        if set_operator not in ("ForAnyValue", "ForAllValues"):
            raise UnsupportedPolicyError(f"condition set operator {set_operator!r} is not supported")
    if_exists = operator.endswith("IfExists")
    base = operator.removesuffix("IfExists")
    present = key in context or key.lower() in {k.lower() for k in context}
    if base == "Null":
        want_absent = _string_values(wanted) == ["true"]
        return want_absent != present
    if base not in _MATCHERS:
        raise UnsupportedPolicyError(f"condition operator {operator!r} is not supported")
    if not present:
        # A missing key: IfExists matches; a negated operator matches; ForAllValues matches; others do not.
        return if_exists or base in _NEGATED or set_operator == "ForAllValues"
    raw = next(v for k, v in context.items() if k.lower() == key.lower())
    have_values = _string_values(raw)
    wants = _string_values(wanted)
    match = _MATCHERS[base]

    def matches(have: str) -> bool:
        return any(match(want, have) for want in wants)

    if set_operator == "ForAllValues":
        result = all(matches(have) for have in have_values)
    else:  # single-valued key or ForAnyValue: any value of the request matches any value of the policy
        result = any(matches(have) for have in have_values)
    return not result if base in _NEGATED else result


def conditions_hold(condition: Mapping[str, Mapping[str, Any]] | None, context: Context) -> bool:
    """Every operator and every key of a Condition block must hold (AND); values of one key are OR."""
    for operator, keys in (condition or {}).items():
        for key, wanted in keys.items():
            if not _condition_holds(operator, key, wanted, context):
                return False
    return True


def _matches_any(patterns: Iterable[str], value: str, *, case_sensitive: bool) -> bool:
    return any(wildcard_match(p, value, case_sensitive=case_sensitive) for p in patterns)


def statement_applies(statement: Mapping[str, Any], request: Request) -> bool:
    """The statement's action, resource and condition all match the request (Effect aside)."""
    if "Principal" in statement or "NotPrincipal" in statement:
        raise UnsupportedPolicyError("identity policies have no Principal; evaluate resource policies elsewhere")
    if "Action" in statement:
        action_ok = _matches_any(as_list(statement["Action"]), request.action, case_sensitive=False)
    else:
        action_ok = not _matches_any(as_list(statement.get("NotAction")), request.action, case_sensitive=False)
    if not action_ok:
        return False
    if "Resource" in statement:
        resource_ok = _matches_any(as_list(statement["Resource"]), request.resource, case_sensitive=True)
    else:
        resource_ok = not _matches_any(as_list(statement.get("NotResource")), request.resource, case_sensitive=True)
    return resource_ok and conditions_hold(statement.get("Condition"), request.context)


def principal_matches(statement: Mapping[str, Any], role_arn: str) -> bool:
    """A resource policy statement names this role: ``*``, the role's ARN, or its account (as the
    account id or ``arn:<partition>:iam::<account>:root``, which delegates to the account's IAM policies).

    Raises:
        UnsupportedPolicyError: the statement uses NotPrincipal.
    """
    if "NotPrincipal" in statement:
        raise UnsupportedPolicyError("NotPrincipal is not supported")
    principal = statement.get("Principal")
    if principal == "*":
        return True
    if not isinstance(principal, Mapping):
        return False
    partition, account = role_arn.split(":")[1], role_arn.split(":")[4]
    names = {"*", role_arn, account, f"arn:{partition}:iam::{account}:root"}
    return any(str(value) in names for value in as_list(principal.get("AWS")))


def evaluate_resource_policy(documents: Iterable[Mapping[str, Any]], request: Request, role_arn: str) -> Decision:
    """:func:`evaluate` over the statements of resource policies (bucket, queue, topic, key) that name the role."""
    applicable = [
        {
            "Statement": [
                {k: v for k, v in s.items() if k != "Principal"}
                for s in as_list(d.get("Statement"))
                if principal_matches(s, role_arn)
            ]
        }
        for d in documents
    ]
    return evaluate(applicable, request)


def evaluate(documents: Iterable[Mapping[str, Any]], request: Request) -> Decision:
    """Explicit Deny > Allow > implicit deny over every statement of every document."""
    allowed: list[str] = []
    denied: list[str] = []
    for document in documents:
        for index, statement in enumerate(as_list(document.get("Statement"))):
            if not statement_applies(statement, request):
                continue
            label = str(statement.get("Sid") or f"statement {index}")
            (denied if statement.get("Effect") == DENY else allowed).append(label)
    return Decision(allowed=bool(allowed) and not denied, allowed_by=tuple(allowed), denied_by=tuple(denied))

"""The trackers' errors, and how a DynamoDB condition's failure is recognised."""

from __future__ import annotations

from botocore.exceptions import ClientError


class TrackerError(Exception):
    """Base class of the tracker errors."""


class LeaseLostError(TrackerError):
    """The lease this run held was taken over (it expired): stop writing to the table."""


def is_conditional_failure(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def is_cancelled_by_condition(error: ClientError) -> bool:
    if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return False
    reasons = error.response.get("CancellationReasons") or []
    return any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons)

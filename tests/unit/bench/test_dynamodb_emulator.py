"""The benchmark's item-level transaction rollback gives moto's outcomes, without copying whole tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models.dynamo_type import Item

from bench.dynamodb_emulator import install_item_level_rollback, uninstall_item_level_rollback

REGION = "eu-west-1"


def _put(table: str, **item: str) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {name: {"S": value} for name, value in item.items()}}}


def _key(table: str, **key: str) -> dict[str, Any]:
    return {"TableName": table, "Key": {name: {"S": value} for name, value in key.items()}}


# Each transaction, in order; the failing ones change items before the action that fails it.
TRANSACTIONS: list[list[dict[str, Any]]] = [
    [_put("single", pk="a1", v="1"), _put("single", pk="a2", v="1"), _put("pair", pk="t", sk="1", v="1")],
    [  # a condition fails after a put and an update: neither stays
        _put("single", pk="a3", v="1"),
        {
            "Update": {
                **_key("single", pk="a1"),
                "UpdateExpression": "SET v = :v",
                "ExpressionAttributeValues": {":v": {"S": "2"}},
            }
        },
        {"ConditionCheck": {**_key("single", pk="a2"), "ConditionExpression": "attribute_not_exists(pk)"}},
    ],
    [_put("pair", pk="t", sk="2", v="1"), {"Delete": _key("single", pk="a1")}],  # succeeds
    [_put("single", pk="a4", v="1"), _put("single", pk="a4", v="2")],  # the same item twice
    [  # a delete, then a conditional put that fails: the deleted item comes back
        {"Delete": _key("pair", pk="t", sk="1")},
        {"Put": {**_put("single", pk="a2", v="9")["Put"], "ConditionExpression": "attribute_not_exists(pk)"}},
    ],
    [_put("single", pk="a5", v="1"), _put("missing", pk="x", v="1")],  # a table that does not exist
    [{"Delete": _key("single", pk="a2")}, _put("pair", pk="u", sk="1", v="1")],  # succeeds
]


def _replay() -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
    """Run TRANSACTIONS on a fresh emulated account: each one's outcome, then both tables' items."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        for name, keys in (("single", ["pk"]), ("pair", ["pk", "sk"])):
            client.create_table(
                TableName=name,
                KeySchema=[
                    {"AttributeName": key, "KeyType": kind} for key, kind in zip(keys, ["HASH", "RANGE"], strict=False)
                ],
                AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in keys],
                BillingMode="PAY_PER_REQUEST",
            )
        outcomes = []
        for actions in TRANSACTIONS:
            try:
                client.transact_write_items(TransactItems=actions)
                outcomes.append("ok")
            except ClientError as error:
                reasons = [reason.get("Code", "") for reason in error.response.get("CancellationReasons", [])]
                outcomes.append(f"{error.response['Error']['Code']} {reasons}")
        tables = {
            name: sorted(client.scan(TableName=name)["Items"], key=lambda item: str(sorted(item.items())))
            for name in ("single", "pair")
        }
    return outcomes, tables


@pytest.fixture
def item_level_rollback() -> Iterator[None]:
    install_item_level_rollback()
    yield
    uninstall_item_level_rollback()


def test_every_transaction_ends_as_it_does_in_moto() -> None:
    shipped = _replay()
    install_item_level_rollback()
    try:
        patched = _replay()
    finally:
        uninstall_item_level_rollback()
    assert patched == shipped
    outcomes, tables = shipped
    assert [outcome == "ok" for outcome in outcomes] == [True, False, True, False, False, False, True]
    # worked out by hand: a1 deleted by the third, a2 by the last; t/1 restored by the fifth's rollback
    assert tables["single"] == []
    assert {(item["pk"]["S"], item["sk"]["S"]) for item in tables["pair"]} == {("t", "1"), ("t", "2"), ("u", "1")}


def test_a_transaction_copies_the_items_it_names_not_the_table(
    item_level_rollback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied = []
    original = Item.__deepcopy__
    monkeypatch.setattr(Item, "__deepcopy__", lambda item, memo: copied.append(item) or original(item, memo))
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(
            TableName="single",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for number in range(300):
            client.put_item(TableName="single", Item={"pk": {"S": f"k{number}"}})
        copied.clear()
        client.transact_write_items(
            TransactItems=[_put("single", pk="new", v="1"), {"Delete": _key("single", pk="k1")}]
        )
    assert len(copied) < 10  # moto as shipped copies the table for each action: 600 items

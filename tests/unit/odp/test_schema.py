"""The committed JSON Schemas match the typed models, and accept the shipped configuration."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from odp.config.schema import SCHEMAS, render_schemas


def test_committed_schemas_are_fresh(repo_root: Path) -> None:
    stale = [
        name
        for name, text in render_schemas().items()
        if not (repo_root / "config" / "schema" / name).is_file()
        or (repo_root / "config" / "schema" / name).read_text() != text
    ]
    assert not stale, f"config/schema is stale for {stale}: run `make schema` and commit the result"


@pytest.mark.parametrize(
    ("schema_name", "files"),
    [
        ("environments.schema.json", ["environments.yaml"]),
        ("cadences.schema.json", ["cadences.yaml"]),
        (
            "tables.schema.json",
            [
                "tables/taxi_trips_dms.yaml",
                "tables/inventory_debezium.yaml",
                "tables/orders_dynamodb.yaml",
                "tables/billing_dms_csv.yaml",
                "tables/crm_debezium.yaml",
            ],
        ),
    ],
)
def test_shipped_files_validate_against_their_schema(repo_root: Path, schema_name: str, files: list[str]) -> None:
    schema = json.loads((repo_root / "config" / "schema" / schema_name).read_text())
    for name in files:
        jsonschema.validate(yaml.safe_load((repo_root / "config" / name).read_text()), schema)


def test_schema_rejects_a_misspelt_key(repo_root: Path) -> None:
    schema = json.loads((repo_root / "config" / "schema" / "cadences.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError, match="batch_sise"):
        jsonschema.validate({"cadences": {"fast": {"schedule": "rate(1 hour)", "batch_sise": 1}}}, schema)


def test_every_file_kind_has_a_schema() -> None:
    assert set(SCHEMAS) == {
        "environments.schema.json",
        "cadences.schema.json",
        "tables.schema.json",
        "streams.schema.json",
        "datasets.schema.json",
        "access.schema.json",
        "catalog_stacks.schema.json",
    }

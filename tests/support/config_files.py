"""A valid configuration tree as data, and writing one to disk."""

from __future__ import annotations

from pathlib import Path

import yaml

ZONES = ["eu-west-1a", "eu-west-1b"]
VALID = {
    "environments.yaml": {
        "deployment": {"account": "000000000000", "region": "eu-west-1"},
        "source": {
            "repository": "org/odp",
            "connection_arn": "arn:aws:codeconnections:eu-west-1:000000000000:connection/abc-123",
        },
        "environments": {
            "dev": {"account": "111111111111", "region": "eu-west-1", "availability_zones": ZONES, "branch": "main"},
            "prod": {
                "account": "333333333333",
                "region": "eu-west-1",
                "availability_zones": ZONES,
                "branch": "prod",
                "manual_approval": True,
                "alarm_email": "data-platform-oncall@example.com",
            },
        },
    },
    "cadences.yaml": {"cadences": {"fast": {"schedule": "rate(10 minutes)", "batch_size": 5}}},
    "tables/shop.yaml": {
        "source": "shop",
        "format": "dms",
        "defaults": {"cadence": "fast", "database": "shop_raw", "ordering_column": "seq"},
        "tables": [
            {
                "schema": "public",
                "table": "orders",
                "primary_key": ["id"],
                "partition_by": ["region"],
                "columns": {"id": "bigint", "seq": "string", "region": "string", "amount": "decimal(10,2)"},
            },
            {"schema": "public", "table": "customers", "primary_key": ["id"]},
        ],
    },
}


def write_config(root: Path, files: dict[str, object]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
    return root


def valid_files() -> dict[str, object]:
    # A deep copy through YAML keeps every case independent.
    return {name: yaml.safe_load(yaml.safe_dump(content)) for name, content in VALID.items()}


# A purpose-built dataset over shop.public.orders (for the access and view checks).
ORDER_TOTALS = {
    "name": "order_totals",
    "zone": "purpose_built",
    "database": "shop_purpose_built",
    "sources": [{"name": "orders", "table": "shop.public.orders"}],
    "key": ["region"],
    "refresh": "full",
}
ORDER_TOTALS_SQL = "SELECT region, CAST(SUM(amount) AS DECIMAL(38, 2)) AS total FROM orders GROUP BY region"


def with_order_totals(files: dict[str, object], sql: str = ORDER_TOTALS_SQL) -> dict[str, object]:
    """``files`` plus the order_totals dataset (its SQL as given)."""
    return {**files, "datasets/order_totals.yaml": dict(ORDER_TOTALS), "datasets/order_totals.sql": sql}

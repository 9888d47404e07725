"""A stage with Lake Formation on: a configuration with consumers (a column exclude, a column include with a
row filter, a database grant, a tag grant) and two views, shared by the Lake Formation tests.

The app is built from this configuration (one environment without a pipeline, one DMS source) and synthesized
with cdk-nag: any unacknowledged finding fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.support.streaming_stage import CONFIG as STREAMING_CONFIG

ACCOUNT = "111111111111"
CONFIG: dict[str, Any] = {
    # one environment (dev, account ACCOUNT) without a pipeline, one hourly cadence: as the streaming stage's
    "environments.yaml": STREAMING_CONFIG["environments.yaml"],
    "cadences.yaml": STREAMING_CONFIG["cadences.yaml"],
    "tables/shop.yaml": {
        "source": "shop",
        "format": "dms",
        "defaults": {"cadence": "hourly", "database": "shop_raw", "ordering_column": "seq"},
        "tables": [
            {
                "schema": "public",
                "table": "invoices",
                "primary_key": ["id"],
                "columns": {
                    "id": "bigint",
                    "seq": "bigint",
                    "customer": "string",
                    "card_number": "string",
                    "amount": "decimal(12,2)",
                },
            },
            {
                "schema": "public",
                "table": "orders",
                "primary_key": ["id"],
                "table_type": "MERGE_ON_READ",
                "columns": {
                    "id": "bigint",
                    "seq": "bigint",
                    "region": "string",
                    "status": "string",
                    "amount": "decimal(12,2)",
                },
            },
            {"schema": "public", "table": "secrets", "primary_key": ["id"]},
        ],
    },
    "access.yaml": {
        "databases": {"shop_raw": "confidential"},
        "consumers": {
            "analysts": {
                "role_name": "odp-analyst",
                "read": [
                    {"table": "shop.public.invoices", "columns": {"exclude": ["card_number"]}},
                    {
                        "table": "shop.public.orders",
                        "columns": {"include": ["id", "region", "amount"]},
                        "row_filter": "region = 'eu'",
                    },
                ],
            },
            "auditors": {"role_arn": f"arn:aws:iam::{ACCOUNT}:role/odp-auditor", "read": [{"database": "shop_raw"}]},
            "bi": {
                "role_name": "odp-bi",
                "read": [{"tags": {"zone": ["purpose_built"], "sensitivity": ["public"]}}],
            },
        },
    },
}
VIEWS = {
    "views/shop_raw.invoice_totals.sql": (
        "-- Invoiced amount per customer.\nSELECT customer, CAST(SUM(amount) AS DECIMAL(18, 2)) AS total\n"
        "FROM shop_raw.invoices\nGROUP BY customer\n"
    ),
    "views/shop_raw.eu_orders.sql": "SELECT id, amount FROM shop_raw.orders_ro WHERE region = 'eu'\n",
}


def write_config(config_dir: Path) -> None:
    """Write :data:`CONFIG` and :data:`VIEWS` to ``config_dir``."""
    for name, content in CONFIG.items():
        (config_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (config_dir / name).write_text(yaml.safe_dump(content, sort_keys=False))
    for name, text in VIEWS.items():
        (config_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (config_dir / name).write_text(text)


def build_lake_formation_template(config_dir: Path, outdir: Path) -> dict[str, Any]:
    """Write the configuration, build and synthesize the app (cdk-nag runs: a finding raises); the DataLake template."""
    from aws_cdk.assertions import Template

    from infrastructure.application import build_app, cdk_json_context, new_app

    write_config(config_dir)
    app = build_app(new_app(context=cdk_json_context(), outdir=str(outdir)), config_dir=config_dir)
    app.synth()  # cdk-nag runs here: an unacknowledged finding raises
    return Template.from_stack(app.node.find_child("odp-dev").data_lake).to_json()

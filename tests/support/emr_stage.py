"""A stage with one cadence on EMR Serverless, one on Glue and one warm on Glue, shared by the EMR Serverless tests
(tests/infra/test_emr_serverless.py), checkov and the permission test (tests/infra/permissions): the streaming
stage's environment and DMS source, no streams, Lake Formation on with a consumer role and two views (issue 28's
"done when": this synth passes cdk-nag, cfn-lint, checkov and the permission test), and one dataset on EMR Serverless
(the datasets state machine's EMR run, its execution role running the dataset job too, the canary's dataset run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.streaming_stage import CONFIG as STREAMING_CONFIG
from tests.support.streaming_stage import StreamingStage, build_stage

EMR_CADENCE = "hourly"
GLUE_CADENCE = "daily"
WARM_CADENCE = "warm"  # a warm writer on Glue (docs/decisions/032): its job, state machine and role in one synth
EMR_DATASET = "invoice_customers"
CONFIG: dict[str, Any] = {
    "environments.yaml": STREAMING_CONFIG["environments.yaml"],
    "cadences.yaml": {
        "cadences": {
            EMR_CADENCE: {"schedule": "rate(1 hour)", "batch_size": 5, "engine": "emr_serverless"},
            GLUE_CADENCE: {"schedule": "rate(1 day)", "batch_size": 5},
            WARM_CADENCE: {
                "schedule": "rate(10 minutes)",
                "batch_size": 50,
                "mode": "warm",
                "job_timeout_minutes": 720,
            },
        }
    },
    "tables/shop.yaml": {
        "source": "shop",
        "format": "dms",
        "defaults": {"database": "shop_raw", "ordering_column": "seq"},
        "tables": [
            {
                "schema": "public",
                "table": "invoices",
                "primary_key": ["id"],
                "cadence": EMR_CADENCE,
                "columns": {"id": "bigint", "seq": "bigint", "customer": "string", "amount": "decimal(12,2)"},
            },
            {
                "schema": "public",
                "table": "refunds",
                "primary_key": ["id"],
                "cadence": GLUE_CADENCE,
                "columns": {"id": "bigint", "seq": "bigint", "invoice_id": "bigint", "amount": "decimal(12,2)"},
            },
        ],
    },
    # one dataset on EMR Serverless: the datasets state machine runs it there after its (empty) Glue run
    f"datasets/{EMR_DATASET}.yaml": {
        "name": EMR_DATASET,
        "zone": "purpose_built",
        "database": "shop_purpose_built",
        "sources": [{"name": "invoices", "table": "shop.public.invoices"}],
        "key": ["id"],
        "refresh": "full",
        "engine": "emr_serverless",
    },
    f"datasets/{EMR_DATASET}.sql": "SELECT id, customer FROM invoices\n",
    # one consumer role, so that Lake Formation (and its grants to every job role) is in the stage
    "access.yaml": {
        "consumers": {
            "auditors": {"role_arn": "arn:aws:iam::111111111111:role/odp-auditor", "read": [{"database": "shop_raw"}]}
        }
    },
    # two views over the tables of both cadences (Athena SQL, written as is)
    "views/shop_raw.invoice_totals.sql": (
        "SELECT customer, CAST(SUM(amount) AS DECIMAL(18, 2)) AS total\nFROM shop_raw.invoices\nGROUP BY customer\n"
    ),
    "views/shop_raw.refunded_invoices.sql": (
        "SELECT i.id, i.customer, r.amount AS refunded\nFROM shop_raw.invoices AS i\n"
        "JOIN shop_raw.refunds AS r ON r.invoice_id = i.id\n"
    ),
}
VIEWS = ("invoice_totals", "refunded_invoices")


def build_emr_stage(config_dir: Path, outdir: Path) -> StreamingStage:
    return build_stage(CONFIG, config_dir, outdir)

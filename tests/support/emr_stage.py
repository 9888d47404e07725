"""A stage with one cadence on EMR Serverless and one on Glue, shared by the EMR Serverless tests
(tests/infra/test_emr_serverless.py) and checkov: the streaming stage's environment and DMS source, no streams,
one Lake Formation consumer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.streaming_stage import CONFIG as STREAMING_CONFIG
from tests.support.streaming_stage import StreamingStage, build_stage

EMR_CADENCE = "hourly"
GLUE_CADENCE = "daily"
CONFIG: dict[str, Any] = {
    "environments.yaml": STREAMING_CONFIG["environments.yaml"],
    "cadences.yaml": {
        "cadences": {
            EMR_CADENCE: {"schedule": "rate(1 hour)", "batch_size": 5, "engine": "emr_serverless"},
            GLUE_CADENCE: {"schedule": "rate(1 day)", "batch_size": 5},
        }
    },
    "tables/shop.yaml": {
        "source": "shop",
        "format": "dms",
        "defaults": {"database": "shop_raw", "ordering_column": "seq"},
        "tables": [
            {"schema": "public", "table": "invoices", "primary_key": ["id"], "cadence": EMR_CADENCE},
            {"schema": "public", "table": "refunds", "primary_key": ["id"], "cadence": GLUE_CADENCE},
        ],
    },
    # one consumer, so that Lake Formation (and its grants to every job role) is in the stage
    "access.yaml": {
        "consumers": {
            "auditors": {"role_arn": "arn:aws:iam::111111111111:role/odp-auditor", "read": [{"database": "shop_raw"}]}
        }
    },
}


def build_emr_stage(config_dir: Path, outdir: Path) -> StreamingStage:
    return build_stage(CONFIG, config_dir, outdir)

"""A stage with two streams, shared by the streaming construct's tests and the streaming permission test.

The app is built from a configuration written for these tests (one environment without a pipeline, one
DMS source, two DynamoDB sources each streamed) and synthesized with cdk-nag: any unacknowledged finding fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CONFIG: dict[str, Any] = {
    "environments.yaml": {
        "deployment": {"account": "000000000000", "region": "eu-west-1"},
        "source": {
            "repository": "org/odp",
            "connection_arn": "arn:aws:codeconnections:eu-west-1:000000000000:connection/abc-123",
        },
        "environments": {
            "dev": {
                "account": "111111111111",
                "region": "eu-west-1",
                "availability_zones": ["eu-west-1a", "eu-west-1b"],
            }
        },
    },
    "cadences.yaml": {"cadences": {"hourly": {"schedule": "rate(1 hour)", "batch_size": 5}}},
    "streams.yaml": {
        "streams": {
            "shop_changes": {"window_seconds": 100, "number_of_workers": 3},
            "partner_changes": {"window_seconds": 60, "wire_dynamodb": False, "checkpoint_prefix": "cp/partner/"},
        }
    },
    "tables/shop.yaml": {
        "source": "shop",
        "format": "dms",
        "defaults": {"cadence": "hourly", "database": "shop_raw", "ordering_column": "seq"},
        "tables": [{"schema": "public", "table": "invoices", "primary_key": ["id"]}],
    },
    "tables/shop_dynamodb.yaml": {
        "source": "shop_dynamodb",
        "format": "dynamodb",
        "defaults": {"stream": "shop_changes", "database": "shop_raw"},
        "tables": [
            {"schema": "app", "table": "orders", "primary_key": ["id"]},
            {"schema": "app", "table": "customers", "primary_key": ["id"], "table_type": "MERGE_ON_READ"},
        ],
    },
    "tables/partner_dynamodb.yaml": {
        "source": "partner_dynamodb",
        "format": "dynamodb",
        "defaults": {"stream": "partner_changes", "database": "partner_raw"},
        "tables": [{"schema": "app", "table": "offers", "primary_key": ["id"]}],
    },
}


@dataclass(frozen=True)
class StreamingStage:
    """The synthesized stage: its DataLake template, the cloud assembly and the configuration folder."""

    template: dict[str, Any]
    outdir: Path
    config_dir: Path

    def asset_text(self, file_name: str) -> str:
        """A file asset of the assembly (a state machine definition), by its staged file name."""
        return next(self.outdir.rglob(f"asset.{file_name}")).read_text(encoding="utf-8")


def build_streaming_stage(config_dir: Path, outdir: Path) -> StreamingStage:
    """Write :data:`CONFIG` to ``config_dir``, build and synthesize the app (cdk-nag runs: a finding raises)."""
    return build_stage(CONFIG, config_dir, outdir)


def build_stage(config: dict[str, Any], config_dir: Path, outdir: Path) -> StreamingStage:
    """Write ``config`` (file name -> content: YAML as data, a view's SQL as text) to ``config_dir``, build and
    synthesize the app with its one environment ``dev`` (cdk-nag runs: a finding raises)."""
    from infrastructure.application import build_app, cdk_json_context, new_app

    for name, content in config.items():
        (config_dir / name).parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
        (config_dir / name).write_text(text)
    app = build_app(new_app(context=cdk_json_context(), outdir=str(outdir)), config_dir=config_dir)
    from aws_cdk.assertions import Template

    app.synth()  # cdk-nag runs here: an unacknowledged finding raises
    template = Template.from_stack(app.node.find_child("odp-dev").data_lake).to_json()
    return StreamingStage(template, outdir, config_dir)

"""A fleet's stage: 5,000 explicitly listed tables synthesize (cdk-nag included) with every stack well below
CloudFormation's 500 resources, because nothing in a stack is per table (issue 47).

Before, each table added an Athena named query to the DataLake stack: 400 listed tables failed the synth with
TooManyResourcesInStack (596 resources). What still grows is per source (its three Glue databases, its raw
database's row-count query) and per cadence. The synth's time: ``python -m bench.synth --fleet 50x100``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench.synth import STACK_RESOURCE_TARGET, fleet_config, synth_fleet

SOURCES, TABLES_PER_SOURCE = 50, 100


def test_5000_listed_tables_synthesize_with_every_stack_under_400_resources(tmp_path: Path) -> None:
    _, resources = synth_fleet(fleet_config(SOURCES, TABLES_PER_SOURCE), tmp_path)

    assert resources, "no template was written"
    assert max(resources.values()) < STACK_RESOURCE_TARGET, resources
    (data_lake,) = list((tmp_path / "cdk.out").rglob("*DataLake*.template.json"))
    kinds = Counter(resource["Type"] for resource in json.loads(data_lake.read_text())["Resources"].values())
    assert kinds["AWS::Glue::Database"] == 3 * SOURCES  # raw, conformed, purpose-built per source
    assert kinds["AWS::Athena::NamedQuery"] == SOURCES  # one row-count query per raw database of 100 tables

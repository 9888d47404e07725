"""A fleet's stage: 5,000 explicitly listed tables synthesize (cdk-nag included) with every stack well below
CloudFormation's 500 resources, because nothing in a stack is per table and the per-source catalogs (three Glue
databases and a row-count query per source) are split over catalog stacks (issue 47; docs/decisions/034).

Before, each table added an Athena named query to the DataLake stack: 400 listed tables failed the synth with
TooManyResourcesInStack (596 resources); then, with a query per database, about 80 sources still reached 400 in the
one stack. The synth's time: ``python -m bench.synth --fleet 50x100`` (and ``500x10``, ten sources a raw database).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, CfnResource, Stack

from bench.synth import STACK_RESOURCE_TARGET, fleet_config, synth_fleet
from infrastructure.resource_budget import STACK_RESOURCE_BUDGET, budget_refusal, enforce_resource_budget
from odp.config.catalog_stacks import CatalogStacksFile, assign_sources, catalog_stack_issues
from tests.support.lake import table_config


def _resources(outdir: Path) -> dict[str, dict[str, Any]]:
    """Stack name (the artifact id without its hash: ``odpdevCatalog3``) -> its template's resources."""
    return {
        re.sub(r"[0-9A-F]{8}$", "", path.name.removesuffix(".template.json")): json.loads(path.read_text())["Resources"]
        for path in outdir.rglob("*.template.json")
    }


def _kinds(outdir: Path, stack: str) -> Counter[str]:
    (resources,) = [res for name, res in _resources(outdir).items() if name.endswith(stack)]
    return Counter(resource["Type"] for resource in resources.values())


def test_5000_listed_tables_synthesize_with_every_stack_under_400_resources(tmp_path: Path) -> None:
    """50 sources x 100 tables: every source in the DataLake stack, as before the split (no catalog stack)."""
    _, resources = synth_fleet(fleet_config(50, 100), tmp_path)

    assert resources, "no template was written"
    assert max(resources.values()) < STACK_RESOURCE_TARGET, resources
    assert not [stack for stack in resources if "Catalog" in stack], resources
    kinds = _kinds(tmp_path / "cdk.out", "DataLake")
    assert kinds["AWS::Glue::Database"] == 3 * 50  # raw, conformed, purpose-built per source
    assert kinds["AWS::Athena::NamedQuery"] == 50  # one row-count query per raw database of 100 tables


def test_500_sources_of_10_tables_split_into_catalog_stacks_each_under_400_resources(tmp_path: Path) -> None:
    """500 sources x 10 tables, ten sources to a raw database (a job role's catalog grants name each database, and
    IAM's policy sizes refuse 500 of them: tests/infra/test_policy_limits.py): 50 sources stay in the DataLake stack,
    450 go to 8 catalog stacks of at most 60 sources, each raw database in the stack of its sources."""
    _, counts = synth_fleet(fleet_config(500, 10, sources_per_database=10), tmp_path)

    assert max(counts.values()) < STACK_RESOURCE_TARGET, counts
    templates = _resources(tmp_path / "cdk.out")
    catalogs = sorted((name for name in templates if "Catalog" in name), key=lambda name: int(name.split("Catalog")[1]))
    assert [name.split("Catalog")[1] for name in catalogs] == [str(n) for n in range(1, 9)], sorted(templates)
    databases = {
        stack: sorted(
            r["Properties"]["DatabaseInput"]["Name"] for r in res.values() if r["Type"] == "AWS::Glue::Database"
        )
        for stack, res in templates.items()
    }
    every = [name for names in databases.values() for name in names]
    assert len(every) == len(set(every)) == 2 * 500 + 50  # each database in exactly one stack
    data_lake = next(stack for stack in templates if stack.endswith("DataLake"))
    assert len(databases[data_lake]) == 2 * 50 + 5
    first = databases[catalogs[0]]
    assert [name for name in first if name.endswith("_raw")] == [f"db{n:03d}_raw" for n in range(5, 11)]
    assert first[6:8] == ["src050_conformed", "src050_purpose_built"]
    assert [len(databases[stack]) for stack in catalogs] == [2 * 60 + 6] * 7 + [2 * 30 + 3]
    queries = [r for res in templates.values() for r in res.values() if r["Type"] == "AWS::Athena::NamedQuery"]
    assert len(queries) == 50  # one row-count query per raw database
    # A catalog stack reads the DataLake stack's workgroup from its outputs (cdk.json: weak cross-stack references),
    # which makes it a dependency: the pipeline deploys it after the DataLake stack.
    catalog_query = next(r for r in templates[catalogs[0]].values() if r["Type"] == "AWS::Athena::NamedQuery")
    assert catalog_query["Properties"]["WorkGroup"]["Fn::GetStackOutput"]["StackName"] == "odp-dev-DataLake"


def test_the_synth_refuses_a_data_lake_stack_past_its_budget_naming_it_and_what_to_do(tmp_path: Path) -> None:
    """100 sources of 1 table, all in the DataLake stack: about 500 resources, refused before CloudFormation."""
    with pytest.raises(Exception, match=r"DataLake: \d+ resources, over its budget of 350") as refused:
        synth_fleet(fleet_config(100, 1, in_data_lake=100), tmp_path)
    assert "config/catalog_stacks.yaml" in str(refused.value)
    assert "python -m odp.config assign-stacks" in str(refused.value)


def test_the_budget_counts_every_resource_of_its_stack_only() -> None:
    app = App()
    stack, other = Stack(app, "Small"), Stack(app, "Other")
    for index in range(3):
        CfnResource(stack, f"R{index}", type="AWS::SNS::Topic")
    CfnResource(other, "R", type="AWS::SNS::Topic")
    enforce_resource_budget(stack, "split it", budget=2)
    enforce_resource_budget(other, "never", budget=2)

    with pytest.raises(Exception, match=r"stack Small: 3 resources, over its budget of 2 .*: split it") as refused:
        app.synth()
    assert "Other" not in str(refused.value)
    assert STACK_RESOURCE_BUDGET < STACK_RESOURCE_TARGET
    assert budget_refusal("S", 350, 350, "x") is None


# --- the assignment of sources to catalog stacks: append-only -------------------------------------------------------


def test_new_sources_fill_the_last_catalog_stack_then_open_the_next() -> None:
    assigned = assign_sources({}, ["a", "b", "c", "d", "e"], per_stack=2)
    assert assigned == {"Catalog1": ["a", "b"], "Catalog2": ["c", "d"], "Catalog3": ["e"]}


def test_adding_sources_never_moves_a_listed_one() -> None:
    before = {"Catalog1": ["zz", "aa"], "Catalog2": ["mm"]}
    after = assign_sources(before, ["bb", "aa", "ab", "zz", "yy"], per_stack=2)
    assert after == {"Catalog1": ["zz", "aa"], "Catalog2": ["mm", "bb"], "Catalog3": ["ab", "yy"]}
    assert before == {"Catalog1": ["zz", "aa"], "Catalog2": ["mm"]}  # not changed in place


def test_a_removed_source_leaves_room_that_new_sources_take_without_moving_others() -> None:
    after_removal = {"Catalog1": ["a"], "Catalog2": ["c", "d"], "Catalog3": ["e"]}  # b removed from Catalog1
    assert assign_sources(after_removal, ["f", "g"], per_stack=2) == {
        "Catalog1": ["a", "f"],
        "Catalog2": ["c", "d"],
        "Catalog3": ["e", "g"],
    }
    assert assign_sources({"Catalog4": ["x"]}, ["y", "z"], per_stack=1) == {
        "Catalog4": ["x"],
        "Catalog5": ["y"],
        "Catalog6": ["z"],
    }


def test_a_source_not_listed_stays_in_the_data_lake_stack() -> None:
    file = CatalogStacksFile(stacks={"Catalog1": ["crm"]})
    tables = [table_config("t1", source="crm"), table_config("t2", source="billing")]
    assert file.stack_of("billing") == "DataLake"
    grouped = file.tables_by_stack(tables)
    assert {stack: [t.source for t in members] for stack, members in grouped.items()} == {
        "DataLake": ["billing"],
        "Catalog1": ["crm"],
    }
    assert CatalogStacksFile().tables_by_stack(tables)["DataLake"] == tables


def test_the_file_refuses_a_source_twice_an_unknown_source_and_a_database_split_over_stacks() -> None:
    # table_config puts every table in raw database lake_db: crm and billing share it.
    tables = [table_config("t1", source="crm"), table_config("t2", source="billing")]
    issues = catalog_stack_issues(CatalogStacksFile(stacks={"Catalog1": ["crm", "ghost"], "Catalog2": ["crm"]}), tables)
    reasons = [f"{where}: {reason}" for where, reason in issues]
    assert any("stacks.Catalog2: source 'crm' is already listed under Catalog1" in r for r in reasons), reasons
    assert any("stacks.Catalog1: source 'ghost' has no tables" in r for r in reasons), reasons
    assert any("raw database 'lake_db' belongs to sources of different stacks" in r for r in reasons), reasons
    assert catalog_stack_issues(CatalogStacksFile(stacks={"Catalog1": ["crm", "billing"]}), tables) == []

"""config/catalog_stacks.yaml: which CloudFormation stack holds each source's catalog (docs/decisions/034).

A source's catalog is what the stage creates per source: its Glue databases (its tables' raw databases,
``<source>_conformed``, ``<source>_purpose_built``) and the row-count named queries of its raw databases. A source
the file does not list stays in the environment's ``DataLake`` stack (every environment before the file existed);
a listed source goes to the catalog stack ``Catalog<n>`` that lists it.

The file is **append-only**: a source keeps its stack for good. Moving one would move named Glue databases from one
stack to another, and CloudFormation would create them in the new stack while the old one still holds them (the
create fails on the name) or, if the old stack's update runs first, delete them with every table's catalog entry.
:func:`assign_sources` (``python -m odp.config assign-stacks``) adds new sources without moving any; a reviewer sees
a move as a changed line in the file's diff.

Both functions here are pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated

from pydantic import Field, StringConstraints

from odp.config.models import Identifier, TableConfig, _Strict

CATALOG_STACKS_FILE = "catalog_stacks.yaml"
# The stack of every source the file does not list: the environment's one stack before the split.
DATA_LAKE_STACK = "DataLake"
CATALOG_STACK_PREFIX = "Catalog"
# Sources a new catalog stack takes before assign_sources opens the next one. About 4 resources a source (3 Glue
# databases, a row-count query per 200 tables) make about 240 of a catalog stack's budget (350, the stage refuses
# more: infrastructure/resource_budget.py); 500 sources make 9 catalog stacks, few enough for one pipeline stage
# (CodePipeline takes at most 50 actions a stage, two a stack).
SOURCES_PER_CATALOG_STACK = 60

CatalogStackName = Annotated[str, StringConstraints(pattern=r"^Catalog[1-9][0-9]{0,2}$")]


class CatalogStacksFile(_Strict):
    """``catalog_stacks.yaml``: catalog stack name -> the sources whose catalog it holds (append-only)."""

    stacks: dict[CatalogStackName, list[Identifier]] = Field(
        default_factory=dict,
        description=(
            "Catalog stack (Catalog1, Catalog2, ...) -> the sources whose Glue databases and row-count queries it "
            "holds. A source not listed stays in the DataLake stack. Append only: never move a source "
            "(docs/decisions/034); python -m odp.config assign-stacks adds new ones."
        ),
    )

    def stack_of(self, source: str) -> str:
        """The stack that holds ``source``'s catalog: the catalog stack listing it, else ``DataLake``."""
        for stack, sources in self.stacks.items():
            if source in sources:
                return stack
        return DATA_LAKE_STACK

    def tables_by_stack(self, tables: Iterable[TableConfig]) -> dict[str, list[TableConfig]]:
        """Stack -> its sources' tables (``DataLake`` always present, catalog stacks only with tables), in the
        order of ``tables``."""
        stack_of: dict[str, str] = {}
        for stack, sources in self.stacks.items():
            for source in sources:
                stack_of.setdefault(source, stack)  # as stack_of: the first stack listing it
        grouped: dict[str, list[TableConfig]] = {DATA_LAKE_STACK: []}
        for table in tables:
            grouped.setdefault(stack_of.get(table.source, DATA_LAKE_STACK), []).append(table)
        return grouped


def _stack_number(name: str) -> int:
    return int(name.removeprefix(CATALOG_STACK_PREFIX))


def assign_sources(
    stacks: Mapping[str, Sequence[str]], new_sources: Iterable[str], *, per_stack: int = SOURCES_PER_CATALOG_STACK
) -> dict[str, list[str]]:
    """The assignment with each of ``new_sources`` not yet listed appended to the lowest-numbered catalog stack
    holding fewer than ``per_stack`` sources, or to a new one numbered after the highest. Append-only: every source
    already listed keeps its stack and its place; a stack a removed source left room in takes new ones first.

    Raises:
        ValueError: ``per_stack`` is below 1.
    """
    if per_stack < 1:
        raise ValueError(f"catalog stacks: per_stack must be at least 1, got {per_stack}")
    assigned = {name: list(sources) for name, sources in stacks.items()}
    listed = {source for sources in assigned.values() for source in sources}
    for source in new_sources:
        if source in listed:
            continue
        room = sorted((name for name, sources in assigned.items() if len(sources) < per_stack), key=_stack_number)
        if room:
            target = room[0]
        else:
            target = f"{CATALOG_STACK_PREFIX}{max(map(_stack_number, assigned), default=0) + 1}"
            assigned[target] = []
        assigned[target].append(source)
        listed.add(source)
    return assigned


def render_catalog_stacks(stacks: Mapping[str, Sequence[str]]) -> str:
    """The text of catalog_stacks.yaml: a header, then one source a line (an added source is one added line)."""
    lines = [
        "# yaml-language-server: $schema=schema/catalog_stacks.schema.json",
        "# Which stack holds each source's Glue databases and row-count queries; a source not listed stays in the",
        "# DataLake stack. Append only: a deployed source never moves (docs/decisions/034). Add sources with",
        "# python -m odp.config assign-stacks SOURCE...",
        "stacks:",
    ]
    for stack, sources in stacks.items():
        lines.append(f"  {stack}:" + ("" if sources else " []"))
        lines.extend(f"    - {source}" for source in sources)
    return "\n".join(lines) + "\n"


def catalog_stack_issues(file: CatalogStacksFile, tables: Iterable[TableConfig]) -> list[tuple[str, str]]:
    """(where, reason) for each problem: a source listed twice, a listed source without a tables file, a Glue
    database two stacks would both create (a raw database shared by sources of different stacks)."""
    tables = list(tables)
    issues: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    configured = {table.source for table in tables}
    for stack, sources in file.stacks.items():
        for source in sources:
            if source in seen:
                issues.append((f"stacks.{stack}", f"source {source!r} is already listed under {seen[source]}"))
            seen.setdefault(source, stack)
            if source not in configured:
                issues.append(
                    (
                        f"stacks.{stack}",
                        f"source {source!r} has no tables (config/tables/{source}.yaml): fix the name, or remove it "
                        "once its tables are removed (no other source moves)",
                    )
                )
    owners: dict[str, dict[str, str]] = {}  # database -> stack -> a source of it
    for table in tables:
        owners.setdefault(table.database, {}).setdefault(file.stack_of(table.source), table.source)
    for database, by_stack in sorted(owners.items()):
        if len(by_stack) > 1:
            places = ", ".join(f"{source} ({stack})" for stack, source in sorted(by_stack.items()))
            issues.append(
                (
                    "stacks",
                    f"raw database {database!r} belongs to sources of different stacks: {places}; a database lives in "
                    "one stack: list these sources in the same one",
                )
            )
    return issues

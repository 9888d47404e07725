"""The synth-time refusal of a Lake Formation resource that names a table the stack does not create.

ODP's stack creates the Glue databases and the views; the tables themselves appear at the first run of the job that
writes them (Hudi's catalog sync). Lake Formation resolves a table when it grants on it or filters it, so a
``PrincipalPermissions`` on a table, its columns or a data cells filter, a ``DataCellsFilter`` or a table's
``TagAssociation`` fails while the table is missing, and CloudFormation rolls the whole stack back. Such grants are
applied after the first run by ``python -m odp lake-grants`` (docs/decisions/030).

:func:`tables_named_before_they_exist` is pure, over CloudFormation-form resources (a template's ``Resources``, as
the tests read it); :func:`check_table_references` adds it to a stack as a construct validation, so ``app.synth()``
raises naming each resource (construct path, table, what to do instead).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsii
from aws_cdk import CfnResource, Stack
from constructs import IValidation

GLUE_TABLE = "AWS::Glue::Table"
# resource type -> how to find the (database, table) pairs it names in its properties
_PERMISSIONS = ("AWS::LakeFormation::PrincipalPermissions", "AWS::LakeFormation::Permissions")
_TAG_ASSOCIATION = "AWS::LakeFormation::TagAssociation"
_DATA_CELLS_FILTER = "AWS::LakeFormation::DataCellsFilter"
# Resource keys naming one table: PrincipalPermissions / TagAssociation spell them one way, the older
# AWS::LakeFormation::Permissions another; the value's key for the table's name.
_TABLE_KEYS = {
    "Table": "Name",
    "TableWithColumns": "Name",
    "DataCellsFilter": "TableName",
    "TableResource": "Name",
    "TableWithColumnsResource": "Name",
}
REMEDY = (
    "CloudFormation fails on a missing table and rolls the stack back; the job's catalog sync creates it at its "
    "first run. Grant on the database or by LF-Tags in the stack, and leave grants on one table, its columns or a "
    "row filter to `python -m odp lake-grants` (docs/decisions/030)"
)


def _named_tables(kind: str, properties: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(database, table) of each single table a Lake Formation resource names (a TableWildcard names none)."""
    if kind == _DATA_CELLS_FILTER:
        yield properties.get("DatabaseName"), properties.get("TableName")
        return
    if kind not in (*_PERMISSIONS, _TAG_ASSOCIATION):
        return
    resource = properties.get("Resource") or {}
    for key, name_key in _TABLE_KEYS.items():
        item = resource.get(key) if isinstance(resource, Mapping) else None
        if isinstance(item, Mapping) and item.get(name_key) is not None:
            yield item.get("DatabaseName"), item[name_key]


def _created_tables(resources: Mapping[str, Mapping[str, Any]]) -> set[tuple[Any, Any]]:
    """(database, table) of every Glue table the template creates, and ``("Ref", logical id)`` of each."""
    created: set[tuple[Any, Any]] = set()
    for logical, resource in resources.items():
        if resource.get("Type") != GLUE_TABLE:
            continue
        properties = resource.get("Properties") or {}
        created.add((properties.get("DatabaseName"), (properties.get("TableInput") or {}).get("Name")))
        created.add(("Ref", logical))
    return created


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def tables_named_before_they_exist(resources: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Pure: (logical id, sentence) for each Lake Formation resource naming a table the template does not create
    (empty: none).

    A table named by ``{"Ref": <a Glue table of the template>}`` counts as created; any other expression is
    refused, since it cannot be shown to exist when the resource is created.
    """
    created = _created_tables(resources)
    problems = []
    for logical, resource in resources.items():
        kind = resource.get("Type", "")
        for database, table in _named_tables(kind, resource.get("Properties") or {}):
            reference = table.get("Ref") if isinstance(table, Mapping) else None
            if (database, table) in created or ("Ref", reference) in created:
                continue
            problems.append(
                (
                    logical,
                    f"{logical} ({kind}) names table {_shown(database)}.{_shown(table)}, which this stack does not "
                    f"create: {REMEDY}",
                )
            )
    return problems


CHECKED_TYPES = frozenset({GLUE_TABLE, *_PERMISSIONS, _TAG_ASSOCIATION, _DATA_CELLS_FILTER})


def rendered_resources(stack: Stack) -> dict[str, dict[str, Any]]:
    """The stack's Glue tables and Lake Formation resources in CloudFormation form (logical id -> Type, Properties,
    Path), without property overrides (ODP's code overrides no Lake Formation name)."""
    resources = {}
    for construct in stack.node.find_all():
        if (
            isinstance(construct, CfnResource)
            and construct.cfn_resource_type in CHECKED_TYPES
            and Stack.of(construct).node.path == stack.node.path
        ):
            properties = construct._render_properties(construct._cfn_properties)  # the L1's own CloudFormation form
            resources[stack.get_logical_id(construct)] = {
                "Type": construct.cfn_resource_type,
                "Properties": stack.resolve(properties) or {},
                "Path": construct.node.path,
            }
    return resources


@jsii.implements(IValidation)
class _TableReferences:
    def __init__(self, stack: Stack) -> None:
        self._stack = stack

    def validate(self) -> list[str]:
        resources = rendered_resources(self._stack)
        return [
            f"[{resources[logical]['Path']}] {sentence}"
            for logical, sentence in tables_named_before_they_exist(resources)
        ]


def check_table_references(stack: Stack) -> None:
    """Make ``app.synth()`` refuse ``stack`` while a Lake Formation resource of it names a table it does not create
    (added once per stack)."""
    if not getattr(stack, "_odp_table_references_checked", False):
        stack.node.add_validation(_TableReferences(stack))
        stack._odp_table_references_checked = True  # type: ignore[attr-defined]

"""A whole source in one entry (``include:`` / ``exclude:``) and shards merged (an entry with ``from:``).

Pure: how an entry resolves to a :class:`TableConfig`, and where a staging key's table goes. The
Configuration Manager stores one :class:`SourceRule` per source that has globs (a ``table_config`` item
under :func:`rule_item_key`); the File Manager reads it for a file whose table has no ``table_config``
item and either routes the file to a merged table, onboards its table (writes the item
:func:`onboarded_table` resolves), or keeps the file ``unmatched``.

Globs are shell-style (Python's ``fnmatch.fnmatchcase``: ``*``, ``?``, ``[abc]``, ``[!abc]``, case-sensitive),
one for the schema segment and one for the table segment of the staging key: ``public.*``, ``shard_*.orders``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict

from odp.config.models import (
    DEFAULT_SHARD_COLUMN,
    DEFAULT_SMALL_TABLE_ROWS,
    SOURCE_SETTINGS,
    ShardFrom,
    SourceFormat,
    TableConfig,
    TableEntry,
    TableMode,
    TableSettings,
    table_id,
)

# The settings an entry or its file's defaults may set, beside the source's own (SOURCE_SETTINGS).
RESOLVED_SETTINGS = (
    "ordering_column",
    "partition_by",
    "table_type",
    "mode",
    "cadence",
    "database",
    "is_active",
    "columns",
    "max_file_attempts",
    "max_table_attempts",
    "index_buckets",
    "index",
    "stream",
    *SOURCE_SETTINGS,
)
Pick = Callable[[str], Any]  # a table setting as resolved: the entry's own value, else its file's default
# table_config items that are not tables: a source's rule (keys never hold a dot, table ids always two).
RULE_ITEM_PREFIX = "rule#"
RULE_RECORD = "source_rule"


def glob_matches(glob: str, schema_name: str, table: str) -> bool:
    """Pure: whether ``<schema glob>.<table glob>`` matches a staging key's schema and table segments."""
    schema_glob, table_glob = glob.split(".", 1)
    return fnmatchcase(schema_name, schema_glob) and fnmatchcase(table, table_glob)


def onboarded_target(schema_name: str, table: str) -> str:
    """The Glue table of an onboarded table: ``<schema>_<table>``, lower case, other characters as ``_``
    (the schema keeps ``public.orders`` and ``billing.orders`` apart)."""
    return re.sub(r"[^a-z0-9_]", "_", f"{schema_name}_{table}".lower())[:255]


def resolve_table(source: str, source_format: SourceFormat, entry: TableEntry, pick: Pick) -> TableConfig:
    """Pure: the resolved table of an entry without issues, the defaults of ODP filled in. A merged entry
    (``from``) takes the shard column first in its key."""
    primary_key = tuple(pick("primary_key"))
    shard_column = shard_from = None
    if entry.from_ is not None:
        shard_column = entry.shard_column or DEFAULT_SHARD_COLUMN
        shard_from = entry.shard_from or ShardFrom.SCHEMA
        primary_key = (shard_column, *primary_key)
    settings = {name: pick(name) for name in RESOLVED_SETTINGS}
    settings["small_table_rows"] = small_table_rows(pick)
    return TableConfig(
        source=source,
        schema_name=entry.source_schema,
        table=entry.source_table,
        format=source_format,
        primary_key=primary_key,
        target_table=entry.target_table or "",
        shard_column=shard_column,
        shard_from=shard_from,
        **{name: value for name, value in settings.items() if value is not None},  # else TableConfig's default
    )


def small_table_rows(pick: Pick) -> int:
    """Pure: the rows under which a table's first write chooses the simple index (0: the index is as set). Only a batch
    current table that sets neither ``index`` nor ``index_buckets`` chooses; its setting, else
    :data:`DEFAULT_SMALL_TABLE_ROWS`."""
    chosen = pick("index") is not None or pick("index_buckets") is not None
    if chosen or pick("stream") is not None or (pick("mode") or TableMode.CURRENT) is not TableMode.CURRENT:
        return 0
    rows = pick("small_table_rows")
    return DEFAULT_SMALL_TABLE_ROWS if rows is None else rows


class MergedRoute(BaseModel):
    """Files whose ``schema.table`` matches ``glob`` belong to the merged table ``table_id``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    glob: str
    table_id: str


class SourceRule(BaseModel):
    """What the File Manager needs to place a file of a source whose table has no item: the source's
    include/exclude globs with the defaults an onboarded table takes, and its merged tables' globs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    format: SourceFormat
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    defaults: TableSettings = TableSettings()
    merged: tuple[MergedRoute, ...] = ()
    is_active: bool = True

    def merged_table(self, schema_name: str, table: str) -> str | None:
        """The merged table a staging key's table writes, if one's glob matches (the first in file order)."""
        return next((r.table_id for r in self.merged if glob_matches(r.glob, schema_name, table)), None)

    def includes(self, schema_name: str, table: str) -> bool:
        """Whether include onboards this table (an include glob matches, no exclude glob does)."""
        matches = any(glob_matches(g, schema_name, table) for g in self.include)
        return matches and not any(glob_matches(g, schema_name, table) for g in self.exclude)

    def to_item(self) -> dict[str, Any]:
        """The table_config item of the rule; the rule itself as JSON (no DynamoDB number or map round trips)."""
        return {
            "table_id": rule_item_key(self.source),
            "record": RULE_RECORD,
            "source": self.source,
            "is_active": self.is_active,
            "rule": self.model_dump_json(exclude_defaults=True),
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> SourceRule:
        """Raises: pydantic.ValidationError: the item's rule is not a rule of this version."""
        rule = cls.model_validate(json.loads(item["rule"]))
        return rule.model_copy(update={"is_active": item.get("is_active") is True})


def rule_item_key(source: str) -> str:
    return f"{RULE_ITEM_PREFIX}{source}"


def is_rule_item(item: dict[str, Any]) -> bool:
    return item.get("record") == RULE_RECORD


def onboarded_table(rule: SourceRule, schema_name: str, table: str) -> TableConfig:
    """Pure: the table an include rule onboards: the source's defaults, target ``<schema>_<table>``, no
    declared columns (the reader takes them from the files: the Parquet schema, the JSON records' fields).

    Raises:
        pydantic.ValidationError: the defaults do not make a table (the loader refuses such a rule first).
    """
    entry = TableEntry(schema=schema_name, table=table, target_table=onboarded_target(schema_name, table))
    resolved = resolve_table(rule.source, rule.format, entry, lambda name: getattr(rule.defaults, name))
    return resolved.model_copy(update={"onboarded": True})


@dataclass(frozen=True)
class Placement:
    """Where a file of a table without an item goes: a merged table, a table to onboard, or nowhere."""

    table_id: str | None  # the table the file belongs to (None: unmatched)
    onboard: TableConfig | None = None  # set when the include rule onboards the file's table


def place(rule: SourceRule | None, source: str, schema_name: str, table: str) -> Placement:
    """Pure: a merged table's glob first, then include/exclude; an inactive or missing rule matches nothing."""
    if rule is None or not rule.is_active:
        return Placement(None)
    merged = rule.merged_table(schema_name, table)
    if merged is not None:
        return Placement(merged)
    if rule.includes(schema_name, table):
        return Placement(table_id(source, schema_name, table), onboarded_table(rule, schema_name, table))
    return Placement(None)

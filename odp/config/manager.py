"""The Configuration Manager: puts the git configuration into batch_config, table_config and dataset_config.

``plan_changes`` is pure: it compares the items the configuration wants with the items DynamoDB
holds. ``load_into_dynamodb`` writes only what differs, so loading twice changes nothing the second time.
Tables, cadences and datasets that disappear from the configuration are marked inactive, never deleted:
their trackers and history still point at them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from odp.config.items import (
    ACTIVE_CADENCE_ATTRIBUTE,
    batch_config_item,
    dataset_config_item,
    normalise_item,
    table_config_item,
)
from odp.config.loader import OdpConfig
from odp.config.patterns import place
from odp.dynamodb import table_items, to_attribute


@dataclass(frozen=True)
class ItemChange:
    kind: str  # "table" | "cadence" | "dataset" (a source rule is a "table" item: rule#<source>)
    key: str
    action: str  # "added" | "changed" | "deactivated"
    item: dict[str, Any]
    changed_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConfigPlan:
    changes: tuple[ItemChange, ...]
    unchanged: int = 0

    def count(self, action: str) -> int:
        return sum(1 for change in self.changes if change.action == action)

    def render(self) -> str:
        lines = [
            f"added: {self.count('added')}, changed: {self.count('changed')}, "
            f"deactivated: {self.count('deactivated')}, unchanged: {self.unchanged}"
        ]
        for change in self.changes:
            sign = {"added": "+", "changed": "~", "deactivated": "-"}[change.action]
            detail = f" ({', '.join(change.changed_fields)})" if change.changed_fields else ""
            lines.append(f"  {sign} {change.kind} {change.key}{detail}")
        return "\n".join(lines)


def _diff(kind: str, key_name: str, wanted: dict[str, dict], existing: dict[str, dict]) -> tuple[list[ItemChange], int]:
    """``existing``: the stored items, normalised (:func:`normalise_item`); ``wanted`` as written."""
    changes: list[ItemChange] = []
    unchanged = 0
    for key, item in sorted(wanted.items()):
        current = existing.get(key)
        plain = normalise_item(item)  # a Decimal written compares as the number read back
        if current is None:
            changes.append(ItemChange(kind, key, "added", item))
        elif current != plain:
            fields = tuple(sorted(name for name in set(plain) | set(current) if plain.get(name) != current.get(name)))
            changes.append(ItemChange(kind, key, "changed", item, fields))
        else:
            unchanged += 1
    for key, current in sorted(existing.items()):
        if key in wanted:
            continue
        if current.get("is_active") is False:
            unchanged += 1
            continue
        retired = {name: value for name, value in current.items() if name != ACTIVE_CADENCE_ATTRIBUTE}
        retired["is_active"] = False
        retired[key_name] = key
        changes.append(ItemChange(kind, key, "deactivated", to_attribute(retired, None), ("is_active",)))
    return changes, unchanged


def onboarded_items(config: OdpConfig, existing: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Pure: the tables the File Manager onboarded that their source's rule still includes, resolved again
    from today's defaults (a defaults change applies to them too); the others are deactivated like a
    removed entry. An entry written for such a table since takes its place."""
    rules = {rule.source: rule for rule in config.rules}
    kept = {}
    for key, item in existing.items():
        if not item.get("onboarded") or not isinstance(item.get("source"), str):
            continue
        schema_name, table = item.get("schema_name"), item.get("table")
        placement = place(rules.get(item["source"]), item["source"], str(schema_name), str(table))
        if placement.onboard is not None and placement.table_id == key:
            kept[key] = table_config_item(placement.onboard)
    return kept


def plan_changes(
    config: OdpConfig,
    environment: str,
    existing_tables: list[dict[str, Any]],
    existing_cadences: list[dict[str, Any]],
    existing_datasets: list[dict[str, Any]] | None = None,
) -> ConfigPlan:
    """What must be written so that DynamoDB matches the configuration (pure); ``existing_datasets`` None: the
    datasets are not planned (no dataset_config table given)."""
    wanted_tables = {t.table_id: table_config_item(t) for t in config.tables}
    wanted_tables |= {rule.to_item()["table_id"]: rule.to_item() for rule in config.rules}
    wanted_cadences = {
        name: batch_config_item(environment, name, cadence) for name, cadence in config.cadences.cadences.items()
    }
    have_tables = {item["table_id"]: normalise_item(item) for item in existing_tables}
    wanted_tables = onboarded_items(config, have_tables) | wanted_tables
    have_cadences = {item["cadence"]: normalise_item(item) for item in existing_cadences}
    cadence_changes, cadence_same = _diff("cadence", "cadence", wanted_cadences, have_cadences)
    table_changes, table_same = _diff("table", "table_id", wanted_tables, have_tables)
    dataset_changes, dataset_same = [], 0
    if existing_datasets is not None:
        wanted_datasets = {dataset.name: dataset_config_item(dataset) for dataset in config.datasets}
        have_datasets = {item["dataset"]: normalise_item(item) for item in existing_datasets}
        dataset_changes, dataset_same = _diff("dataset", "dataset", wanted_datasets, have_datasets)
    return ConfigPlan(
        changes=tuple(cadence_changes + table_changes + dataset_changes),
        unchanged=cadence_same + table_same + dataset_same,
    )


def _scan_all(table: Any) -> list[dict[str, Any]]:
    # A scan is right here: the Configuration Manager needs every config item, once per deploy.
    return list(table_items(table, "scan"))


def load_into_dynamodb(
    config: OdpConfig,
    environment: str,
    table_config_table: Any,
    batch_config_table: Any,
    *,
    dataset_config_table: Any = None,
    dry_run: bool = False,
) -> ConfigPlan:
    """Compare and (unless ``dry_run``) write; returns the plan that was applied.

    ``table_config_table``, ``batch_config_table`` and ``dataset_config_table`` are boto3 ``dynamodb.Table``
    resources; without ``dataset_config_table`` the datasets are left alone (a caller that loads tables only).
    """
    tables, cadences = _scan_all(table_config_table), _scan_all(batch_config_table)
    datasets = _scan_all(dataset_config_table) if dataset_config_table is not None else None
    plan = plan_changes(config, environment, tables, cadences, datasets)
    if dry_run:
        return plan
    targets = {"table": table_config_table, "cadence": batch_config_table, "dataset": dataset_config_table}
    for kind, target in targets.items():
        if target is None:
            continue
        with target.batch_writer() as writer:
            for change in plan.changes:
                if change.kind == kind:
                    writer.put_item(Item=change.item)
    return plan

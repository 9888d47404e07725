"""The stores of the runtime configuration: every reader of table_config, batch_config and dataset_config uses these.

:class:`TableConfigStore` reads table_config (the File Processor strictly, the File Manager
leniently, the Batch Manager by cadence index, the operator CLI by scan); :class:`BatchConfigStore`
reads batch_config; :class:`DatasetConfigStore` reads dataset_config, and :func:`dataset_job_config` is what
the dataset job reads of both (the active datasets and the raw tables they read). Each takes a boto3
``dynamodb.Table`` resource; queries and scans go through :func:`odp.dynamodb.table_items` (boto3's paginators).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from odp.config.datasets import DatasetConfig, dependency_order
from odp.config.items import (
    ACTIVE_CADENCE_ATTRIBUTE,
    TABLE_CONFIG_CADENCE_INDEX,
    BatchConfigRecord,
    DatasetConfigRecord,
    table_config_from_item,
    table_config_item,
)
from odp.config.models import SourceFormat, TableConfig
from odp.config.patterns import SourceRule, is_rule_item, rule_item_key
from odp.dynamodb import table_items


class TableConfigNotFoundError(LookupError):
    """table_config has no item for the table: the configuration was not deployed (or the id is wrong)."""


@dataclass(frozen=True)
class TableInfo:
    """What the File Manager needs from a table_config item: whether it is active, and its format."""

    is_active: bool
    source_format: SourceFormat | None
    found: bool = True  # False: table_config has no item for the table (include may onboard it)


def table_info_from_item(item: dict[str, Any] | None) -> TableInfo:
    """Lenient: a missing item or ``is_active`` not true means no active configuration; an unknown
    format only changes how LOAD* files are classified, so it reads as None."""
    if not item:
        return TableInfo(is_active=False, source_format=None, found=False)
    try:
        source_format: SourceFormat | None = SourceFormat(item.get("format"))
    except ValueError:
        source_format = None
    return TableInfo(is_active=item.get("is_active") is True, source_format=source_format)


class TableConfigStore:
    """table_config (key ``table_id``; sparse index ``active_by_cadence``)."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def _item(self, table_id: str, *, consistent: bool) -> dict[str, Any] | None:
        return self._table.get_item(Key={"table_id": table_id}, ConsistentRead=consistent).get("Item")

    def find(self, table_id: str) -> TableConfig | None:
        """The table's configuration (consistent read), or None when it has no item.

        Raises:
            odp.compat.StaleTableConfigItemError: the item was written in a form this version refuses.
            pydantic.ValidationError: the item is not a table_config item.
        """
        item = self._item(table_id, consistent=True)
        return table_config_from_item(item) if item is not None else None

    def get(self, table_id: str) -> TableConfig:
        """The table's configuration (consistent read): what the job needs before it touches a table.

        Raises:
            TableConfigNotFoundError: no item for the table.
            odp.compat.StaleTableConfigItemError: the item was written in a form this version refuses.
            pydantic.ValidationError: the item is not a table_config item.
        """
        config = self.find(table_id)
        if config is None:
            raise TableConfigNotFoundError(f"{table_id}: no table_config item; deploy the configuration first")
        return config

    def info(self, table_id: str) -> TableInfo:
        """Whether the table is active and its format, never raising on an odd item (the File Manager)."""
        return table_info_from_item(self._item(table_id, consistent=False))

    def rule(self, source: str) -> SourceRule | None:
        """The source's rule (include globs, merged tables), or None when it has none.

        Raises:
            pydantic.ValidationError: the rule item is not a rule of this version.
        """
        item = self._item(rule_item_key(source), consistent=False)
        return SourceRule.from_item(item) if item is not None else None

    def onboard(self, config: TableConfig) -> bool:
        """Write an onboarded table's item unless the table has one already (an entry, or another File
        Manager first); True when this call wrote it."""
        try:
            self._table.put_item(Item=table_config_item(config), ConditionExpression="attribute_not_exists(table_id)")
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def active_ids(self, cadence: str) -> list[str]:
        """Ids of the cadence's active tables, from the sparse ``active_by_cadence`` index (never a scan)."""
        items = table_items(
            self._table,
            "query",
            IndexName=TABLE_CONFIG_CADENCE_INDEX,
            KeyConditionExpression=Key(ACTIVE_CADENCE_ATTRIBUTE).eq(cadence),
            ProjectionExpression="table_id",
        )
        return [item["table_id"] for item in items]

    def scan(self, *, cadence: str | None = None) -> list[TableConfig]:
        """Every table's configuration (of one cadence, active or not), in id order.

        Raises:
            StaleTableConfigItemError, pydantic.ValidationError: an item cannot be read (as :meth:`get`).
        """
        kwargs: dict[str, Any] = {"FilterExpression": Attr("cadence").eq(cadence)} if cadence is not None else {}
        items = table_items(self._table, "scan", **kwargs)
        configs = (table_config_from_item(item) for item in items if not is_rule_item(item))
        return sorted(configs, key=lambda config: config.table_id)


class BatchConfigStore:
    """batch_config (key ``cadence``)."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def find(self, cadence: str) -> BatchConfigRecord | None:
        """The cadence's settings, or None when batch_config has no item for it.

        Raises:
            pydantic.ValidationError: the item is not a batch_config item.
        """
        item = self._table.get_item(Key={"cadence": cadence}).get("Item")
        return BatchConfigRecord.from_item(item) if item is not None else None


class DatasetConfigStore:
    """dataset_config (key ``dataset``): one item per dataset, its SQL included (the Configuration Manager's)."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def active(self) -> list[DatasetConfig]:
        """Every active dataset, each after the datasets it reads: one paginated Scan (consistent) of the active
        items; a dataset the configuration no longer has is inactive and left out.

        Raises:
            pydantic.ValidationError: an active item is not a dataset_config item of this version.
        """
        items = list(table_items(self._table, "scan", FilterExpression=Attr("is_active").eq(True), ConsistentRead=True))
        return dependency_order(DatasetConfigRecord.from_item(item).to_config() for item in items)


@dataclass(frozen=True)
class DatasetJobConfig:
    """What the dataset job runs on: the active datasets in dependency order, and the raw tables they read."""

    tables: tuple[TableConfig, ...]
    datasets: tuple[DatasetConfig, ...]


def dataset_job_config(table_config: Any, dataset_config: Any) -> DatasetJobConfig:
    """The dataset job's configuration from DynamoDB: the active datasets (:meth:`DatasetConfigStore.active`) and
    the table_config item of each raw table they read (one GetItem each, :meth:`TableConfigStore.get`).

    Raises:
        TableConfigNotFoundError: a raw table a dataset reads has no table_config item (configuration not loaded).
        StaleTableConfigItemError, pydantic.ValidationError: an item cannot be read.
    """
    datasets = DatasetConfigStore(dataset_config).active()
    tables = TableConfigStore(table_config)
    table_ids = sorted({source.table for dataset in datasets for source in dataset.sources if source.table})
    return DatasetJobConfig(tuple(tables.get(table_id) for table_id in table_ids), tuple(datasets))

"""The runtime copy of the configuration: batch_config, table_config and dataset_config items in DynamoDB.

Pure conversions between typed config and DynamoDB items (in the boto3 resource / TypeDeserializer
form: plain str, int, bool, list). The Configuration Manager writes these items; the Batch Manager
and the jobs read them back through :mod:`odp.config.store`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, ClassVar, Self

from odp.compat import refuse_columns_map
from odp.config.datasets import DatasetConfig, DatasetSource, QualityRule, Refresh, Zone
from odp.config.models import SOURCE_SETTINGS, Cadence, CadenceMode, EngineName, TableConfig, TableType
from odp.dynamodb import MAX_ITEM_BYTES, StoredRecord, item_size
from odp.naming import file_processor_job_name
from odp.planning import PlanTargets

# Sparse attribute: present only on active tables, so the ``active_by_cadence`` index holds
# exactly the tables a cadence must process (the Batch Manager queries it, never scans).
ACTIVE_CADENCE_ATTRIBUTE = "active_cadence"
TABLE_CONFIG_CADENCE_INDEX = "active_by_cadence"


def table_config_item(table: TableConfig) -> dict[str, Any]:
    item: dict[str, Any] = {
        "table_id": table.table_id,
        "source": table.source,
        "schema_name": table.schema_name,
        "table": table.table,
        "format": table.format.value,
        "primary_key": list(table.primary_key),
        "partition_by": list(table.partition_by),
        "table_type": table.table_type.value,
        "mode": table.mode.value,
        "database": table.database,
        "target_table": table.target_table,
        "is_active": table.is_active,
    }
    if table.cadence is not None:
        item["cadence"] = table.cadence
    if table.stream is not None:
        item["stream"] = table.stream
    if table.ordering_column is not None:
        item["ordering_column"] = table.ordering_column
    if table.columns is not None:
        # A list, not a map: a DynamoDB map has no order, and headerless CSV is read in this order.
        item["columns"] = [{"name": name, "type": kind} for name, kind in table.columns.items()]
    for name in (
        *SOURCE_SETTINGS,
        "max_file_attempts",
        "max_table_attempts",
        "index_buckets",
        "index",
        "small_table_rows",
    ):
        value = getattr(table, name)  # stored when set and not the default
        if value is not None and value != TableConfig.model_fields[name].default:
            item[name] = value.value if hasattr(value, "value") else value
    if table.shard_column is not None:
        item["shard_column"] = table.shard_column
        item["shard_from"] = table.shard_from.value if table.shard_from is not None else None
    if table.onboarded:
        item["onboarded"] = True
    if table.is_active and table.cadence is not None:  # a streamed table is never a batch table
        item[ACTIVE_CADENCE_ATTRIBUTE] = table.cadence
    return item


def table_config_from_item(item: dict[str, Any]) -> TableConfig:
    """Rebuild a :class:`TableConfig` from its DynamoDB item.

    Raises:
        odp.compat.StaleTableConfigItemError: ``columns`` stored as a map (a development build): order lost.
        pydantic.ValidationError: the item is not a table_config item.
    """
    fields = {key: value for key, value in item.items() if key not in ("table_id", ACTIVE_CADENCE_ATTRIBUTE)}
    for number in ("max_file_attempts", "max_table_attempts", "index_buckets", "small_table_rows"):
        if isinstance(fields.get(number), Decimal):  # DynamoDB numbers come back as Decimal
            fields[number] = int(fields[number])
    refuse_columns_map(item)
    columns = fields.get("columns")
    if columns is not None:
        fields["columns"] = {column["name"]: column["type"] for column in columns}
    return TableConfig.model_validate(fields)


class BatchConfigRecord(StoredRecord):
    """A batch_config item (key ``cadence``): the cadence's settings the Batch Manager and the pipeline read."""

    cadence: str
    schedule: str
    batch_size: int
    worker_type: str
    number_of_workers: int
    max_concurrency: int
    job_timeout_minutes: int
    job_name: str
    is_active: bool = True
    # the planning targets (items written before them plan as before: batch_size tables, the job's workers)
    max_workers: int | None = None
    target_run_minutes: float = 5
    mode: CadenceMode = CadenceMode.SCHEDULED  # items written before it: scheduled

    @property
    def plan_targets(self) -> PlanTargets:
        """What the Batch Manager plans this cadence's runs toward (:func:`odp.planning.plan_runs`)."""
        return PlanTargets.of(self)


def batch_config_item(environment: str, name: str, cadence: Cadence, *, is_active: bool = True) -> dict[str, Any]:
    return BatchConfigRecord(
        cadence=name,
        schedule=cadence.schedule,
        batch_size=cadence.batch_size,
        worker_type=cadence.worker_type.value,
        number_of_workers=cadence.number_of_workers,
        max_workers=cadence.max_workers,
        target_run_minutes=cadence.target_run_minutes,
        max_concurrency=cadence.max_concurrency,
        job_timeout_minutes=cadence.job_timeout_minutes,
        job_name=file_processor_job_name(environment, name),
        is_active=is_active,
        mode=cadence.mode,
    ).to_item()


class DatasetConfigRecord(StoredRecord):
    """A dataset_config item (key ``dataset``): every field of a :class:`DatasetConfig`, its SQL text included, and
    whether the configuration still has it (a dataset removed from config/ stays, inactive)."""

    float_digits: ClassVar[int | None] = None  # an accepted value is stored as written

    dataset: str
    zone: Zone
    database: str
    sources: tuple[DatasetSource, ...]
    sql: str
    key: tuple[str, ...]
    partition_by: tuple[str, ...] = ()
    table_type: TableType
    refresh: Refresh
    quality: tuple[QualityRule, ...] = ()
    file: str
    engine: EngineName = EngineName.GLUE
    is_active: bool = True

    @classmethod
    def of(cls, dataset: DatasetConfig) -> Self:
        return cls(dataset=dataset.name, **dataset.model_dump(exclude={"name"}))

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Self:
        """Raises: pydantic.ValidationError: the item is not a dataset_config item."""
        return cls.model_validate(normalise_item(item))  # an accepted value comes back as it was written

    def to_config(self) -> DatasetConfig:
        return DatasetConfig(name=self.dataset, **self.model_dump(exclude={"dataset", "is_active"}))


def dataset_config_item(dataset: DatasetConfig) -> dict[str, Any]:
    return DatasetConfigRecord.of(dataset).to_item()


def dataset_item_issue(dataset: DatasetConfig) -> str | None:
    """Why the dataset's dataset_config item cannot be stored (DynamoDB's item size limit), or None."""
    size = item_size(dataset_config_item(dataset))
    if size <= MAX_ITEM_BYTES:
        return None
    return (
        f"its dataset_config item would be {size:,} bytes, over DynamoDB's item size limit of 400 KB "
        f"({MAX_ITEM_BYTES:,} bytes; the SQL is {len(dataset.sql.encode()):,} bytes of it): shorten the SQL, or "
        "split the dataset into datasets that read each other"
    )


def normalise_item(value: Any) -> Any:
    """DynamoDB returns numbers as Decimal; turn them back into int so items compare equal."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {key: normalise_item(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [normalise_item(inner) for inner in value]
    return value

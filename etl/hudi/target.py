"""One frozen description of a Hudi table a job writes: built from a raw table's config or a dataset's.

Everything the options builder needs and nothing job-specific: the name and catalog database, the
record key, partitions, table type, how two versions of a key are ordered, and the index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from etl.change_frame import SEQ
from odp.config.datasets import DatasetConfig
from odp.config.models import IndexKind, TableConfig, TableMode, TableType

# The index as each commit records it (``_odp_index``): the table setting's own values, one spelling.
RECORD_INDEX = IndexKind.RECORD.value
SIMPLE_INDEX = IndexKind.SIMPLE.value


class Ordering(StrEnum):
    """Hudi's merge mode: which of two versions of a key wins."""

    EVENT_TIME = "EVENT_TIME_ORDERING"  # the larger ordering field (``_odp_seq``): a late change never wins
    COMMIT_TIME = "COMMIT_TIME_ORDERING"  # the latest write wins (datasets: each run recomputes its rows)


@dataclass(frozen=True)
class HudiTarget:
    """A target Hudi table.

    ``label``: how messages name it (a raw table's id, a dataset's name). ``ordering_field``: the event-time
    field with EVENT_TIME ordering, None with COMMIT_TIME. ``index_buckets``: None for the record level index
    (global; a key changing partition moves), N for the bucket index with N buckets per partition. ``simple_index``:
    Hudi's simple index without the metadata table (global when partitioned; a small table's setting).
    ``one_row_per_key``: the writer already reduced the rows to one per record key (Hudi's pre-combine is
    skipped). ``encode_partitions``: partition values URL-encoded in paths (every table created now; an older
    table keeps its layout, :meth:`with_stored_layout`). The catalog (Glue) table is ``database``.``name``.
    """

    label: str
    name: str
    database: str
    record_keys: tuple[str, ...]
    partitions: tuple[str, ...]
    table_type: TableType
    ordering: Ordering
    ordering_field: str | None
    index_buckets: int | None = None
    simple_index: bool = False
    one_row_per_key: bool = False
    encode_partitions: bool = True

    def with_stored_layout(self, encoded: bool | None) -> HudiTarget:
        """This target with the partition layout the table was created with (``encoded``: from its
        ``hoodie.properties``, ``HudiTableState.encoded_partitions`` of :func:`etl.hudi.timeline.read_table_state`;
        None: a new table, encoded)."""
        return self if encoded is None else replace(self, encode_partitions=encoded)

    @property
    def index(self) -> str:
        """The index as recorded in each commit (``_odp_index``): ``record``, ``simple`` or ``bucket:N``."""
        if self.index_buckets is not None:
            return f"bucket:{self.index_buckets}"
        return SIMPLE_INDEX if self.simple_index else RECORD_INDEX

    @classmethod
    def from_table(cls, config: TableConfig) -> HudiTarget:
        """A raw table: event-time ordering on ``_odp_seq``; a historical table keys each change
        (primary key plus ``_odp_seq``) so every change stays."""
        keys = tuple(config.primary_key)
        return cls(
            label=config.table_id,
            name=config.target_table,
            database=config.database,
            record_keys=(*keys, SEQ) if config.mode is TableMode.HISTORICAL else keys,
            partitions=tuple(config.partition_by),
            table_type=config.table_type,
            ordering=Ordering.EVENT_TIME,
            ordering_field=SEQ,
            index_buckets=config.index_buckets,
            simple_index=config.index is IndexKind.SIMPLE,
            one_row_per_key=True,
        )

    @classmethod
    def from_dataset(cls, dataset: DatasetConfig) -> HudiTarget:
        """A dataset: keyed by its ``key``, the latest run's row wins, the raw tables' record level index. Its
        partition paths are not URL-encoded (as before: the raw tables' rule, :mod:`etl.hudi.partition_paths`,
        is not applied to datasets yet)."""
        return cls(
            label=dataset.name,
            name=dataset.name,
            database=dataset.database,
            record_keys=tuple(dataset.key),
            partitions=tuple(dataset.partition_by),
            table_type=dataset.table_type,
            ordering=Ordering.COMMIT_TIME,
            ordering_field=None,
            encode_partitions=False,
        )

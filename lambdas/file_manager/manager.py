"""Register landed files: skip what is not data, find the table's configuration, write once."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit

from lambdas.file_manager.events import ObjectCreated
from lambdas.runtime import dynamodb_tables, new_metrics
from odp.config.patterns import Placement, SourceRule, place
from odp.config.store import TableConfigStore, TableInfo
from odp.contracts.metrics import (
    DUPLICATE_FILE_EVENTS_METRIC,
    FILES_REGISTERED_METRIC,
    FILES_SKIPPED_METRIC,
    FILES_UNMATCHED_METRIC,
    FILES_UNREGISTERED_METRIC,
    TABLES_ONBOARDED_METRIC,
)
from odp.faults import fault_point
from odp.tracker import (
    FileStatus,
    FileTracker,
    StagingKey,
    TrackedFile,
    Trackers,
    classify_staging_object,
    file_kind,
    iso,
    make_file_id,
    utc_now,
)
from odp.tracker.repository import Clock

logger = Logger(child=True)


class Outcome(StrEnum):
    """What happened to one message; each has a metric of the same meaning."""

    REGISTERED = "registered"  # new landed file of an active table
    UNREGISTERED = "unregistered"  # new file of a table whose configuration is inactive
    UNMATCHED = "unmatched"  # new file of a table with no configuration that no rule of its source matches
    DUPLICATE = "duplicate"  # already tracked or already processed: nothing changed
    SKIPPED = "skipped"  # not a data file (folder marker, _SUCCESS, .tmp, zero bytes, unknown suffix, bad key)


METRIC_NAMES = {
    Outcome.REGISTERED: FILES_REGISTERED_METRIC,
    Outcome.UNREGISTERED: FILES_UNREGISTERED_METRIC,
    Outcome.UNMATCHED: FILES_UNMATCHED_METRIC,
    Outcome.DUPLICATE: DUPLICATE_FILE_EVENTS_METRIC,
    Outcome.SKIPPED: FILES_SKIPPED_METRIC,
}


class FileManager:
    """Turns S3 "Object Created" events into file_tracker items.

    ``table_config`` is the boto3 ``dynamodb.Table`` of table_config, read through
    :class:`TableConfigStore`; a table is looked up once per invocation (call
    :meth:`start_invocation` at the start of each).
    """

    def __init__(self, file_tracker: FileTracker, table_config: Any, *, metrics: Any = None, clock: Clock = utc_now):
        self._files = file_tracker
        self._configs = TableConfigStore(table_config)
        self.metrics = metrics
        self._clock = clock
        self._tables: dict[str, TableInfo] = {}
        self._rules: dict[str, SourceRule | None] = {}

    @classmethod
    def from_environment(cls) -> FileManager:
        """The File Manager of a Lambda process: the tables named by its environment, its metrics."""
        dynamodb, names = dynamodb_tables()
        return cls(Trackers.build(dynamodb, names).files, dynamodb.Table(names.table_config), metrics=new_metrics())

    def start_invocation(self) -> None:
        """Forget cached table configuration: a config change applies from the next invocation."""
        self._tables = {}
        self._rules = {}

    def process(self, event: ObjectCreated) -> Outcome:
        """Register one parsed event and count its outcome.

        Raises:
            botocore.exceptions.ClientError: DynamoDB refused the write (the record is retried).
        """
        outcome = self.register(event)
        if self.metrics is not None:
            self.metrics.add_metric(name=METRIC_NAMES[outcome], unit=MetricUnit.Count, value=1)
        return outcome

    def table_info(self, table_id: str) -> TableInfo:
        if table_id not in self._tables:
            self._tables[table_id] = self._configs.info(table_id)
        return self._tables[table_id]

    def source_rule(self, source: str) -> SourceRule | None:
        if source not in self._rules:
            self._rules[source] = self._configs.rule(source)
        return self._rules[source]

    def place(self, staging_key: StagingKey) -> tuple[str, TableInfo]:
        """The table a file belongs to and its configuration: its own item, else its source's rule (a merged
        table's glob, or include: then the table is onboarded now, its item written from the defaults)."""
        info = self.table_info(staging_key.table_id)
        if info.found:
            return staging_key.table_id, info
        placement: Placement = place(
            self.source_rule(staging_key.source), staging_key.source, staging_key.schema_name, staging_key.table
        )
        if placement.table_id is None:
            return staging_key.table_id, info
        if placement.onboard is not None:
            self._tables.pop(placement.table_id, None)  # cached as not found a moment ago
            if self._configs.onboard(placement.onboard):
                logger.info("table onboarded by its source's include rule", extra={"table_id": placement.table_id})
                if self.metrics is not None:
                    self.metrics.add_metric(name=TABLES_ONBOARDED_METRIC, unit=MetricUnit.Count, value=1)
        return placement.table_id, self.table_info(placement.table_id)

    def register(self, event: ObjectCreated) -> Outcome:
        """Record the object once; see :class:`Outcome` for what can happen."""
        log = {"bucket": event.bucket, "key": event.key, "etag": event.etag, "event_id": event.event_id}
        staging_key, reason = classify_staging_object(event.key, event.size)
        if staging_key is None:
            # WARNING: a skipped object is never applied; the FilesSkipped metric counts it.
            logger.warning("skipped a non-data object", extra={**log, "skip_reason": reason})
            return Outcome.SKIPPED
        table_id, info = self.place(staging_key)
        now = iso(self._clock())
        status = FileStatus.UNREGISTERED if info.found else FileStatus.UNMATCHED
        status = FileStatus.LANDED if info.is_active else status
        tracked = TrackedFile(
            table_id=table_id,
            file_id=make_file_id(event.bucket, event.key, event.etag, event.version_id),
            bucket=event.bucket,
            key=event.key,
            size=event.size or 0,
            etag=event.etag,
            landed_at=event.event_time or now,
            file_kind=file_kind(staging_key.file_name, info.source_format),
            status=status,
            version_id=event.version_id,
            sequencer=event.sequencer,
            event_time=event.event_time,
            registered_at=now,
        )
        log.update(table_id=tracked.table_id, file_id=tracked.file_id)
        if not self._files.register(tracked):
            logger.info("file already tracked or processed; nothing changed", extra=log)
            return Outcome.DUPLICATE
        if tracked.status is FileStatus.UNREGISTERED:
            logger.warning("file of a table whose configuration is inactive kept as unregistered", extra=log)
            return Outcome.UNREGISTERED
        if tracked.status is FileStatus.UNMATCHED:
            # WARNING: no entry and no rule of the source takes this table: python -m odp status lists its prefix.
            logger.warning("file of a table no entry or rule matches kept as unmatched", extra=log)
            return Outcome.UNMATCHED
        logger.info("file registered", extra={**log, "file_kind": tracked.file_kind.value, "size": tracked.size})
        fault_point("file_manager.after_register")  # mid-batch: SQS redelivers the batch's other messages
        return Outcome.REGISTERED

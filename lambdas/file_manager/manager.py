"""Register landed files: skip what is not data, find the table's configuration, write once."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit

from lambdas.file_manager.events import ObjectCreated
from lambdas.runtime import dynamodb_tables, new_metrics
from odp.config.store import TableConfigStore, TableInfo
from odp.contracts.metrics import (
    DUPLICATE_FILE_EVENTS_METRIC,
    FILES_REGISTERED_METRIC,
    FILES_SKIPPED_METRIC,
    FILES_UNREGISTERED_METRIC,
)
from odp.faults import fault_point
from odp.tracker import (
    FileStatus,
    FileTracker,
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
    UNREGISTERED = "unregistered"  # new file of a table without an active configuration
    DUPLICATE = "duplicate"  # already tracked or already processed: nothing changed
    SKIPPED = "skipped"  # not a data file (folder marker, _SUCCESS, .tmp, zero bytes, unknown suffix, bad key)


METRIC_NAMES = {
    Outcome.REGISTERED: FILES_REGISTERED_METRIC,
    Outcome.UNREGISTERED: FILES_UNREGISTERED_METRIC,
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

    @classmethod
    def from_environment(cls) -> FileManager:
        """The File Manager of a Lambda process: the tables named by its environment, its metrics."""
        dynamodb, names = dynamodb_tables()
        return cls(Trackers.build(dynamodb, names).files, dynamodb.Table(names.table_config), metrics=new_metrics())

    def start_invocation(self) -> None:
        """Forget cached table configuration: a config change applies from the next invocation."""
        self._tables = {}

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

    def register(self, event: ObjectCreated) -> Outcome:
        """Record the object once; see :class:`Outcome` for what can happen."""
        log = {"bucket": event.bucket, "key": event.key, "etag": event.etag, "event_id": event.event_id}
        staging_key, reason = classify_staging_object(event.key, event.size)
        if staging_key is None:
            # WARNING: a skipped object is never applied; the FilesSkipped metric counts it.
            logger.warning("skipped a non-data object", extra={**log, "skip_reason": reason})
            return Outcome.SKIPPED
        info = self.table_info(staging_key.table_id)
        now = iso(self._clock())
        tracked = TrackedFile(
            table_id=staging_key.table_id,
            file_id=make_file_id(event.bucket, event.key, event.etag, event.version_id),
            bucket=event.bucket,
            key=event.key,
            size=event.size or 0,
            etag=event.etag,
            landed_at=event.event_time or now,
            file_kind=file_kind(staging_key.file_name, info.source_format),
            status=FileStatus.LANDED if info.is_active else FileStatus.UNREGISTERED,
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
            logger.warning("file of a table without an active configuration kept as unregistered", extra=log)
            return Outcome.UNREGISTERED
        logger.info("file registered", extra={**log, "file_kind": tracked.file_kind.value, "size": tracked.size})
        fault_point("file_manager.after_register")  # mid-batch: SQS redelivers the batch's other messages
        return Outcome.REGISTERED

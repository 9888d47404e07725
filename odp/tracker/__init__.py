"""File and processing trackers: item schema, statuses, keys, and repositories over DynamoDB."""

from odp.tracker.conditions import LeaseLostError, TrackerError
from odp.tracker.items import JobRunRef, TableRun, TableState, TrackedFile, iso, utc_now
from odp.tracker.job_runs import ENDED_JOB_RUN_STATES, EmrServerlessJobRuns, GlueJobRuns, JobRuns, JobRunsByEngine
from odp.tracker.keys import (
    StagingKey,
    StagingKeyError,
    classify_staging_object,
    file_kind,
    make_file_id,
    parse_staging_key,
    skip_reason,
)
from odp.tracker.ledger import RunLedger, dataset_subject
from odp.tracker.repository import FileTracker, PendingSummary, ProcessingTracker, Trackers
from odp.tracker.statuses import FileKind, FileStatus, RunStatus, WriteStrategy

__all__ = [
    "ENDED_JOB_RUN_STATES",
    "EmrServerlessJobRuns",
    "FileKind",
    "FileStatus",
    "FileTracker",
    "GlueJobRuns",
    "JobRunRef",
    "JobRuns",
    "JobRunsByEngine",
    "LeaseLostError",
    "PendingSummary",
    "ProcessingTracker",
    "RunLedger",
    "RunStatus",
    "StagingKey",
    "StagingKeyError",
    "TableRun",
    "TableState",
    "TrackedFile",
    "TrackerError",
    "Trackers",
    "WriteStrategy",
    "classify_staging_object",
    "dataset_subject",
    "file_kind",
    "iso",
    "make_file_id",
    "parse_staging_key",
    "skip_reason",
    "utc_now",
]

"""Every CloudWatch metric ODP publishes or alarms on: namespaces, dimensions and metric names.

The publishers (the Lambdas through Powertools, etl/file_processor/cost.py, etl/streaming/metrics.py) and the CDK
alarms, dashboards and PutMetricData grants (infrastructure/) import these; nothing else spells them.
"""

from __future__ import annotations

# Namespaces
NAMESPACE = "ODP"  # the Lambdas (Powertools EMF) and the File Processor's table runs
STREAMING_NAMESPACE = "ODP/Streaming"  # the streaming job, one data point per micro-batch
GLUE_NAMESPACE = "Glue"  # Glue's own job metrics (--enable-metrics, emitConsumerLagMetrics)
EVENTS_NAMESPACE = "AWS/Events"  # EventBridge's, for the alarm on a rule's matches

# Dimensions
CADENCE_DIMENSION = "cadence"  # the Batch Manager's metrics and the table runs'
TABLE_DIMENSION = "table_id"  # the table runs'
STREAM_DIMENSION = "stream"  # the streaming job's
RULE_NAME_DIMENSION = "RuleName"  # EventBridge's

# The File Processor, per table run (etl/file_processor/cost.py; the costliest-tables dashboard)
TABLE_SECONDS_METRIC = "TableRunSeconds"
TABLE_DPU_SECONDS_METRIC = "TableDpuSeconds"
# Values of columns outside a table's columns dropped under new_columns: ignore (also the streaming job's, per
# micro-batch, in STREAMING_NAMESPACE)
IGNORED_VALUES_METRIC = "IgnoredColumnValues"

# The Batch Manager, per cadence (lambdas/batch_manager; the freshness and quarantine alarms)
PENDING_FILES_METRIC = "PendingFiles"
PENDING_BYTES_METRIC = "PendingBytes"
FRESHNESS_METRIC = "OldestPendingFileAgeSeconds"
TABLES_WITH_PENDING_FILES_METRIC = "TablesWithPendingFiles"
LEASED_TABLES_SKIPPED_METRIC = "LeasedTablesSkipped"
BATCHES_METRIC = "Batches"
FAILED_TABLES_METRIC = "FailedTables"  # also the streaming job's, per micro-batch, in STREAMING_NAMESPACE
FAILED_BATCHES_METRIC = "FailedBatches"
QUARANTINED_METRIC = "QuarantinedFiles"

# The File Manager, per event (lambdas/file_manager)
FILES_REGISTERED_METRIC = "FilesRegistered"
FILES_UNREGISTERED_METRIC = "FilesUnregistered"
FILES_UNMATCHED_METRIC = "FilesUnmatched"  # a file of a table no entry or include/from rule of its source matches
TABLES_ONBOARDED_METRIC = "TablesOnboarded"  # a table an include rule onboarded at its first file
DUPLICATE_FILE_EVENTS_METRIC = "DuplicateFileEvents"
FILES_SKIPPED_METRIC = "FilesSkipped"
FAILED_MESSAGES_METRIC = "FailedMessages"

# The streaming job, per micro-batch (etl/streaming/metrics.py; infrastructure/jobs/streaming.py alarms)
BATCH_SECONDS_METRIC = "BatchSeconds"
RECORDS_METRIC = "Records"
BAD_RECORDS_METRIC = "BadRecords"

# EventBridge
MATCHED_EVENTS_METRIC = "MatchedEvents"

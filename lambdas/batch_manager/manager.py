"""The Batch Manager's reads: batch_config, the active tables of a cadence, pending files, leases."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit

from lambdas.batch_manager.planner import make_batches
from lambdas.batch_manager.plans import PlanStore
from lambdas.batch_manager.summary import bounded_summary, summarise
from lambdas.runtime import dynamodb_tables, new_metrics, plan_bucket, s3_client
from odp.cadence_metrics import CadenceMetric, outcome_metrics, plan_metrics
from odp.cadence_plan import plan_cadence
from odp.config.items import BatchConfigRecord
from odp.config.store import BatchConfigStore, TableConfigStore
from odp.contracts.batches import BatchResult, MapResults, PlanAnswer, PlanLocation, planned_results
from odp.contracts.metrics import CADENCE_DIMENSION
from odp.planning import RunShape
from odp.tracker import FileTracker, JobRunsByEngine, ProcessingTracker, RunStatus, Trackers, utc_now
from odp.tracker.repository import Clock

logger = Logger(child=True)


class BatchManagerError(Exception):
    """Base class: the state machine catches it and sends the alert."""


class UnknownCadenceError(BatchManagerError):
    """batch_config has no item for the cadence: the configuration was not loaded for it."""


class BatchManager:
    """Plans one cadence's Glue runs and summarises them.

    ``batch_config`` / ``table_config`` are boto3 ``dynamodb.Table`` resources, read through the
    configuration stores (:mod:`odp.config.store`).
    """

    def __init__(
        self,
        *,
        batch_config: Any,
        table_config: Any,
        file_tracker: FileTracker,
        processing_tracker: ProcessingTracker,
        plans: PlanStore,
        metrics: Any = None,
        clock: Clock = utc_now,
    ) -> None:
        self.plans = plans
        self._cadences = BatchConfigStore(batch_config)
        self._tables = TableConfigStore(table_config)
        self._files = file_tracker
        self._processing = processing_tracker
        self.metrics = metrics
        self._clock = clock

    @classmethod
    def from_environment(cls) -> BatchManager:
        """The Batch Manager of a Lambda process: the tables named by its environment, its metrics."""
        dynamodb, names = dynamodb_tables()
        # a lease of an ended run (on Glue or on EMR Serverless, asked of the engine that ran it) is not held
        trackers = Trackers.build(dynamodb, names, job_runs=JobRunsByEngine())
        return cls(
            batch_config=dynamodb.Table(names.batch_config),
            table_config=dynamodb.Table(names.table_config),
            file_tracker=trackers.files,
            processing_tracker=trackers.processing,
            plans=PlanStore(s3_client(), plan_bucket()),
            metrics=new_metrics(service=""),  # only the cadence dimension: the freshness alarm names exactly {cadence}
        )

    def settings(self, cadence: str) -> BatchConfigRecord | None:
        """The cadence's batch_config item; ``None`` when the cadence is switched off (``is_active`` false).

        Raises:
            UnknownCadenceError: no batch_config item for the cadence.
        """
        settings = self._cadences.find(cadence)
        if settings is None:
            raise UnknownCadenceError(
                f"batch_config has no cadence {cadence!r}: load the configuration (python -m odp.config load)"
            )
        return settings if settings.is_active else None

    def active_tables(self, cadence: str) -> list[str]:
        """Active tables of the cadence, from the sparse ``active_by_cadence`` index (paginated)."""
        return self._tables.active_ids(cadence)

    def plan(self, cadence: str, execution_name: str) -> dict[str, Any]:
        """Runs of tables with pending files, oldest first, leased and held tables left out, packed by their
        estimated work toward the cadence's target run time (odp/planning.py), written to S3 for the Map to read;
        the answer says where and how many (a plan of any size, never the plan itself).

        Raises:
            UnknownCadenceError: the cadence is not in batch_config.
        """
        settings = self.settings(cadence)
        if settings is None:
            logger.info("cadence switched off in batch_config; nothing to plan", extra={"cadence": cadence})
        tables = self.active_tables(cadence) if settings is not None else []
        planned = plan_cadence(
            self._files, self._processing, tables, settings.plan_targets if settings else None, self._clock()
        )
        runs, totals, leased, held = planned.runs, planned.totals, planned.leased, planned.held
        batches = make_batches(runs, execution_name, settings.worker_type if settings else "")
        location = self.plans.location(cadence, execution_name)
        if batches:
            self.plans.write_plan(location, batches)
        self._publish(cadence, plan_metrics(totals, leased=len(leased), runs=len(batches)))
        log = {
            "cadence": cadence,
            "active_tables": planned.active_tables,
            "leased_tables": sorted(leased),
            "held_tables": sorted(held),
            "batches": len(batches),
            "own_runs": sum(1 for run in runs if run.shape is RunShape.OWN_RUN),
            "estimated_seconds_max": max((batch.estimated_seconds for batch in batches), default=0),
            "plan": f"s3://{location.bucket}/{location.key}" if batches else None,
            **totals.to_payload(),
        }
        if held:
            logger.warning(
                "held tables left out: each failed max_table_attempts runs in a row; after a fix, python -m odp retry",
                extra={"cadence": cadence, "held_tables": sorted(held)},
            )
        logger.info("planned", extra=log)
        answer = PlanAnswer(
            location=location, batches=len(batches), tables=planned.ready_tables, pending=totals.to_payload()
        )
        return answer.model_dump(mode="json")

    def summarise(self, cadence: str, location: PlanLocation, results: MapResults | None) -> dict[str, Any]:
        """Each planned table's outcome for this execution: the plan and the Map's results from S3, each table's
        run from processing_tracker. The whole summary goes to S3 (``location.summary_key``); the answer is bounded
        (:func:`bounded_summary`).

        Raises:
            InvalidBatchResultError: the Map's results are not what its ResultWriter writes, or name a batch the plan
                does not hold.
        """
        batches = self.plans.read_plan(location)
        results_read = self.plans.read_results(results) if results is not None else []
        whole = self.summarise_results(cadence, planned_results(batches, results_read))
        self.plans.write_summary(location, whole)
        return bounded_summary(whole, location)

    def summarise_results(self, cadence: str, batches: list[BatchResult]) -> dict[str, Any]:
        """Every table's outcome for these batch results, from processing_tracker (one BatchGetItem per 100 tables),
        uncut; logged, and counted in the cadence's metrics."""
        states = self._processing.states(table_id for batch in batches for table_id in batch.table_ids)
        result = summarise(batches, states)
        logger.info(
            "summarised",
            extra={
                "cadence": cadence,
                "failed_tables": result["failed_tables"],
                "failed_batches": result["failed_batches"],
                "failed": [row["table_id"] for row in result["tables"] if RunStatus(row["status"]).failed],
            },
        )
        self._publish(
            cadence,
            outcome_metrics(
                failed_tables=result["failed_tables"],
                failed_runs=result["failed_batches"],
                quarantined_files=result["quarantined_files"],
            ),
        )
        return result

    def _publish(self, cadence: str, metrics: list[CadenceMetric]) -> None:
        """The cadence's metrics (odp.cadence_metrics, which a warm run publishes too) as EMF."""
        if self.metrics is None:
            return
        self.metrics.add_dimension(name=CADENCE_DIMENSION, value=cadence)
        for metric in metrics:
            self.metrics.add_metric(name=metric.name, unit=MetricUnit(metric.unit), value=metric.value)

"""The plan of one execution in S3, its Map's results and its whole summary (odp.contracts.batches.PlanLocation)."""

from __future__ import annotations

import json
from typing import Any

from odp.contracts.batches import (
    Batch,
    BatchResult,
    ChildExecution,
    InvalidBatchResultError,
    MapResults,
    PlanLocation,
    ResultManifest,
)


class PlanStore:
    """Reads and writes plans in ``bucket`` through ``s3`` (a boto3 S3 client); the bucket's default encryption
    (SSE-KMS with the state key) applies to every object."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self._s3 = s3
        self.bucket = bucket

    def location(self, cadence: str, execution_name: str) -> PlanLocation:
        return PlanLocation.for_execution(self.bucket, cadence, execution_name)

    def write_plan(self, location: PlanLocation, batches: list[Batch]) -> None:
        """The Map's items: a JSON array of batch payloads (the ItemReader reads it with InputType JSON)."""
        self._put(location.bucket, location.key, [batch.to_payload() for batch in batches])

    def read_plan(self, location: PlanLocation) -> list[Batch]:
        return [Batch.model_validate(item) for item in self._get(location.bucket, location.key)]

    def read_results(self, results: MapResults) -> list[BatchResult]:
        """Every child execution's batch result, from the files the ResultWriter's manifest lists.

        Raises:
            InvalidBatchResultError: the manifest or a result file is not what the ResultWriter writes.
        """
        try:
            manifest = ResultManifest.model_validate(self._get(results.bucket, results.key))
        except ValueError as error:
            raise InvalidBatchResultError(
                f"s3://{results.bucket}/{results.key} is not a Map Run manifest: {error}"
            ) from error
        batch_results = []
        for files in manifest.result_files.values():
            for result_file in files:
                for record in self._get(manifest.destination_bucket, result_file.key):
                    batch_results.append(ChildExecution.model_validate(record).batch_result())
        return batch_results

    def write_summary(self, location: PlanLocation, summary: dict[str, Any]) -> None:
        self._put(location.bucket, location.summary_key, summary)

    def _put(self, bucket: str, key: str, document: Any) -> None:
        body = json.dumps(document, separators=(",", ":")).encode()
        self._s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")

    def _get(self, bucket: str, key: str) -> Any:
        return json.loads(self._s3.get_object(Bucket=bucket, Key=key)["Body"].read())

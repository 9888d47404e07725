"""What a state machine needs from the engine that runs a job kind's jobs (Glue, EMR Serverless)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from aws_cdk import aws_iam as iam

from odp.config.models import EngineName
from odp.contracts.job_kinds import JobKind


class JobEngine(Protocol):
    """Where a job kind's runs go: the definition's engine placeholders, and the grants of the role that starts
    runs (a state machine's: start, watch, stop)."""

    engine: EngineName

    def run_values(
        self, kind: JobKind, *, job_name: str, static_arguments: Mapping[str, str], timeout_minutes: int
    ) -> dict[str, Any]:
        """The engine's fields of the kind's substitutions (odp.contracts.state_machines.substitutions_for)."""
        ...

    def grant_run(self, role: iam.IRole, *, job_arn: str, sid: str) -> None:
        """Let ``role`` start, watch and stop runs of the job (``job_arn``; ``sid`` names the statement)."""
        ...

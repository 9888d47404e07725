"""AWS Glue as a job kind's engine: each unit is a Glue job of its family (infrastructure/jobs/glue_job.py); a state
machine runs it with ``glue:startJobRun.sync``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import aws_iam as iam

from odp.config.models import EngineName
from odp.contracts.job_kinds import JobKind

# what glue:startJobRun.sync needs: start, poll, stop
RUN_ACTIONS = ("glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns", "glue:BatchStopJobRun")


class GlueJobEngine:
    """The Glue side of a state machine (stateless: the jobs are their family's)."""

    engine = EngineName.GLUE

    def run_values(
        self, kind: JobKind, *, job_name: str, static_arguments: Mapping[str, str], timeout_minutes: int
    ) -> dict[str, Any]:
        """A Glue run names its job; its static arguments are the job's DefaultArguments, its timeout the job's."""
        return {"job_name": job_name}

    def grant_run(self, role: iam.IRole, *, job_arn: str, sid: str) -> None:
        role.add_to_principal_policy(iam.PolicyStatement(sid=sid, actions=list(RUN_ACTIONS), resources=[job_arn]))


GLUE = GlueJobEngine()

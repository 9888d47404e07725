"""The jobs of a job kind that has no construct of its own (odp.contracts.job_kinds): one Glue job family per kind,
one job per unit, the kind's entry point as the script, the registry's static arguments, read access to the raw zone.

This is what makes a new job kind one contract, one entry point and one registry entry: the stage deploys it here,
the canary runs its harmless mode, Lake Formation lets its role read the lake. A kind that needs more (writes, a
state machine, a stream) gets a construct of its own, registered in infrastructure/jobs/layer.py.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct, IDependable

from infrastructure.grants import grant_key, grant_objects
from infrastructure.jobs.glue_job import GlueCommand, GlueJobFamily, GlueJobFamilyProps, GlueJobSpec, GlueStage
from odp.contracts.job_kinds import JobDeployment, JobKind, JobUnit


def entry_point_file(kind: JobKind) -> Path:
    """The file of the kind's entry point module (the Glue job's script).

    Raises:
        ModuleNotFoundError: the module does not exist.
    """
    spec = importlib.util.find_spec(kind.entry_module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"job kind {kind.name}: no entry point module {kind.entry_module}")
    return Path(spec.origin)


@dataclass(frozen=True)
class KindJobsProps:
    """The jobs of one kind.

    Attributes:
        stage: what the stage gives every job family.
        kind: the job kind (odp.contracts.job_kinds.JobKind).
        units: the jobs the configuration deploys of it.
        deployment: what the jobs' static arguments name.
        library: the deployment of the etl/odp zip and the wheels (the File Processor family's code).
    """

    stage: GlueStage
    kind: JobKind
    units: Sequence[JobUnit]
    deployment: JobDeployment
    library: IDependable


class KindJobs(GlueJobFamily):
    """``odp-<env>-<kind>[-<unit>]``: one Glue job per unit of a registered job kind."""

    def __init__(self, scope: Construct, construct_id: str, props: KindJobsProps) -> None:
        kind, stage = props.kind, props.stage
        script = entry_point_file(kind)
        super().__init__(
            scope,
            construct_id,
            GlueJobFamilyProps(
                stage,
                kind.name.replace("_", "-"),
                f"glue/{kind.name}/",
                [s3deploy.Source.data(kind.script, script.read_text(encoding="utf-8"))],
                data_key=stage.zone_keys["raw"],
                databases=(),
                requires=[props.library],
            ),
        )
        grant_objects(self.role, stage.buckets["raw"], reason=f"The {kind.title} reads the raw tables.")
        grant_key(self.role, stage.zone_keys["raw"], encrypt=False)
        for unit in props.units:
            self.add_job(
                GlueJobSpec(
                    construct_id=f"Job-{unit.key}",
                    name=kind.job_name(stage.environment, unit),
                    description=f"ODP {kind.title}",
                    script=kind.script,
                    arguments=kind.static_arguments(props.deployment, unit),
                    command=GlueCommand.STREAMING if kind.streaming else GlueCommand.ETL,
                )
            )

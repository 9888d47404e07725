"""A new job kind is one contract, one entry point and one registry entry: a throwaway kind registered beside the
built-in ones is deployed by the stage (a Glue job per unit, the registry's static arguments), started by the
post-deploy canary and audited by cdk-nag like every job, with no construct or stage change."""

from __future__ import annotations

from aws_cdk import Validations
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infrastructure.application import ASSET_CACHE, REPO_ROOT, cdk_json_context, new_app
from infrastructure.assets import BuiltAssets, glue_artifacts, lambda_code
from infrastructure.stage import OdpStage
from odp.contracts.job_kinds import JOB_KINDS, JobDeployment, JobKind, JobUnit
from odp.operations.canary import canary_jobs
from tests.support.throwaway_job import TableAuditArgs


def _static_arguments(deployment: JobDeployment, unit: JobUnit) -> dict[str, str]:
    return TableAuditArgs.static_arguments(environment=deployment.environment, raw_root=deployment.roots.raw)


TABLE_AUDIT = JobKind(
    name="table_audit",
    title="table audit",
    contract=TableAuditArgs,
    entry_module="tests.support.throwaway_job",
    static_arguments=_static_arguments,
    canary_arguments={},
)


def test_a_registered_job_kind_is_deployed_canaried_and_audited(config) -> None:
    kinds = (*JOB_KINDS, TABLE_AUDIT)
    app = new_app(context=cdk_json_context())
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assets = BuiltAssets(lambda_code(REPO_ROOT, ASSET_CACHE), glue_artifacts(REPO_ROOT, ASSET_CACHE))
    stage = OdpStage(app, "odp-dev", name="dev", config=config, assets=assets, kinds=kinds)
    app.synth()  # cdk-nag: an unacknowledged finding of the new kind's role or job raises here

    template = Template.from_stack(stage.data_lake)
    template.has_resource_properties(
        "AWS::Glue::Job",
        Match.object_like(
            {
                "Name": "odp-dev-table-audit",
                "Command": Match.object_like({"Name": "glueetl", "ScriptLocation": Match.any_value()}),
                "DefaultArguments": Match.object_like(
                    {"--odp_environment": "dev", "--odp_raw_root": Match.any_value(), "--datalake-formats": "hudi"}
                ),
            }
        ),
    )
    template.has_resource_properties("AWS::Glue::SecurityConfiguration", {"Name": "odp-dev-table-audit"})
    # its failed runs alert like the File Processor's
    template.has_resource_properties(
        "AWS::Events::Rule",
        Match.object_like(
            {
                "Name": "odp-dev-glue-job-failed",
                "EventPattern": Match.object_like(
                    {"detail": Match.object_like({"jobName": Match.array_with(["odp-dev-table-audit"])})}
                ),
            }
        ),
    )
    assert "odp-dev-table-audit" in [job.name for job in canary_jobs(config, "dev", kinds)]
    assert "odp-dev-table-audit" not in [job.name for job in canary_jobs(config, "dev")]  # the registry as shipped

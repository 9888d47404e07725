"""Ordering as a test (tests/support/ordering.py): in every synthesized template (each environment, the
pipelines, the two-stream stage), each property whose target must exist at creation refers to it, or the
resource depends on it. A deliberately bad stack shows that a literal fails, naming resource and property."""

from __future__ import annotations

import copy

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_athena as athena
from aws_cdk import aws_glue as glue
from aws_cdk.assertions import Template

from tests.support.ordering import ordering_problems


def test_every_template_of_the_app_is_ordered(synthesized) -> None:
    problems = [p for path, template in synthesized.templates.items() for p in ordering_problems(template, path)]
    assert problems == []


def test_the_two_stream_stage_is_ordered(streaming_stage) -> None:
    assert ordering_problems(streaming_stage.template, "streaming stage") == []


def _bad_stack(*, depend: bool, reference: bool) -> dict:
    stack = Stack(App(), "Bad")
    workgroup = athena.CfnWorkGroup(stack, "WorkGroup", name="odp-x")
    query = athena.CfnNamedQuery(
        stack,
        "Query",
        database="db",
        query_string="SELECT 1",
        work_group=workgroup.ref if reference else "odp-x",
    )
    security = glue.CfnSecurityConfiguration(
        stack,
        "Security",
        name="odp-x-jobs",
        encryption_configuration=glue.CfnSecurityConfiguration.EncryptionConfigurationProperty(),
    )
    job = glue.CfnJob(
        stack,
        "Job",
        role="arn:aws:iam::111111111111:role/x",
        command=glue.CfnJob.JobCommandProperty(name="glueetl", script_location="s3://b/k"),
        security_configuration=security.ref if reference else "odp-x-jobs",
    )
    if depend:
        query.add_dependency(workgroup)
        job.add_dependency(security)
    return Template.from_stack(stack).to_json()


def test_a_literal_without_dependency_fails_naming_resource_and_property() -> None:
    problems = ordering_problems(_bad_stack(depend=False, reference=False), "Bad")
    assert any("Query" in p and "AWS::Athena::NamedQuery) WorkGroup = 'odp-x'" in p for p in problems), problems
    assert any("Job" in p and "SecurityConfiguration = 'odp-x-jobs'" in p for p in problems), problems
    # the job's role is a literal ARN of a role outside the template: also reported
    assert any("Job" in p and ") Role = " in p for p in problems), problems


@pytest.mark.parametrize(("depend", "reference"), [(True, False), (False, True)], ids=["depends-on", "ref"])
def test_a_dependency_or_a_reference_orders_the_target(depend: bool, reference: bool) -> None:
    problems = ordering_problems(_bad_stack(depend=depend, reference=reference), "Bad")
    assert [p for p in problems if "WorkGroup" in p or "SecurityConfiguration" in p] == []


def test_the_lake_formation_stage_is_ordered(lake_formation_template) -> None:
    assert ordering_problems(lake_formation_template, "lake formation stage") == []


def test_a_lake_formation_grant_without_its_database_dependency_fails(lake_formation_template) -> None:
    bad = copy.deepcopy(lake_formation_template)
    for resource in bad["Resources"].values():
        if resource["Type"].startswith("AWS::LakeFormation::"):
            resource.pop("DependsOn", None)
    problems = ordering_problems(bad, "bad")
    # (no grant names one table or a data cells filter any more: python -m odp lake-grants applies those)
    assert any("PrincipalPermissions) Resource.Table.DatabaseName = 'shop_raw'" in p for p in problems), problems
    assert any("PrincipalPermissions) Resource.Database.Name = 'shop_raw'" in p for p in problems), problems
    assert any("PrincipalPermissions) Resource.LFTagPolicy.Expression.TagKey = 'zone'" in p for p in problems), problems
    assert any("TagAssociation) LFTags.TagKey = 'zone'" in p for p in problems), problems

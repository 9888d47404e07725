"""Lake Formation as configuration (infrastructure/access/lake_formation.py): the grants of the synthesized template
follow config/access.yaml (tests/support/lake_formation_stage.py: a column exclude, an include with a row
filter, a database grant, a tag grant, two views), and the construct alone passes cdk-nag on a bare stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from infrastructure.access.catalog import Catalog, CatalogProps
from infrastructure.access.lake_formation import (
    DEFAULT_BYTES_SCANNED_CUTOFF,
    JobCatalogAccess,
    LakeFormation,
    LakeFormationProps,
    admin_parameter_name,
    cfn_exec_role_arn,
    shared_lake_formation,
)
from infrastructure.foundation.storage import RetentionSettings, Storage, StorageProps
from odp.config.access import plan_grants
from odp.config.loader import load_config
from odp.config.views import check_views
from tests.support.bare_stack import ACCOUNT, assert_nag_clean, bare_stack
from tests.support.lake_formation_stage import write_config
from tests.support.synth import cfn_lint_problems

ANALYST = f"arn:aws:iam::{ACCOUNT}:role/odp-analyst"
AUDITOR = f"arn:aws:iam::{ACCOUNT}:role/odp-auditor"
BI_ROLE = f"arn:aws:iam::{ACCOUNT}:role/odp-bi"


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}


def _grants(template: dict[str, Any], principal: Any) -> list[dict[str, Any]]:
    return [
        r["Properties"]
        for r in _of_type(template, "AWS::LakeFormation::PrincipalPermissions").values()
        if r["Properties"]["Principal"]["DataLakePrincipalIdentifier"] == principal
    ]


def _named_tables(grant: dict[str, Any]) -> set[tuple[str, str]]:
    """(database, table) a grant names; ``*`` for a table wildcard."""
    resource = grant["Resource"]
    for kind, name_key in (("Table", "Name"), ("TableWithColumns", "Name"), ("DataCellsFilter", "TableName")):
        if kind in resource:
            item = resource[kind]
            return {(item["DatabaseName"], item.get(name_key, "*"))}
    return set()


def test_a_consumer_gets_no_table_the_file_does_not_name(lake_formation_template) -> None:
    grants = _grants(lake_formation_template, ANALYST)
    named = set().union(*(_named_tables(g) for g in grants))
    # invoices; orders is MERGE_ON_READ: both catalog tables; never secrets, never a wildcard, no database grant.
    assert named == {("shop_raw", "invoices"), ("shop_raw", "orders_ro"), ("shop_raw", "orders_rt")}
    assert all(set(g["Resource"]) <= {"TableWithColumns", "DataCellsFilter"} for g in grants), grants
    assert all(g["Permissions"] == ["SELECT"] and g["PermissionsWithGrantOption"] == [] for g in grants)
    # every principal of the template is a consumer of the file or a job role (a GetAtt of a role here)
    principals = {
        str(r["Properties"]["Principal"]["DataLakePrincipalIdentifier"])
        for r in _of_type(lake_formation_template, "AWS::LakeFormation::PrincipalPermissions").values()
        if isinstance(r["Properties"]["Principal"]["DataLakePrincipalIdentifier"], str)
    }
    assert principals == {ANALYST, AUDITOR, BI_ROLE}


def test_an_excluded_column_is_excluded(lake_formation_template) -> None:
    (invoices,) = [g for g in _grants(lake_formation_template, ANALYST) if "TableWithColumns" in g["Resource"]]
    assert invoices["Resource"]["TableWithColumns"] == {
        "CatalogId": ACCOUNT,
        "DatabaseName": "shop_raw",
        "Name": "invoices",
        "ColumnWildcard": {"ExcludedColumnNames": ["card_number"]},
    }


def test_a_row_filter_is_a_data_cells_filter_granted_to_its_consumer(lake_formation_template) -> None:
    filters = {
        r["Properties"]["Name"]: r["Properties"]
        for r in _of_type(lake_formation_template, "AWS::LakeFormation::DataCellsFilter").values()
    }
    assert set(filters) == {"odp_analysts_orders_ro_1", "odp_analysts_orders_rt_1"}
    for name, table in (("odp_analysts_orders_ro_1", "orders_ro"), ("odp_analysts_orders_rt_1", "orders_rt")):
        assert filters[name]["TableName"] == table
        assert filters[name]["RowFilter"] == {"FilterExpression": "region = 'eu'"}
        assert filters[name]["ColumnNames"] == ["id", "region", "amount"]
    granted = {
        g["Resource"]["DataCellsFilter"]["Name"]
        for g in _grants(lake_formation_template, ANALYST)
        if "DataCellsFilter" in g["Resource"]
    }
    assert granted == set(filters)


def test_database_and_tag_grants(lake_formation_template) -> None:
    auditor = {next(iter(g["Resource"])): g for g in _grants(lake_formation_template, AUDITOR)}
    assert auditor["Database"]["Permissions"] == ["DESCRIBE"]
    assert auditor["Table"]["Resource"]["Table"]["TableWildcard"] == {}
    (bi,) = _grants(lake_formation_template, BI_ROLE)
    assert bi["Resource"]["LFTagPolicy"]["Expression"] == [
        {"TagKey": "zone", "TagValues": ["purpose_built"]},
        {"TagKey": "sensitivity", "TagValues": ["public"]},
    ]
    tags = {
        r["Properties"]["TagKey"]: r["Properties"]["TagValues"]
        for r in _of_type(lake_formation_template, "AWS::LakeFormation::Tag").values()
    }
    assert tags == {
        "zone": ["raw", "conformed", "purpose_built"],
        "sensitivity": ["public", "internal", "confidential"],
    }
    (association,) = _of_type(lake_formation_template, "AWS::LakeFormation::TagAssociation").values()
    assert association["Properties"]["Resource"] == {"Database": {"CatalogId": ACCOUNT, "Name": "shop_raw"}}
    pairs = {p["TagKey"]: p["TagValues"] for p in association["Properties"]["LFTags"]}
    assert pairs == {"zone": ["raw"], "sensitivity": ["confidential"]}


def test_locations_are_registered_in_hybrid_access_mode(lake_formation_template) -> None:
    locations = _of_type(lake_formation_template, "AWS::LakeFormation::Resource")
    buckets = _of_type(lake_formation_template, "AWS::S3::Bucket")
    registered = {r["Properties"]["ResourceArn"]["Fn::GetAtt"][0] for r in locations.values()}
    names = {buckets[b]["Properties"]["BucketName"] for b in registered}
    assert names == {f"odp-dev-{zone}-{ACCOUNT}-eu-west-1" for zone in ("raw", "conformed", "purpose-built")}
    for location in locations.values():
        assert location["Properties"]["HybridAccessEnabled"] is True
        assert location["Properties"]["UseServiceLinkedRole"] is False
        assert "Fn::GetAtt" in location["Properties"]["RoleArn"]


def test_job_roles_get_data_location_access_and_consumers_do_not(lake_formation_template) -> None:
    roles = _of_type(lake_formation_template, "AWS::IAM::Role")
    locations = [
        r
        for r in _of_type(lake_formation_template, "AWS::LakeFormation::PrincipalPermissions").values()
        if "DataLocation" in r["Properties"]["Resource"]
    ]
    holders = {r["Properties"]["Principal"]["DataLakePrincipalIdentifier"]["Fn::GetAtt"][0] for r in locations}
    assert holders
    assert holders <= set(roles)
    glue_roles = {
        k for k, r in roles.items() if "glue.amazonaws.com" in str(r["Properties"]["AssumeRolePolicyDocument"])
    }
    assert holders == glue_roles  # the job roles (here the File Processor's), and nobody else
    assert all(r["Properties"]["Permissions"] == ["DATA_LOCATION_ACCESS"] for r in locations)
    assert len(locations) == 3 * len(holders)  # every job role, each of raw, conformed, purpose-built


def test_job_roles_may_sync_the_catalog_of_their_databases(lake_formation_template) -> None:
    template = Template.from_json(lake_formation_template)
    template.has_resource_properties(
        "AWS::LakeFormation::PrincipalPermissions",
        {
            "Principal": {"DataLakePrincipalIdentifier": {"Fn::GetAtt": Match.any_value()}},
            "Resource": {"Database": {"CatalogId": ACCOUNT, "Name": "shop_raw"}},
            "Permissions": ["CREATE_TABLE", "ALTER", "DESCRIBE"],
        },
    )
    template.has_resource_properties(
        "AWS::LakeFormation::PrincipalPermissions",
        {
            "Principal": {"DataLakePrincipalIdentifier": {"Fn::GetAtt": Match.any_value()}},
            "Resource": {"Table": {"CatalogId": ACCOUNT, "DatabaseName": "shop_raw", "TableWildcard": {}}},
            "Permissions": ["ALL"],
        },
    )
    # Glue asks Lake Formation for the registered locations' credentials
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Sid": "LakeFormationDataAccess", "Action": "lakeformation:GetDataAccess"})]
                )
            }
        },
    )


def test_views_are_virtual_view_tables(lake_formation_template) -> None:
    views = {
        r["Properties"]["TableInput"]["Name"]: r for r in _of_type(lake_formation_template, "AWS::Glue::Table").values()
    }
    assert set(views) == {"invoice_totals", "eu_orders"}
    for view in views.values():
        assert view["Properties"]["DatabaseName"] == "shop_raw"
        assert view["Properties"]["TableInput"]["TableType"] == "VIRTUAL_VIEW"
        assert view["Properties"]["TableInput"]["ViewOriginalText"].startswith("/* Presto View: ")
    columns = views["invoice_totals"]["Properties"]["TableInput"]["StorageDescriptor"]["Columns"]
    assert columns == [{"Name": "customer", "Type": "string"}, {"Name": "total", "Type": "decimal(18,2)"}]


def test_the_bi_workgroup_is_apart_from_the_operators(lake_formation_template) -> None:
    workgroups = {
        r["Properties"]["Name"]: r["Properties"]
        for r in _of_type(lake_formation_template, "AWS::Athena::WorkGroup").values()
    }
    assert set(workgroups) == {"odp-dev", "odp-dev-bi"}
    bi = workgroups["odp-dev-bi"]["WorkGroupConfiguration"]
    assert bi["EnforceWorkGroupConfiguration"] is True
    assert bi["BytesScannedCutoffPerQuery"] == DEFAULT_BYTES_SCANNED_CUTOFF
    assert bi["ResultConfiguration"]["EncryptionConfiguration"]["EncryptionOption"] == "SSE_KMS"
    assert "Fn::GetAtt" in bi["ResultConfiguration"]["EncryptionConfiguration"]["KmsKey"]
    assert bi["ResultConfiguration"]["OutputLocation"]["Fn::Join"][1][-1] == "/bi/"
    assert "BytesScannedCutoffPerQuery" not in workgroups["odp-dev"]["WorkGroupConfiguration"]


def test_the_stack_refuses_to_deploy_without_the_bootstrap_step(lake_formation_template) -> None:
    (parameter,) = [
        p for k, p in lake_formation_template["Parameters"].items() if k.startswith("LakeFormationLakeFormationAdmin")
    ]
    assert parameter["Type"] == "AWS::SSM::Parameter::Value<String>"
    assert parameter["Default"] == admin_parameter_name("dev") == "/odp-dev/lake-formation-admin"
    (rule,) = [
        r for k, r in lake_formation_template["Rules"].items() if k.startswith("LakeFormationLakeFormationAdminRule")
    ]
    (assertion,) = rule["Assertions"]
    assert (
        assertion["Assert"]["Fn::Equals"][1]
        == f"arn:aws:iam::{ACCOUNT}:role/cdk-hnb659fds-cfn-exec-role-{ACCOUNT}-eu-west-1"
    )
    assert "Lake Formation bootstrap missing" in assertion["AssertDescription"]
    assert "/odp-dev/lake-formation-admin" in assertion["AssertDescription"]


def test_cfn_exec_role_arn_follows_the_partition() -> None:
    assert cfn_exec_role_arn("1", "cn-north-1").startswith(
        "arn:aws-cn:iam::1:role/cdk-hnb659fds-cfn-exec-role-1-cn-north-1"
    )


@pytest.fixture(scope="module")
def lf_config(tmp_path_factory):
    root = tmp_path_factory.mktemp("lf-bare-config")
    write_config(root)
    config = load_config(root)
    views, issues = check_views(root, config)
    assert issues == []
    return config, views


def test_the_construct_alone_passes_cdk_nag(tmp_path: Path, lf_config) -> None:
    config, views = lf_config
    app, stack = bare_stack(tmp_path)
    storage = Storage(stack, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30)))
    catalog = Catalog(stack, "Catalog", CatalogProps(tables=config.tables, zone_buckets=storage.buckets))
    role = iam.Role(stack, "JobRole", assumed_by=iam.ServicePrincipal("glue.amazonaws.com"))
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account=ACCOUNT)
    LakeFormation(
        stack,
        "LakeFormation",
        LakeFormationProps(
            environment="x",
            plan=plan,
            databases=catalog.databases,
            zone_buckets=storage.buckets,
            zone_keys=storage.keys,
            jobs=[JobCatalogAccess(role, ["shop_raw"])],
            results_bucket=storage.athena_results,
            results_key=storage.state_key,
            views=views,
        ),
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::LakeFormation::Resource", 3)
    template.resource_count_is("AWS::LakeFormation::DataCellsFilter", 2)
    template.resource_count_is("AWS::Glue::Table", 2)
    assert_nag_clean(app)


def test_a_database_outside_the_catalog_is_refused(tmp_path: Path, lf_config) -> None:
    config, _ = lf_config
    _, stack = bare_stack(tmp_path)
    storage = Storage(stack, "Storage", StorageProps(environment="x", retention=RetentionSettings(7, 30)))
    role = iam.Role(stack, "JobRole", assumed_by=iam.ServicePrincipal("glue.amazonaws.com"))
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account=ACCOUNT)
    props = LakeFormationProps(
        environment="x",
        plan=plan,
        databases={},
        zone_buckets=storage.buckets,
        zone_keys=storage.keys,
        jobs=[JobCatalogAccess(role, ["shop_raw"])],
        results_bucket=storage.athena_results,
        results_key=storage.state_key,
    )
    with pytest.raises(ValueError, match="not in the catalog") as refused:
        LakeFormation(stack, "LakeFormation", props)
    assert str(refused.value) == (
        "Lake Formation: database 'shop_raw' is not in the catalog (known: ): Catalog creates the tables' databases "
        "and <source>_conformed / <source>_purpose_built; name a dataset's database so"
    )


def test_cfn_lint_finds_no_error_in_the_lake_formation_stage(lake_formation_template, tmp_path: Path) -> None:
    assert cfn_lint_problems(lake_formation_template, tmp_path) == []


def test_two_environments_with_consumers_in_one_account_are_refused(lf_config) -> None:
    config, _ = lf_config
    dev = config.environments.environments["dev"]
    both = {"dev": dev, "test": dev.model_copy(update={"branch": None})}
    assert shared_lake_formation(both, config.access) == [
        f"Lake Formation: environments dev and test share account {ACCOUNT} in eu-west-1 and both have consumers "
        "(access.yaml): LF-Tags are per account and region; restrict the consumers with environments"
    ]
    elsewhere = {"dev": dev, "test": dev.model_copy(update={"account": "222222222222"})}
    assert shared_lake_formation(elsewhere, config.access) == []
    only_dev = config.access.model_copy(
        update={
            "consumers": {k: c.model_copy(update={"environments": ["dev"]}) for k, c in config.access.consumers.items()}
        }
    )
    assert shared_lake_formation(both, only_dev) == []

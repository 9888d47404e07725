"""Lake Formation as configuration (infrastructure/access/lake_formation.py): the grants of the synthesized template
follow config/access.yaml (tests/support/lake_formation_stage.py: a column exclude, an include with a row
filter, a database grant, a tag grant, two views), and the construct alone passes cdk-nag on a bare stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lakeformation as lakeformation
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
from infrastructure.access.table_references import check_table_references, tables_named_before_they_exist
from infrastructure.foundation.storage import RetentionSettings, Storage, StorageProps
from odp.config.access import plan_grants
from odp.config.loader import load_config
from odp.config.views import check_views
from odp.operations.lake_grants import filter_definition, grant_request
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


def _plan(lf_config):
    config, _ = lf_config
    return plan_grants(config.access, config.tables, config.datasets, environment="dev", account=ACCOUNT)


def test_a_consumer_gets_no_table_the_file_does_not_name(lake_formation_template, lf_config) -> None:
    # The analysts' grants name tables the first run creates: none is in the stack; python -m odp lake-grants
    # applies exactly these (invoices; orders is MERGE_ON_READ: both catalog tables; never secrets, no wildcard).
    assert _grants(lake_formation_template, ANALYST) == []
    requests = [grant_request(g, ACCOUNT) for g in _plan(lf_config).grants_of("analysts")]
    named = {
        (item["DatabaseName"], item.get("TableName", item.get("Name")))  # a filter's Name is the filter's
        for r in requests
        for item in r["Resource"].values()
    }
    assert named == {("shop_raw", "invoices"), ("shop_raw", "orders_ro"), ("shop_raw", "orders_rt")}
    assert all(set(r["Resource"]) <= {"TableWithColumns", "DataCellsFilter"} for r in requests)
    assert all(r["Permissions"] == ["SELECT"] and r["PermissionsWithGrantOption"] == [] for r in requests)
    # every principal of the template is a consumer of the file or a role of the stack (a GetAtt of a role here)
    principals = {
        str(r["Properties"]["Principal"]["DataLakePrincipalIdentifier"])
        for r in _of_type(lake_formation_template, "AWS::LakeFormation::PrincipalPermissions").values()
        if isinstance(r["Properties"]["Principal"]["DataLakePrincipalIdentifier"], str)
    }
    assert principals == {AUDITOR, BI_ROLE}


def test_an_excluded_column_is_excluded(lf_config) -> None:
    (invoices,) = [g for g in _plan(lf_config).grants_of("analysts") if g.table == ("shop_raw", "invoices")]
    assert grant_request(invoices, ACCOUNT)["Resource"]["TableWithColumns"] == {
        "CatalogId": ACCOUNT,
        "DatabaseName": "shop_raw",
        "Name": "invoices",
        "ColumnWildcard": {"ExcludedColumnNames": ["card_number"]},
    }


def test_a_row_filter_is_a_data_cells_filter_granted_to_its_consumer(lake_formation_template, lf_config) -> None:
    assert _of_type(lake_formation_template, "AWS::LakeFormation::DataCellsFilter") == {}  # applied after the run
    plan = _plan(lf_config)
    filters = {f.name: filter_definition(f, ACCOUNT) for f in plan.filters}
    assert set(filters) == {"odp_analysts_orders_ro_1", "odp_analysts_orders_rt_1"}
    for name, table in (("odp_analysts_orders_ro_1", "orders_ro"), ("odp_analysts_orders_rt_1", "orders_rt")):
        assert filters[name]["TableName"] == table
        assert filters[name]["RowFilter"] == {"FilterExpression": "region = 'eu'"}
        assert filters[name]["ColumnNames"] == ["id", "region", "amount"]
    granted = {
        r["Resource"]["DataCellsFilter"]["Name"]
        for r in (grant_request(g, ACCOUNT) for g in plan.grants_of("analysts"))
        if "DataCellsFilter" in r["Resource"]
    }
    assert granted == set(filters)


def test_no_lake_formation_resource_names_a_table_the_stack_does_not_create(lake_formation_template) -> None:
    """Issue 48 item 1: before, the analysts' two data cells filters and their three grants named shop_raw.invoices
    and orders_ro / orders_rt, which only the first run creates (CloudFormation would roll the stack back)."""
    resources = lake_formation_template["Resources"]
    assert tables_named_before_they_exist(resources) == []
    for resource in _of_type(lake_formation_template, "AWS::LakeFormation::PrincipalPermissions").values():
        granted = resource["Properties"]["Resource"]
        assert not {"TableWithColumns", "DataCellsFilter"} & set(granted), granted
        assert "Name" not in granted.get("Table", {}), granted  # only TableWildcard: every table, later ones too


def test_the_config_loader_may_grant_exactly_the_tables_access_yaml_names(lake_formation_template) -> None:
    roles = _of_type(lake_formation_template, "AWS::IAM::Role")
    (loader,) = [k for k, r in roles.items() if r["Properties"].get("RoleName") == "odp-dev-config-loader"]
    held = [
        r["Properties"]
        for r in _of_type(lake_formation_template, "AWS::LakeFormation::PrincipalPermissions").values()
        if r["Properties"]["Principal"]["DataLakePrincipalIdentifier"] == {"Fn::GetAtt": [loader, "Arn"]}
    ]
    # Lake Formation: grant option on every table of shop_raw (the only database a table grant names)
    assert held == [
        {
            "Catalog": ACCOUNT,
            "Principal": {"DataLakePrincipalIdentifier": {"Fn::GetAtt": [loader, "Arn"]}},
            "Resource": {"Table": {"CatalogId": ACCOUNT, "DatabaseName": "shop_raw", "TableWildcard": {}}},
            "Permissions": ["SELECT", "DESCRIBE"],
            "PermissionsWithGrantOption": ["SELECT", "DESCRIBE"],
        }
    ]
    statements = {
        s.get("Sid"): s
        for r in _of_type(lake_formation_template, "AWS::IAM::Policy").values()
        if {"Ref": loader} in r["Properties"]["Roles"]
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    }
    catalog = f"arn:aws:glue:eu-west-1:{ACCOUNT}"
    assert statements["LakeGrantsReadTables"]["Action"] == "glue:GetTable"
    assert sorted(_text(r) for r in statements["LakeGrantsReadTables"]["Resource"]) == [
        f"{catalog}:catalog",
        f"{catalog}:database/shop_raw",
        f"{catalog}:table/shop_raw/invoices",
        f"{catalog}:table/shop_raw/orders_ro",
        f"{catalog}:table/shop_raw/orders_rt",
    ]
    assert sorted(statements["LakeGrantsApply"]["Action"]) == [
        "lakeformation:CreateDataCellsFilter",
        "lakeformation:GetDataCellsFilter",
        "lakeformation:GrantPermissions",
        "lakeformation:UpdateDataCellsFilter",
    ]
    assert statements["LakeGrantsApply"]["Resource"] == "*"


def _text(value: Any) -> str:
    """An ARN of the template as text (``Fn::Join`` joined, the partition ``aws``)."""
    if isinstance(value, str):
        return value
    if value == {"Ref": "AWS::Partition"}:
        return "aws"
    separator, parts = value["Fn::Join"]
    return separator.join(_text(part) for part in parts)


def test_synth_refuses_a_lake_formation_resource_on_a_table_the_stack_does_not_create(tmp_path: Path) -> None:
    """The check (infrastructure/access/table_references.py) on a small stack: a grant on a missing table and a data
    cells filter fail the synth, each named; a grant on a table the stack creates (a view) and a TableWildcard pass."""
    app, stack = bare_stack(tmp_path)
    p = lakeformation.CfnPrincipalPermissions

    def grant(construct_id: str, table: p.TableResourceProperty) -> None:
        p(
            stack,
            construct_id,
            principal=p.DataLakePrincipalProperty(data_lake_principal_identifier=ANALYST),
            resource=p.ResourceProperty(table=table),
            permissions=["SELECT"],
            permissions_with_grant_option=[],
        )

    glue.CfnTable(
        stack,
        "View",
        catalog_id=ACCOUNT,
        database_name="shop_raw",
        table_input=glue.CfnTable.TableInputProperty(name="totals"),
    )
    grant("OnView", p.TableResourceProperty(catalog_id=ACCOUNT, database_name="shop_raw", name="totals"))
    grant("Everything", p.TableResourceProperty(catalog_id=ACCOUNT, database_name="shop_raw", table_wildcard={}))
    grant("OnInvoices", p.TableResourceProperty(catalog_id=ACCOUNT, database_name="shop_raw", name="invoices"))
    lakeformation.CfnDataCellsFilter(
        stack,
        "Rows",
        table_catalog_id=ACCOUNT,
        database_name="shop_raw",
        table_name="orders",
        name="f",
        row_filter=lakeformation.CfnDataCellsFilter.RowFilterProperty(all_rows_wildcard={}),
    )
    check_table_references(stack)
    with pytest.raises(RuntimeError, match="Validation failed") as refused:
        app.synth()
    message = str(refused.value)
    assert (
        "[S/OnInvoices] OnInvoices (AWS::LakeFormation::PrincipalPermissions) names table shop_raw.invoices, "
        "which this stack does not create: CloudFormation fails on a missing table" in message
    )
    assert "[S/Rows] Rows (AWS::LakeFormation::DataCellsFilter) names table shop_raw.orders" in message
    assert "totals" not in message
    assert "Everything" not in message


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
    applier = iam.Role(stack, "Applier", assumed_by=iam.AccountRootPrincipal())
    plan = plan_grants(config.access, config.tables, config.datasets, environment="dev", account=ACCOUNT)
    lake_formation = LakeFormation(
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
    lake_formation.grant_table_grants(applier)  # the IAM5 finding of its Lake Formation actions, acknowledged
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::LakeFormation::Resource", 3)
    template.resource_count_is("AWS::LakeFormation::DataCellsFilter", 0)  # python -m odp lake-grants creates them
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

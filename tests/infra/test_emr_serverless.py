"""A stage with one cadence on EMR Serverless (tests/support/emr_stage.py), synthesized with cdk-nag: the
application (release, capacity, the Glue jobs' network, encrypted logs), its execution role, the failure alert, the
cadence's state machine starting emr-serverless:startJobRun.sync with the contract, and its role; cfn-lint and the
ordering check over the template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infrastructure.jobs.engines.emr_serverless import HUDI_BUNDLE, PYTHON, RELEASE_LABEL, spark_parameters
from odp.contracts.state_machines import FileProcessorOnEmrServerless, FileProcessorOnGlue
from odp.naming import state_machine_name
from tests.support.emr_stage import EMR_CADENCE, GLUE_CADENCE
from tests.support.ordering import ordering_problems
from tests.support.streaming_stage import StreamingStage


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _statements(template: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [
        statement
        for policy in _resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.fixture(scope="module")
def template(emr_stage: StreamingStage) -> dict[str, Any]:
    return emr_stage.template


@pytest.fixture(scope="module")
def application(template) -> tuple[str, dict[str, Any]]:
    (logical, resource), *others = _resources(template, "AWS::EMRServerless::Application").items()
    assert others == []
    return logical, resource["Properties"]


def _machine(template: dict[str, Any], cadence: str) -> dict[str, Any]:
    return next(
        r["Properties"]
        for r in _resources(template, "AWS::StepFunctions::StateMachine").values()
        if r["Properties"]["StateMachineName"] == state_machine_name("dev", cadence)
    )


def test_the_application_runs_spark_3_5_with_hudi_1_0_2_in_the_glue_jobs_network(template, application) -> None:
    _, props = application
    assert props["ReleaseLabel"] == RELEASE_LABEL == "emr-7.12.0"
    assert props["Type"] == "Spark"
    assert props["AutoStartConfiguration"] == {"Enabled": True}
    assert props["AutoStopConfiguration"] == {"Enabled": True, "IdleTimeoutMinutes": 15}
    assert {c["Key"] for c in props["InitialCapacity"]} == {"Driver", "Executor"}
    assert props["MaximumCapacity"]["Cpu"] == "64 vCPU"
    connections = [
        c["Properties"]["ConnectionInput"]["PhysicalConnectionRequirements"]
        for c in _resources(template, "AWS::Glue::Connection").values()
    ]
    assert props["NetworkConfiguration"]["SubnetIds"] == [c["SubnetId"] for c in connections]
    assert props["NetworkConfiguration"]["SecurityGroupIds"] == connections[0]["SecurityGroupIdList"]
    logging = props["MonitoringConfiguration"]["CloudWatchLoggingConfiguration"]
    assert logging["Enabled"] is True
    assert "Fn::GetAtt" in logging["EncryptionKeyArn"]
    group = _resources(template, "AWS::Logs::LogGroup")[logging["LogGroupName"]["Ref"]]["Properties"]
    assert group["LogGroupName"] == "/aws/emr-serverless/odp-dev"
    assert "KmsKeyId" in group


def test_a_failed_job_run_of_the_application_alerts(template, application) -> None:
    logical, _ = application
    rule = next(
        r["Properties"]
        for r in _resources(template, "AWS::Events::Rule").values()
        if r["Properties"]["EventPattern"].get("source") == ["aws.emr-serverless"]
    )
    assert rule["EventPattern"]["detail-type"] == ["EMR Serverless Job Run State Change"]
    assert rule["EventPattern"]["detail"] == {
        "applicationId": [{"Fn::GetAtt": [logical, "ApplicationId"]}],
        "state": ["FAILED"],
    }
    topics = _resources(template, "AWS::SNS::Topic")
    assert rule["Targets"][0]["Arn"]["Ref"] in topics


def test_the_execution_role_has_the_file_processor_grants_and_nothing_of_glue(template, application) -> None:
    logical, _ = application
    role_logical, role = next(
        (k, r)
        for k, r in _resources(template, "AWS::IAM::Role").items()
        if "emr-serverless.amazonaws.com" in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
    )
    trust = role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": "111111111111"}}
    statements = _statements(template, role_logical)
    by_sid = {s.get("Sid"): s for s in statements}
    assert by_sid["OdpMetrics"]["Condition"] == {"StringEquals": {"cloudwatch:namespace": ["ODP"]}}
    assert "glue:UpdateTable" in by_sid["GlueCatalogSync"]["Action"]
    assert "shop_raw" in json.dumps(by_sid["GlueCatalogSync"]["Resource"])
    assert by_sid["LeaseHolderEmrJobRuns"]["Resource"] == {
        "Fn::Join": ["", [{"Fn::GetAtt": [logical, "Arn"]}, "/jobruns/*"]]
    }
    assert by_sid["LeaseHolderJobRuns"]["Action"] == "glue:GetJobRun"
    text = json.dumps(statements)
    for action in ("dynamodb:PutItem", "s3:PutObject", "s3:DeleteObject", "kms:GenerateDataKey", "logs:PutLogEvents"):
        assert action in text, action
    assert "glue:StartJobRun" not in text
    assert "ec2:CreateNetworkInterface" not in text  # EMR Serverless's service-linked role makes the ENIs


def test_the_emr_cadence_starts_the_entry_point_with_the_contract_and_hudi_on_the_class_path(template) -> None:
    values = _machine(template, EMR_CADENCE)["DefinitionSubstitutions"]
    # the engine fields of stepfunctions/file_processor.emr_serverless.asl.json (odp.contracts.state_machines)
    assert set(values) == set(FileProcessorOnEmrServerless.placeholders())
    parameters = json.dumps(values)
    for expected in (
        "emr/emr_serverless.py",
        "States.Array('file_processor'",
        "'--odp_cadence', '" + EMR_CADENCE + "'",
        "'--odp_table_ids', States.JsonToString($.table_ids)",
        "'--odp_batch_id', $.batch_id",
        "--py-files s3://",
        "glue/file_processor/odp_etl.zip",
        f"spark.driver.extraClassPath={HUDI_BUNDLE}",
        f"spark.executor.extraClassPath={HUDI_BUNDLE}",
    ):
        assert expected in parameters, expected
    assert "spark.jars" not in parameters
    assert set(_machine(template, GLUE_CADENCE)["DefinitionSubstitutions"]) == set(FileProcessorOnGlue.placeholders())


def test_the_emr_cadence_state_machine_may_run_watch_and_cancel_jobs_and_pass_only_the_execution_role(
    template, application
) -> None:
    logical, _ = application
    role = _machine(template, EMR_CADENCE)["RoleArn"]["Fn::GetAtt"][0]
    by_sid = {s.get("Sid"): s for s in _statements(template, role)}
    assert by_sid["RunEmrServerlessJob"]["Action"] == "emr-serverless:StartJobRun"
    assert by_sid["RunEmrServerlessJob"]["Resource"] == {"Fn::GetAtt": [logical, "Arn"]}
    assert sorted(by_sid["WatchEmrServerlessJob"]["Action"]) == [
        "emr-serverless:CancelJobRun",
        "emr-serverless:GetJobRun",
    ]
    passing = by_sid["PassEmrExecutionRole"]
    assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}}
    assert _listed(passing["Resource"])[0]["Fn::GetAtt"][1] == "Arn"
    assert by_sid["EmrServerlessSyncRule"]["Resource"]["Fn::Join"][1][-1].endswith(
        ":rule/StepFunctionsGetEventsForEMRServerlessJobRule"
    )
    assert "RunFileProcessorJob" not in by_sid  # no Glue job run from this cadence
    glue_role = _machine(template, GLUE_CADENCE)["RoleArn"]["Fn::GetAtt"][0]
    assert "RunFileProcessorJob" in {s.get("Sid") for s in _statements(template, glue_role)}


def test_the_emr_stage_is_ordered(template) -> None:
    assert ordering_problems(template, "emr stage") == []


def test_cfn_lint_finds_no_error_in_the_emr_stage(template, tmp_path: Path) -> None:
    from tests.support.synth import cfn_lint_problems

    assert cfn_lint_problems(template, tmp_path) == []


def test_lake_formation_gives_the_execution_role_data_location_access_and_the_catalog_sync(template) -> None:
    role = next(
        k
        for k, r in _resources(template, "AWS::IAM::Role").items()
        if "emr-serverless.amazonaws.com" in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
    )
    granted = [
        p["Properties"]
        for p in _resources(template, "AWS::LakeFormation::PrincipalPermissions").values()
        if p["Properties"]["Principal"]["DataLakePrincipalIdentifier"] == {"Fn::GetAtt": [role, "Arn"]}
    ]
    assert any("DataLocation" in g["Resource"] and g["Permissions"] == ["DATA_LOCATION_ACCESS"] for g in granted)
    assert any(g["Resource"].get("Database", {}).get("Name") == "shop_raw" for g in granted)
    assert any(g["Resource"].get("Table", {}).get("DatabaseName") == "shop_raw" for g in granted)


def _rendered(value: Any) -> str:
    """A template value as text: ``Fn::Join`` joined, ``Ref``/``Fn::GetAtt`` as ``${X}``/``${X.Attr}``."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_rendered(part) for part in parts)
    if "Ref" in value:
        return f"${{{value['Ref']}}}"
    if "Fn::GetAtt" in value:
        return "${" + ".".join(value["Fn::GetAtt"]) + "}"
    return json.dumps(value, sort_keys=True)


def _repository(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    ((logical, resource),) = _resources(template, "AWS::ECR::Repository").items()
    return logical, resource


def test_the_application_runs_odps_image_from_odps_repository(template, application) -> None:
    logical, props = application
    repository, _ = _repository(template)
    uri = _rendered(props["ImageConfiguration"]["ImageUri"])
    assert f"/${{{repository}}}:" in uri  # ODP's repository, not the CDK bootstrap's
    ((copy_id, copy),) = _resources(template, "Custom::CDKECRDeployment").items()
    assert _rendered(copy["Properties"]["DestImage"]) == f"docker://{uri}"  # the copy's destination is the image
    assert "cdk-hnb659fds-container-assets-" in _rendered(copy["Properties"]["SrcImage"])
    assert copy_id in _listed(template["Resources"][logical]["DependsOn"])  # copied before the application


def test_only_the_application_may_pull_from_odps_repository(template, application) -> None:
    logical, _ = application
    repository, resource = _repository(template)
    assert "RepositoryPolicyText" not in resource["Properties"]  # the one policy is the one set below
    ((_, setter),) = _resources(template, "Custom::AWS").items()
    create = json.loads(_rendered(setter["Properties"]["Create"]))
    assert json.loads(_rendered(setter["Properties"]["Update"])) == create
    assert (create["service"], create["action"]) == ("ECR", "setRepositoryPolicy")
    assert create["parameters"]["repositoryName"] == f"${{{repository}}}"
    assert json.loads(create["parameters"]["policyText"])["Statement"] == [
        {
            "Sid": "EmrServerlessCustomImage",
            "Effect": "Allow",
            "Principal": {"Service": "emr-serverless.amazonaws.com"},
            "Action": ["ecr:BatchGetImage", "ecr:DescribeImages", "ecr:GetDownloadUrlForLayer"],
            "Condition": {"StringEquals": {"aws:SourceArn": f"${{{logical}.Arn}}"}},
        }
    ]


def test_odps_repository_is_kms_encrypted_scanned_and_immutable(template) -> None:
    _, resource = _repository(template)
    props = resource["Properties"]
    key = props["EncryptionConfiguration"]["KmsKey"]["Fn::GetAtt"][0]
    assert props["EncryptionConfiguration"]["EncryptionType"] == "KMS"
    assert template["Resources"][key]["Type"] == "AWS::KMS::Key"
    assert template["Resources"][key]["Properties"]["EnableKeyRotation"] is True
    assert props["ImageScanningConfiguration"] == {"ScanOnPush": True}
    assert props["ImageTagMutability"] == "IMMUTABLE"
    assert resource["DeletionPolicy"] == "RetainExceptOnCreate"  # kept, but not by a rolled-back create (decision 028)


def test_job_runs_use_python_3_11_on_the_driver_and_the_executors() -> None:
    parameters = spark_parameters("s3://artifacts/glue/file_processor/odp_etl.zip").split()
    assert f"spark.emr-serverless.driverEnv.PYSPARK_PYTHON={PYTHON}" in parameters
    assert f"spark.executorEnv.PYSPARK_PYTHON={PYTHON}" in parameters
    assert PYTHON == "/usr/bin/python3.11"

"""Glue: one job per cadence with Glue 5.1, the cadence's workers, the ODP contract and Hudi's settings."""

from __future__ import annotations

import json

import pytest

from infrastructure.jobs.glue_job import GLUE_VERSION
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames, file_processor_job_name
from odp.tracker.dataset_history import dataset_job_name


def _jobs(synthesized, env: str) -> dict[str, dict]:
    jobs = synthesized.resources(synthesized.data_lakes[env], "AWS::Glue::Job").values()
    # The dataset job is tested in test_datasets.py.
    return {
        job["Properties"]["Name"]: job["Properties"]
        for job in jobs
        if job["Properties"]["Name"] != dataset_job_name(env)
    }


def _named(synthesized, env: str, reference: dict) -> str:
    """The physical name of the Glue resource a ``Ref`` points to."""
    resource = synthesized.data_lakes[env]["Resources"][reference["Ref"]]["Properties"]
    return resource.get("Name") or resource["ConnectionInput"]["Name"]


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_one_job_per_cadence_sized_from_config(synthesized, config, env) -> None:
    jobs = _jobs(synthesized, env)
    assert set(jobs) == {file_processor_job_name(env, c) for c in config.cadences.cadences}
    for name, cadence in config.cadences.cadences.items():
        job = jobs[file_processor_job_name(env, name)]
        assert job["GlueVersion"] == GLUE_VERSION == "5.1"
        assert job["Command"]["Name"] == "glueetl"
        assert job["WorkerType"] == cadence.worker_type.value
        assert job["NumberOfWorkers"] == cadence.number_of_workers
        # One run beyond the Map concurrency: the post-deploy canary or a manual run never takes a scheduled slot.
        assert job["ExecutionProperty"] == {"MaxConcurrentRuns": cadence.max_concurrency + 1}
        assert job["Timeout"] == cadence.job_timeout_minutes
        # By Ref: CloudFormation creates the security configuration and the connections before the job.
        assert _named(synthesized, env, job["SecurityConfiguration"]) == f"odp-{env}-file-processor"
        assert [_named(synthesized, env, c) for c in job["Connections"]["Connections"]] == [
            f"odp-{env}-vpc",
            f"odp-{env}-vpc-2",
        ]


def test_default_arguments_carry_the_contract_and_hudi(synthesized, config) -> None:
    env = "test"
    names = TrackerTableNames.for_environment(env)
    for name in config.cadences.cadences:
        arguments = _jobs(synthesized, env)[file_processor_job_name(env, name)]["DefaultArguments"]
        parsed = FileProcessorJobArgs.from_arguments({**arguments, "--odp_table_ids": '["a.b.c"]'})
        assert parsed.environment == env
        assert parsed.cadence == name
        assert parsed.tracker_tables == names
        assert parsed.catalog_sync is True
        assert parsed.history_retention_days == config.environments.environments[env].data_retention_days
        cadence = config.cadences.cadences[name]
        assert parsed.table_concurrency == cadence.table_concurrency
        assert parsed.hudi_profile == "glue"  # production settings on the Glue path, never the laptop profile
        assert parsed.job_dpus == cadence.job_dpus > 0
        raw_root = arguments[FileProcessorJobArgs.option("raw_root")]
        assert "Fn::Join" in raw_root  # s3:// + the raw bucket's name
        assert arguments["--datalake-formats"] == "hudi"
        assert arguments["--enable-glue-datacatalog"] == "true"
        conf = arguments["--conf"]
        assert "spark.serializer=org.apache.spark.serializer.KryoSerializer" in conf
        assert "spark.sql.hive.convertMetastoreParquet=false" in conf
        assert "spark.scheduler.mode=FAIR" in conf  # the batch's tables run concurrently, one pool each
        assert arguments["--python-modules-installer-option"] == "--no-index"
        assert str(arguments["--extra-py-files"]).count("odp_etl.zip") == 1
        modules = json.dumps(arguments["--additional-python-modules"])
        assert modules.count(".gluewheels.zip") == 1  # the zip of wheels, one S3 object
        assert ".whl" not in modules
        jars = json.dumps(arguments["--extra-jars"])  # ODP's Hudi extensions (the catalog sync's partition extractor)
        assert jars.count("/glue/file_processor/odp-hudi-extensions.jar") == 1


def test_security_configuration_encrypts_s3_logs_and_bookmarks(synthesized) -> None:
    configs = synthesized.resources(synthesized.data_lakes["prod"], "AWS::Glue::SecurityConfiguration").values()
    # The datasets job has its own (test_datasets.py).
    (security,) = [c for c in configs if c["Properties"]["Name"] == "odp-prod-file-processor"]
    encryption = security["Properties"]["EncryptionConfiguration"]
    assert encryption["S3Encryptions"][0]["S3EncryptionMode"] == "SSE-KMS"
    assert encryption["CloudWatchEncryption"]["CloudWatchEncryptionMode"] == "SSE-KMS"
    assert encryption["JobBookmarksEncryption"]["JobBookmarksEncryptionMode"] == "CSE-KMS"
    for part in ("S3Encryptions", "CloudWatchEncryption", "JobBookmarksEncryption"):
        value = encryption[part][0] if part == "S3Encryptions" else encryption[part]
        assert "Fn::GetAtt" in value["KmsKeyArn"]


def test_network_connection_and_databases(synthesized, config) -> None:
    template = synthesized.data_lakes["dev"]
    connections = synthesized.resources(template, "AWS::Glue::Connection").values()
    assert [c["Properties"]["ConnectionInput"]["ConnectionType"] for c in connections] == ["NETWORK", "NETWORK"]
    databases = {
        d["Properties"]["DatabaseInput"]["Name"]
        for d in synthesized.resources(template, "AWS::Glue::Database").values()
    }
    for table in config.tables:
        assert table.database in databases
        assert f"{table.source.lower()}_conformed" in databases
        assert f"{table.source.lower()}_purpose_built" in databases


def test_catalog_grant_names_each_configured_database(synthesized, config) -> None:
    from infrastructure.jobs.job_role import catalog_database_suffixes

    assert catalog_database_suffixes(["b", "a", "b"]) == [
        "database/a",
        "database/b",
        "database/default",
        "table/a/*",
        "table/b/*",
    ]
    template = json.dumps(synthesized.data_lakes["dev"])
    assert ":database/*" not in template
    assert ":table/*" not in template
    for table in config.tables:
        assert f":table/{table.database}/*" in template


def test_job_roles_may_delete_only_the_canary_tables_of_their_databases(synthesized, config) -> None:
    """Issue 48, item 8: the post-deploy canary removes its own table's catalog entries (etl/jobs/canary_table.py);
    no other table of the catalog can be deleted by a job role."""
    from infrastructure.jobs.job_role import canary_table_suffixes

    assert canary_table_suffixes(["b", "a", "b"]) == [
        "database/a",
        "database/b",
        "table/a/_odp_canary_*",
        "table/b/_odp_canary_*",
    ]
    policies = synthesized.resources(synthesized.data_lakes["dev"], "AWS::IAM::Policy").values()
    statements = [s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]]
    deleting = [s for s in statements if "glue:DeleteTable" in json.dumps(s["Action"])]
    assert deleting
    assert {s.get("Sid") for s in deleting} == {"CanaryTableRemoval"}
    assert all(":catalog" in json.dumps(s["Resource"]) for s in deleting)  # a table's removal needs its catalog too
    tables = [r for s in deleting for r in json.dumps(s["Resource"]).split('"') if ":table/" in r]
    assert tables
    assert all(r.endswith("/_odp_canary_*") for r in tables), tables
    for table in config.tables:
        assert any(r.endswith(f":table/{table.database}/_odp_canary_*") for r in tables), table.database

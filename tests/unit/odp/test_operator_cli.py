"""``python -m odp`` against the sandbox's saved state (moto; no Spark) and a moto AWS account.

Each command runs as an operator would run it (``main([...])``, output captured); the state is then
read back through a fresh sandbox backend, i.e. from the lake folder, where the next sandbox run reads it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from odp.__main__ import main
from odp.config.items import table_config_item
from odp.contracts.file_processor import FileProcessorJobArgs
from odp.naming import TrackerTableNames, file_processor_job_name
from odp.operations.backend import AwsBackend
from odp.tracker import (
    FileStatus,
    FileTracker,
    JobRunRef,
    ProcessingTracker,
    RunStatus,
    TrackedFile,
    file_kind,
    make_file_id,
)
from sandbox import state_store
from sandbox.operator import sandbox_backend
from tests.support.lake import small_table_config
from tests.support.streams import ORDERS

PEOPLE = small_table_config("people")
PETS = small_table_config("pets")


def land(staging: Path, key: str, body: bytes) -> TrackedFile:
    (staging / key).parent.mkdir(parents=True, exist_ok=True)
    (staging / key).write_bytes(body)
    etag = hashlib.md5(body, usedforsecurity=False).hexdigest()
    return TrackedFile(
        table_id=".".join(key.split("/")[:3]),
        file_id=make_file_id("staging", key, etag),
        bucket="staging",
        key=key,
        size=len(body),
        etag=etag,
        landed_at="2026-01-01T00:00:00.000Z",
        file_kind=file_kind(key.rsplit("/", 1)[-1], "dms"),
    )


class SandboxLake:
    def __init__(self, root: Path) -> None:
        self.lake = root / "lake"
        self.staging = root / "staging"
        (state_store.state_dir(self.lake) / state_store.DYNAMODB_DIR).mkdir(parents=True)
        self.staging.mkdir()

    def odp(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
        code = main(["--sandbox", str(self.lake), "--staging", str(self.staging), *argv])
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    def trackers(self) -> Any:
        return sandbox_backend(self.lake, self.staging)


def files_of(backend: Any) -> FileTracker:
    table = backend.dynamodb.Table
    return FileTracker(table(backend.names.file_tracker), table(backend.names.file_tracker_history))


def processing_of(backend: Any) -> ProcessingTracker:
    table = backend.dynamodb.Table
    return ProcessingTracker(table(backend.names.processing_tracker), table(backend.names.processing_tracker_history))


@pytest.fixture
def sandbox(tmp_path: Path, aws_env: None) -> SandboxLake:
    lake = SandboxLake(tmp_path)
    with lake.trackers() as backend:
        for config in (PEOPLE, PETS):
            backend.dynamodb.Table(backend.names.table_config).put_item(Item=table_config_item(config))
    return lake


def test_quarantine_and_release_print_the_plan_and_change_nothing_without_yes(sandbox: SandboxLake, capsys) -> None:
    one = land(sandbox.staging, "src/app/people/1.parquet", b"one")
    two = land(sandbox.staging, "src/app/people/2.parquet", b"two")
    with sandbox.trackers() as backend:
        assert files_of(backend).register(one)
        assert files_of(backend).register(two)

    code, out = sandbox.odp(capsys, "file", "quarantine", PEOPLE.table_id, two.key, "--reason", "wrong export")
    assert code == 0
    assert out == (
        f"quarantine {two.key} of src.app.people\n"
        "  file_tracker: landed -> quarantined, reason 'quarantined by an operator: wrong export'\n"
        "  its table's runs go on without it until it is released (python -m odp file release)\n"
        "nothing changed: run again with --yes to do this\n"
    )
    with sandbox.trackers() as backend:
        assert [f.key for f in files_of(backend).landed_files(PEOPLE.table_id)] == [one.key, two.key]

    code, out = sandbox.odp(capsys, "file", "quarantine", PEOPLE.table_id, two.key, "--reason", "wrong export", "--yes")
    assert (code, out.splitlines()[-1]) == (0, f"done: quarantined {two.key}")
    code, out = sandbox.odp(capsys, "status", "--table", PEOPLE.table_id)
    assert code == 0
    assert "  pending: 1 file(s), 3 bytes, oldest landed 2026-01-01T00:00:00.000Z" in out
    assert "  lease: free" in out
    assert "  quarantined: 1 file(s)" in out
    assert f"    {two.key} (since " in out
    assert "      quarantined by an operator: wrong export" in out

    code, out = sandbox.odp(capsys, "file", "release", PEOPLE.table_id, two.key)
    assert "  file_tracker: quarantined -> landed (attempts start afresh)" in out
    assert out.endswith("nothing changed: run again with --yes to do this\n")
    code, out = sandbox.odp(capsys, "file", "release", PEOPLE.table_id, two.key, "--yes")
    assert out.splitlines()[-1] == f"done: released {two.key}: landed, applied by the next run of src.app.people"
    with sandbox.trackers() as backend:
        assert [f.key for f in files_of(backend).landed_files(PEOPLE.table_id)] == [one.key, two.key]

    code, out = sandbox.odp(capsys, "file", "release", PEOPLE.table_id, two.key, "--yes")
    assert code == 2
    assert out == (f"error: src.app.people: no quarantined file '{two.key}' in file_tracker (quarantined: none)\n")


def test_a_stuck_lease_is_released_only_from_the_holder_named(sandbox: SandboxLake, capsys) -> None:
    with sandbox.trackers() as backend:
        processing_of(backend).acquire(
            PETS.table_id, "b1-0123456789ab", lease_seconds=900, job_run=JobRunRef("odp-sandbox-x", "jr_1")
        )
    code, out = sandbox.odp(capsys, "lease", "release", PETS.table_id, "--holder", "someone-else", "--yes")
    assert (code, out) == (
        2,
        "error: src.app.pets: the lease is held by b1-0123456789ab, not someone-else; nothing changed\n",
    )

    code, out = sandbox.odp(capsys, "status", "--table", PETS.table_id)
    assert "  lease: held by b1-0123456789ab (job run jr_1) until " in out
    assert "(job run jr_1 of odp-sandbox-x no longer exists: the next run takes it over)" in out

    code, out = sandbox.odp(capsys, "lease", "release", PETS.table_id, "--holder", "b1-0123456789ab", "--yes")
    assert code == 0
    assert "  its job run: job run jr_1 of odp-sandbox-x no longer exists" in out
    assert "  processing_tracker: remove the lease, on the condition that b1-0123456789ab still holds it" in out
    assert out.splitlines()[-1] == "done: released the lease of b1-0123456789ab on src.app.pets"
    with sandbox.trackers() as backend:
        assert processing_of(backend).state(PETS.table_id).lease_owner is None
    code, out = sandbox.odp(capsys, "lease", "release", PETS.table_id, "--holder", "b1-0123456789ab", "--yes")
    assert (code, out) == (0, "release the lease of src.app.pets\n  no run holds it: nothing to do\n")


def test_backfill_lands_unregistered_and_never_announced_staged_files(sandbox: SandboxLake, capsys) -> None:
    kept = land(sandbox.staging, "src/app/pets/1.parquet", b"kept while inactive")
    land(sandbox.staging, "src/app/pets/2.parquet", b"never announced")
    (sandbox.staging / "src/app/pets/_SUCCESS").write_bytes(b"")
    with sandbox.trackers() as backend:
        assert files_of(backend).register(TrackedFile(**{**kept.__dict__, "status": FileStatus.UNREGISTERED}))
    _, out = sandbox.odp(capsys, "backfill", PETS.table_id)
    assert out == (
        "backfill src.app.pets\n"
        "  staging prefix src/app/pets/\n"
        "  1 unregistered file(s) -> landed\n"
        "  1 staged file(s) never registered -> landed\n"
        "  already tracked: 0 landed, 0 processed (left as they are)\n"
        "nothing changed: run again with --yes to do this\n"
    )
    _code, out = sandbox.odp(capsys, "backfill", PETS.table_id, "--yes")
    assert out.splitlines()[-1] == "done: 1 unregistered and 1 staged file(s) now landed; the next run applies them"
    with sandbox.trackers() as backend:
        landed = files_of(backend).landed_files(PETS.table_id)
    assert [f.key for f in landed] == ["src/app/pets/1.parquet", "src/app/pets/2.parquet"]
    assert sandbox.odp(capsys, "backfill", PETS.table_id, "--yes")[1].splitlines()[-1] == "  nothing to do"


def test_status_of_a_cadence_lists_each_table(sandbox: SandboxLake, capsys) -> None:
    code, out = sandbox.odp(capsys, "status", "--cadence", "hourly")
    lines = out.splitlines()
    assert (code, lines[0]) == (0, "cadence hourly: 2 table(s)")
    assert lines[2].split() == ["src.app.people", "0", "-", "0", "-", "free"]
    assert lines[3].split() == ["src.app.pets", "0", "-", "0", "-", "free"]


def test_status_all_lists_a_streamed_table_and_a_dataset_beside_the_batch_tables(sandbox: SandboxLake, capsys) -> None:
    """Each writer records its run through its own code: the streaming job's table commit (stream_run, then the
    ledger as StreamTarget.ledger records it) and the dataset job's recorder (as etl/jobs/dataset_job.py builds it
    from the deployed arguments); python -m odp status --all lists both with their last run."""
    from etl.jobs.dataset_job import recorder
    from etl.streaming.batch import stream_run
    from odp.contracts.base import LedgerTables
    from odp.contracts.datasets import DatasetJobArgs, LakeRoots, config_tables
    from odp.tracker.dataset_run import DatasetRun
    from odp.tracker.ledger import RunLedger

    with sandbox.trackers() as backend:
        names, dynamodb = backend.names, backend.dynamodb
        dynamodb.Table(names.table_config).put_item(Item=table_config_item(ORDERS))
        ledger = RunLedger(dynamodb.Table(names.processing_tracker), dynamodb.Table(names.processing_tracker_history))
        commit = stream_run(
            ORDERS.table_id,
            "b-7",
            "2026-01-01T00:00:00.000Z",
            RunStatus.COMPLETED,
            rows=3,
            finished_at="2026-01-01T00:00:09.000Z",
        )
        ledger.record(commit)
        args = DatasetJobArgs(
            LakeRoots("s3://raw", "s3://conformed", "s3://purpose"),
            **config_tables("sandbox"),
            ledger=LedgerTables(names.processing_tracker, names.processing_tracker_history),
        )
        refresh = DatasetRun(
            dataset="trips_clean",
            zone="conformed",
            status=RunStatus.WRITTEN,
            refresh="full",
            run_id="datasets-1",
            started_at="2026-01-01T00:01:00Z",
            rows_upserted=42,
        )
        recorder(args, dynamodb=dynamodb)(refresh)
    code, out = sandbox.odp(capsys, "status", "--all")
    lines = out.splitlines()
    assert (code, lines[0]) == (0, "2 table(s) and dataset(s) with runs")
    by_subject = {line.split()[0]: line.split() for line in lines[2:]}
    assert by_subject["dataset:trips_clean"][1:3] == ["dataset", "written"]
    assert by_subject["dataset:trips_clean"][-1] == "42"
    assert by_subject[ORDERS.table_id][1:4] == ["stream", "shop_changes", "completed"]
    assert by_subject[ORDERS.table_id][4].endswith("Z")  # when the ledger recorded it
    assert by_subject[ORDERS.table_id][-1] == "3"


def test_a_command_needs_a_target_and_a_known_table(tmp_path: Path, aws_env: None, capsys, monkeypatch) -> None:
    monkeypatch.delenv("ODP_ENVIRONMENT", raising=False)
    monkeypatch.delenv("ODP_SANDBOX_LAKE", raising=False)
    assert main(["status", "--table", "a.b.c"]) == 2
    assert capsys.readouterr().err == "error: say where: --env <environment> (AWS) or --sandbox <lake folder>\n"
    assert main(["--sandbox", str(tmp_path), "status", "--table", "a.b.c"]) == 2
    assert f"holds no sandbox state: run python -m sandbox run --lake {tmp_path}" in capsys.readouterr().err


def test_retry_on_aws_starts_the_cadence_job_with_the_batch_arguments(aws_env: None, capsys) -> None:
    with mock_aws():
        from odp.tracker.schema import create_tables

        names = TrackerTableNames.for_environment("dev")
        create_tables(boto3.client("dynamodb"), names)
        boto3.resource("dynamodb").Table(names.table_config).put_item(Item=table_config_item(PEOPLE))
        glue = boto3.client("glue")
        job_name = file_processor_job_name("dev", "hourly")
        glue.create_job(Name=job_name, Role="arn:aws:iam::123456789012:role/x", Command={"Name": "glueetl"})
        processing = boto3.resource("dynamodb").Table(names.processing_tracker)
        held = "2024-05-01T12:00:00.000Z"
        processing.put_item(Item={"table_id": PEOPLE.table_id, "failed_runs": 5, "held_at": held})
        assert main(["--env", "dev", "retry", PEOPLE.table_id]) == 0
        assert glue.get_job_runs(JobName=job_name)["JobRuns"] == []
        assert (
            f"processing_tracker: release the hold (held since {held} after 5 failed runs in a row); its failed runs "
            "are counted afresh and the Batch Manager plans it again"
        ) in capsys.readouterr().out
        assert main(["--env", "dev", "retry", PEOPLE.table_id, "--yes"]) == 0
        out = capsys.readouterr().out
        (run,) = glue.get_job_runs(JobName=job_name)["JobRuns"]
        assert f"done: released the hold on {PEOPLE.table_id}" in out
        assert f"done: started Glue job run {run['Id']} of {job_name}" in out
        assert processing.get_item(Key={"table_id": PEOPLE.table_id})["Item"] == {"table_id": PEOPLE.table_id}
        arguments = run["Arguments"]
        assert arguments[FileProcessorJobArgs.option("table_ids")] == '["src.app.people"]'
        assert arguments[FileProcessorJobArgs.option("batch_id")].startswith("manual-")
        assert AwsBackend("dev").names == names

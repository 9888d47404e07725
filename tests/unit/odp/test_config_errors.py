"""A corpus of broken configurations: each must fail with a message naming the file, path and reason.

Every case starts from the same small valid configuration, written to a temporary folder, and breaks
one thing in it. The expected messages are written out by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from odp.config import ConfigError, load_config
from tests.support.config_files import valid_files, with_order_totals, write_config


def errors_of(tmp_path: Path, change: Callable[[dict], None]) -> list[str]:
    files = valid_files()
    change(files)
    write_config(tmp_path, files)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    return [str(issue) for issue in caught.value.issues]


def table(files: dict, index: int = 0) -> dict:
    return files["tables/shop.yaml"]["tables"][index]


def stream_every_table(files: dict, stream: str) -> None:
    """shop.yaml as a DynamoDB source whose tables all come from one stream named ``stream``."""
    files["streams.yaml"] = {"streams": {stream: {}}}
    shop = files["tables/shop.yaml"]
    shop["format"] = "dynamodb"
    shop["defaults"] = {"stream": stream, "database": "shop_raw"}
    for entry in shop["tables"]:
        entry.pop("columns", None)
        entry.pop("partition_by", None)


def test_the_base_configuration_is_valid(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, valid_files()))
    assert [t.table_id for t in config.tables] == ["shop.public.orders", "shop.public.customers"]
    customers = config.table("shop.public.customers")
    assert customers.ordering_column == "seq"  # inherited from defaults
    assert customers.partition_by == ()
    assert customers.target_table == "customers"


CASES: list[tuple[str, Callable[[dict], None], str]] = [
    (
        "unknown cadence",
        lambda f: table(f).update(cadence="weekly"),
        "tables/shop.yaml: tables[0].cadence: unknown cadence 'weekly' (known: fast)",
    ),
    (
        "duplicate table id",
        lambda f: f["tables/shop.yaml"]["tables"].append(
            {"schema": "public", "table": "orders", "primary_key": ["id"]}
        ),
        "tables/shop.yaml: tables[2]: duplicate table id 'shop.public.orders' (first at tables/shop.yaml tables[0])",
    ),
    (
        "primary key column not declared",
        lambda f: table(f).update(primary_key=["order_id"]),
        "tables/shop.yaml: tables[0].primary_key: column 'order_id' is not declared in columns",
    ),
    (
        "ordering column not declared",
        lambda f: table(f).update(ordering_column="changed_at"),
        "tables/shop.yaml: tables[0].ordering_column: column 'changed_at' is not declared in columns",
    ),
    (
        "partition column not declared",
        lambda f: table(f).update(partition_by=["country"]),
        "tables/shop.yaml: tables[0].partition_by: column 'country' is not declared in columns",
    ),
    (
        "schedule that is not an expression",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(schedule="every 10 minutes"),
        "cadences.yaml: cadences.fast.schedule: 'every 10 minutes' is not a schedule expression",
    ),
    (
        "rate with a wrong unit number",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(schedule="rate(1 minutes)"),
        "cadences.yaml: cadences.fast.schedule: use '1 minute' in 'rate(1 minutes)'",
    ),
    (
        "malformed account id",
        lambda f: f["environments.yaml"]["environments"]["dev"].update(account="12345"),
        "environments.yaml: environments.dev.account: String should match pattern",
    ),
    (
        "malformed region",
        lambda f: f["environments.yaml"]["environments"]["dev"].update(region="europe-west"),
        "environments.yaml: environments.dev.region: String should match pattern",
    ),
    (
        "batch size below one",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(batch_size=0),
        "cadences.yaml: cadences.fast.batch_size: Input should be greater than or equal to 1",
    ),
    (
        "prod without manual approval",
        lambda f: f["environments.yaml"]["environments"]["prod"].update(manual_approval=False),
        "environments.yaml: environments.prod.manual_approval: prod must set manual_approval: true",
    ),
    (
        "two environments on one branch",
        lambda f: f["environments.yaml"]["environments"]["prod"].update(branch="main"),
        "environments.yaml: environments.prod.branch: branch 'main' already deploys environment 'dev'",
    ),
    (
        "a cadence mode that does not exist",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(mode="hot"),
        "cadences.yaml: cadences.fast.mode: Input should be 'scheduled' or 'warm'",
    ),
    (
        "a warm cadence whose timeout holds fewer than two ticks",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(mode="warm", job_timeout_minutes=20),
        "cadences.yaml: cadences.fast: job_timeout_minutes 20 leaves a warm run fewer than 2 ticks of 10 minutes (it "
        "stops 5 minutes before the timeout): set job_timeout_minutes to at least 25",
    ),
    (
        "a warm cadence on a cron schedule",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(mode="warm", schedule="cron(0 * * * ? *)"),
        "cadences.yaml: cadences.fast: mode warm ticks at a fixed interval: use a rate(...) schedule, not "
        "'cron(0 * * * ? *)'",
    ),
    (
        "a warm cadence on EMR Serverless",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(mode="warm", engine="emr_serverless"),
        "cadences.yaml: cadences.fast: mode warm runs on the Glue engine only, not emr_serverless",
    ),
    (
        "misspelt key",
        lambda f: f["cadences.yaml"]["cadences"]["fast"].update(batch_sise=3),
        "cadences.yaml: cadences.fast.batch_sise: unknown key",
    ),
    (
        "YAML that does not parse",
        lambda f: f.update({"cadences.yaml": "cadences:\n  fast: {schedule: rate(10 minutes)\n"}),
        "cadences.yaml: line 3, column 1: not valid YAML",
    ),
    (
        "duplicate YAML key",
        lambda f: f.update(
            {
                "cadences.yaml": "cadences:\n  fast: {schedule: rate(10 minutes), batch_size: 1}\n  fast: {batch_size: 2}\n"
            }
        ),
        "cadences.yaml: line 3, column 3: not valid YAML: duplicate key 'fast'",
    ),
    (
        "source that does not match its file name",
        lambda f: f["tables/shop.yaml"].update(source="store"),
        "tables/shop.yaml: source: source 'store' must match the file name 'shop'",
    ),
    (
        "dms table without an ordering column",
        lambda f: f["tables/shop.yaml"]["defaults"].pop("ordering_column"),
        "tables/shop.yaml: tables[1].ordering_column: required for dms sources",
    ),
    (
        "unknown source format",
        lambda f: f["tables/shop.yaml"].update(format="oracle"),
        "tables/shop.yaml: format: Input should be 'dms', 'debezium', 'dynamodb' or 'files'",
    ),
    (
        "column type Spark does not know",
        lambda f: table(f)["columns"].update(amount="varchar(10)"),
        "tables/shop.yaml: tables[0].columns: unknown Spark SQL type for amount: 'varchar(10)'",
    ),
    (
        "columns whose names differ only in case",
        lambda f: table(f)["columns"].update(AMOUNT="bigint"),
        "tables/shop.yaml: tables[0].columns: columns amount and AMOUNT differ only in case: Spark takes them for one "
        "column",
    ),
    (
        "a column named as one of ODP's own",
        lambda f: table(f)["columns"].update(_hoodie_commit_time="string"),
        "tables/shop.yaml: tables[0].columns: column _hoodie_commit_time: _odp, _odp_* and _hoodie_* are ODP's and "
        "Hudi's own columns",
    ),
    (
        "event time tolerance that is not a duration",
        lambda f: table(f).update(event_time_tolerance="1 day"),
        "tables/shop.yaml: tables[0].event_time_tolerance: '1 day' is not a duration: use a whole number and a "
        "unit d, h, m or s (1d, 6h, 30m, 90s)",
    ),
    (
        "event time floor that is not a time",
        lambda f: f["tables/shop.yaml"]["defaults"].update(event_time_floor="last year"),
        "tables/shop.yaml: defaults.event_time_floor: 'last year' is not an ISO date or date-time (2020-01-01, "
        "2020-01-01T00:00:00Z)",
    ),
    (
        "two tables writing one target",
        lambda f: table(f, 1).update(target_table="orders"),
        "tables/shop.yaml: tables[1].target_table: target shop_raw.orders is already written by tables/shop.yaml tables[0]",
    ),
    (
        "target table name reserved for ODP",
        lambda f: table(f, 1).update(target_table="_odp_tombstones"),
        "tables/shop.yaml: tables[1].target_table: '_odp_tombstones': names starting with '_odp' are reserved for ODP",
    ),
    (
        "disaster-recovery region equal to the primary",
        lambda f: f["environments.yaml"]["environments"]["prod"].update(dr_region="eu-west-1"),
        "environments.yaml: environments.prod: dr_region 'eu-west-1' must differ from region",
    ),
    (
        "availability zone outside the region",
        lambda f: f["environments.yaml"]["environments"]["dev"].update(availability_zones=["eu-west-1a", "us-east-1b"]),
        "environments.yaml: environments.dev: availability_zones ['us-east-1b'] are not in region 'eu-west-1'",
    ),
    (
        "one availability zone twice",
        lambda f: f["environments.yaml"]["environments"]["dev"].update(availability_zones=["eu-west-1a", "eu-west-1a"]),
        "environments.yaml: environments.dev: availability_zones ['eu-west-1a', 'eu-west-1a'] must be two different zones",
    ),
    (
        "availability zones missing",
        lambda f: f["environments.yaml"]["environments"]["dev"].pop("availability_zones"),
        "environments.yaml: environments.dev.availability_zones: Field required",
    ),
    (
        "approved environment without a subscriber to its alerts",
        lambda f: f["environments.yaml"]["environments"]["prod"].pop("alarm_email"),
        "environments.yaml: environments.prod: alarm_email is required when manual_approval is true: the alerts "
        "topic of an approved environment needs a subscriber",
    ),
    (
        "stream name too long for its job-stopped rule",
        lambda f: stream_every_table(f, "s" * 40),
        "streams.yaml: streams."
        + "s" * 40
        + ": in environment 'prod': the EventBridge rule name 'odp-prod-stream-"
        + "s" * 40
        + "-job-stopped' has 68 characters; AWS allows 1 to 64",
    ),
    (
        "VPC too large",
        lambda f: f["environments.yaml"]["environments"]["dev"].update(vpc_cidr="10.0.0.0/8"),
        "environments.yaml: environments.dev.vpc_cidr: prefix /8 must be between /16 and /24",
    ),
    (
        "missing cadences file",
        lambda f: f.pop("cadences.yaml"),
        "cadences.yaml: file not found",
    ),
    (
        "empty table file",
        lambda f: f.update({"tables/shop.yaml": ""}),
        "tables/shop.yaml: file is empty",
    ),
    (
        "repeated primary key column",
        lambda f: table(f).update(primary_key=["id", "id"]),
        "tables/shop.yaml: tables[0].primary_key: repeats a column: ['id', 'id']",
    ),
    (
        "table without database",
        lambda f: f["tables/shop.yaml"]["defaults"].pop("database"),
        "tables/shop.yaml: tables[0].database: required (here or in defaults)",
    ),
]


@pytest.mark.parametrize(("change", "expected"), [(c, e) for _, c, e in CASES], ids=[n for n, _, _ in CASES])
def test_broken_configuration_names_file_path_and_reason(
    tmp_path: Path, change: Callable[[dict], None], expected: str
) -> None:
    messages = errors_of(tmp_path, change)
    assert any(message.startswith(expected) for message in messages), messages


def test_a_database_prefix_refuses_each_database_outside_it_wherever_it_is_named(tmp_path: Path) -> None:
    """The jobs' roles are granted ``<prefix>*`` only (infrastructure/jobs/job_role.py), so a database outside it
    would deploy and then fail at its first catalog sync: the configuration is refused instead, naming each place."""

    def prefix_with_three_outside(files: dict) -> None:
        files.update(with_order_totals(files))  # a dataset in shop_purpose_built
        files["environments.yaml"]["database_prefix"] = "shop_raw_"
        files["tables/shop.yaml"]["defaults"]["database"] = "crm_raw"  # outside: the tables it onboards too
        table(files, 0)["database"] = "shop_raw_orders"  # inside
        table(files, 1)["database"] = "crm_customers"  # outside

    reason = "does not start with database_prefix 'shop_raw_' (environments.yaml): the jobs' roles are granted the "
    assert sorted(errors_of(tmp_path, prefix_with_three_outside)) == [
        f"datasets/order_totals.yaml: database: database 'shop_purpose_built' {reason}catalog by shop_raw_* only",
        f"tables/shop.yaml: defaults.database: database 'crm_raw' {reason}catalog by shop_raw_* only",
        f"tables/shop.yaml: tables[1].database: database 'crm_customers' {reason}catalog by shop_raw_* only",
    ]
    files = with_order_totals(valid_files())
    files["environments.yaml"]["database_prefix"] = "shop_"
    config = load_config(write_config(tmp_path / "inside", files))
    assert config.environments.database_prefix == "shop_"
    assert {t.database for t in config.tables} | {d.database for d in config.datasets} == {
        "shop_raw",
        "shop_purpose_built",
    }


def test_the_corpus_has_at_least_fifteen_distinct_cases() -> None:
    assert len({expected for _, _, expected in CASES}) >= 15


def test_every_error_is_reported_at_once_across_files(tmp_path: Path) -> None:
    def break_three_files(files: dict) -> None:
        files["environments.yaml"]["environments"]["dev"]["account"] = "1"
        files["cadences.yaml"]["cadences"]["fast"]["batch_size"] = -1
        table(files).update(cadence="weekly", primary_key=["nope"])

    messages = errors_of(tmp_path, break_three_files)
    assert {message.split(":")[0] for message in messages} == {
        "environments.yaml",
        "cadences.yaml",
        "tables/shop.yaml",
    }
    assert any("primary_key" in message for message in messages)
    # The unknown cadence cannot be judged while cadences.yaml itself is invalid; the rest still is.
    assert len(messages) >= 3


def test_validate_cli_exits_non_zero_and_prints_every_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from odp.config.__main__ import main

    files = valid_files()
    table(files).update(cadence="weekly")
    files["cadences.yaml"]["cadences"]["fast"]["schedule"] = "now"
    write_config(tmp_path, files)
    assert main(["validate", "--config-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    # both at once: the invalid cadence does not hide the table that names an unknown one
    assert "2 configuration error(s)" in err
    assert "cadences.yaml: cadences.fast.schedule: 'now' is not a schedule expression" in err
    assert "tables/shop.yaml: tables[0].cadence: unknown cadence 'weekly' (known: fast)" in err


def test_every_problem_of_a_configuration_is_reported_in_one_run(tmp_path: Path) -> None:
    """One run reports what used to take four: file-level, table-level and cross-table problems."""

    def break_everything(files: dict) -> None:
        files["environments.yaml"]["environments"]["prod"]["manual_approval"] = False
        files["environments.yaml"]["environments"]["dev"]["vpc_cidr"] = "not-a-cidr"
        files["cadences.yaml"]["cadences"]["fast"]["batch_size"] = 0
        tables = files["tables/shop.yaml"]["tables"]
        tables[0]["primary_key"] = ["nope"]  # not a declared column (resolve stage)
        tables[1]["colour"] = "blue"  # an unknown key (schema stage)
        tables.append({"schema": "public", "table": "orders", "primary_key": ["id"]})  # duplicate id
        tables.append({"schema": "public", "table": "refunds", "primary_key": ["id"], "cadence": "weekly"})
        tables.append({"schema": "public", "table": "_odp_x", "primary_key": ["id"]})

    errors = errors_of(tmp_path, break_everything)
    assert len(errors) == 8, errors
    assert errors[0].startswith("environments.yaml: environments.dev.vpc_cidr: ")
    assert errors[1:] == [
        "environments.yaml: environments.prod.manual_approval: prod must set manual_approval: true",
        "cadences.yaml: cadences.fast.batch_size: Input should be greater than or equal to 1",
        "tables/shop.yaml: tables[1].colour: unknown key (check the spelling against the JSON schema in config/schema/)",
        "tables/shop.yaml: tables[0].primary_key: column 'nope' is not declared in columns",
        "tables/shop.yaml: tables[2]: duplicate table id 'shop.public.orders' (first at tables/shop.yaml tables[0])",
        "tables/shop.yaml: tables[3].cadence: unknown cadence 'weekly' (known: fast)",
        "tables/shop.yaml: tables[4].target_table: '_odp_x': names starting with '_odp' are reserved for ODP",
    ]


def test_validate_cli_accepts_the_shipped_configuration(repo_root: Path, capsys: pytest.CaptureFixture) -> None:
    from odp.config.__main__ import main

    assert main(["validate", "--config-dir", str(repo_root / "config")]) == 0
    assert "22 tables" in capsys.readouterr().out


def test_validate_warns_when_a_cadence_cannot_keep_up_with_its_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """300 tables of `fast` (5 a run, 2 runs at a time): 60 runs of 48 + 5 x 2.3 s, 30 waves, about 30 minutes for a
    10-minute schedule (odp/planning.py). A warning, not an error: the tables may change less often."""
    from odp.config.__main__ import main

    files = valid_files()
    files["tables/shop.yaml"]["tables"] += [
        {"schema": "public", "table": f"t{n:03d}", "primary_key": ["id"]} for n in range(298)
    ]
    write_config(tmp_path, files)

    assert main(["validate", "--config-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr()
    assert "300 tables" in printed.out
    assert printed.err == (
        "warning: cadence fast: 300 tables with a change each take at least 60 runs (5 tables a run at most), 2 at a "
        "time: about 30 minutes an execution, longer than its 10-minute interval; raise batch_size, max_concurrency "
        "or target_run_minutes, or move tables to another cadence\n"
    )


def test_max_workers_below_number_of_workers_is_refused(tmp_path: Path) -> None:
    def fewer(files: dict) -> None:
        files["cadences.yaml"]["cadences"]["fast"].update(number_of_workers=4, max_workers=3)

    assert errors_of(tmp_path, fewer) == [
        "cadences.yaml: cadences.fast: max_workers (3) must be at least number_of_workers (4)"
    ]

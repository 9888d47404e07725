"""Reader settings of a table (column order, CSV layout, Debezium shape, encoding, transform, event-time horizon)
and their DynamoDB form: column order survives the store, an old map-form item asks for a redeploy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from odp.compat import StaleTableConfigItemError
from odp.config import ConfigError, load_config
from odp.config.items import table_config_from_item, table_config_item
from odp.config.manager import load_into_dynamodb
from odp.config.models import (
    DEFAULT_SMALL_TABLE_ROWS,
    DebeziumShape,
    IndexKind,
    MissingColumns,
    NewColumns,
    TableSettings,
    transform_problems,
)
from tests.support.config_files import ZONES

COLUMNS = {"zeta": "bigint", "alpha": "string", "mid": "decimal(10,2)", "seq": "string"}  # not sorted on purpose


def _config_dir(root: Path, table: dict, fmt: str = "dms") -> Path:
    (root / "tables").mkdir(parents=True)
    (root / "environments.yaml").write_text(
        yaml.safe_dump(
            {
                "deployment": {"account": "000000000000", "region": "eu-west-1"},
                "source": {
                    "repository": "org/odp",
                    "connection_arn": "arn:aws:codeconnections:eu-west-1:000000000000:connection/abc-123",
                },
                "environments": {
                    "dev": {
                        "account": "111111111111",
                        "region": "eu-west-1",
                        "availability_zones": ZONES,
                        "branch": "main",
                    }
                },
            }
        )
    )
    (root / "cadences.yaml").write_text(
        yaml.safe_dump({"cadences": {"fast": {"schedule": "rate(10 minutes)", "batch_size": 5}}})
    )
    entry = {"schema": "public", "table": "t", "primary_key": ["zeta"], "cadence": "fast", "database": "db", **table}
    if fmt == "dms":
        entry.setdefault("ordering_column", "seq")
    (root / "tables" / "shop.yaml").write_text(
        yaml.safe_dump({"source": "shop", "format": fmt, "tables": [entry]}, sort_keys=False)
    )
    return root


def test_column_order_survives_dynamodb(tmp_path: Path, tracker_tables: dict) -> None:
    config = load_config(
        _config_dir(
            tmp_path, {"columns": COLUMNS, "csv_header": False, "csv_delimiter": "\t", "csv_null_value": "NULL"}
        )
    )
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert item["columns"] == [{"name": name, "type": kind} for name, kind in COLUMNS.items()]
    back = table_config_from_item(item)
    assert list(back.columns.items()) == list(COLUMNS.items())
    assert (back.csv_header, back.csv_delimiter, back.csv_null_value, back.encoding) == (False, "\t", "NULL", "utf-8")
    assert back == config.table("shop.public.t")


def test_an_item_with_columns_as_a_map_asks_for_a_redeploy(tmp_path: Path) -> None:
    item = table_config_item(load_config(_config_dir(tmp_path, {"columns": COLUMNS})).table("shop.public.t"))
    item["columns"] = dict(sorted(COLUMNS.items()))  # what an older release stored (and moto returns sorted)
    with pytest.raises(StaleTableConfigItemError) as raised:
        table_config_from_item(item)
    assert str(raised.value) == (
        "table_config item shop.public.t: columns are stored as a map, which has no order (written by an older "
        "Configuration Manager): redeploy the configuration (python -m odp.config load, or the pipeline) so "
        "they are stored as an ordered list"
    )


def test_reader_settings_of_another_format_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(_config_dir(tmp_path, {"csv_header": True, "debezium_shape": "flattened"}, fmt="debezium"))
    assert str(raised.value).count("only for dms sources, this is a debezium source") == 1
    assert "tables[0].csv_header" in str(raised.value)


def test_debezium_shape_and_encoding_resolve(tmp_path: Path) -> None:
    table = load_config(
        _config_dir(tmp_path, {"debezium_shape": "flattened", "encoding": "Latin-1"}, fmt="debezium")
    ).table("shop.public.t")
    assert (table.debezium_shape, table.encoding) == (DebeziumShape.FLATTENED, "iso8859-1")
    with pytest.raises(ValueError, match="unknown encoding 'klingon'"):
        TableSettings(encoding="klingon")


@pytest.mark.parametrize(
    ("sql", "problems"),
    [
        ("SELECT _odp, zeta, upper(alpha) AS alpha FROM <SRC>", []),
        ("SELECT `_odp`, `zeta` FROM <SRC> WHERE alpha <> 'x'", []),
        ("SELECT zeta FROM <SRC>", ["must keep column _odp"]),
        ("SELECT _odp, zetas FROM <SRC>", ["must keep column zeta"]),
        ("DELETE FROM <SRC>", ["must be one SELECT statement", "must keep column _odp", "must keep column zeta"]),
        (
            "SELECT _odp, zeta FROM changes; DROP TABLE x",
            ["must be one statement (no ';' inside)", "must read from <SRC> (the table's changes)"],
        ),
    ],
)
def test_transform_is_checked_at_load(sql: str, problems: list[str]) -> None:
    assert transform_problems(sql, ["zeta"]) == problems


def test_transform_problems_name_the_table_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(_config_dir(tmp_path, {"columns": COLUMNS, "transform": "SELECT alpha FROM <SRC>"}))
    message = str(raised.value)
    assert "tables[0].transform" in message
    assert "must keep column _odp" in message
    assert "must keep column zeta" in message


def test_the_bucket_index_setting_survives_dynamodb_and_is_bounded(tmp_path: Path, tracker_tables: dict) -> None:
    config = load_config(_config_dir(tmp_path / "bucket", {"index_buckets": 8, "partition_by": ["seq"]}))
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert item["index_buckets"] == 8  # a DynamoDB number (Decimal), read back as an int
    assert table_config_from_item(item).index_buckets == 8
    assert table_config_from_item(item) == config.table("shop.public.t")
    # omitted: the record level index, and nothing stored
    default = load_config(_config_dir(tmp_path / "record", {})).table("shop.public.t")
    assert default.index_buckets is None
    assert "index_buckets" not in table_config_item(default)
    with pytest.raises(ConfigError, match=r"tables\[0\]\.index_buckets: Input should be greater than or equal to 1"):
        load_config(_config_dir(tmp_path / "zero", {"index_buckets": 0}))


def test_the_simple_index_setting_survives_dynamodb_and_excludes_index_buckets(
    tmp_path: Path, tracker_tables: dict
) -> None:
    config = load_config(_config_dir(tmp_path / "simple", {"index": "simple"}))
    assert config.table("shop.public.t").index is IndexKind.SIMPLE
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert item["index"] == "simple"
    assert table_config_from_item(item) == config.table("shop.public.t")
    default = load_config(_config_dir(tmp_path / "record", {})).table("shop.public.t")
    assert default.index is IndexKind.RECORD
    assert "index" not in table_config_item(default)
    with pytest.raises(ConfigError, match=r"tables\[0\]\.index: index: simple and index_buckets exclude each other"):
        load_config(_config_dir(tmp_path / "both", {"index": "simple", "index_buckets": 2}))
    with pytest.raises(ConfigError, match=r"tables\[0\]\.index: Input should be 'record' or 'simple'"):
        load_config(_config_dir(tmp_path / "bloom", {"index": "bloom"}))


def test_the_event_time_horizon_settings_default_resolve_and_survive_dynamodb(
    tmp_path: Path, tracker_tables: dict
) -> None:
    default = load_config(_config_dir(tmp_path / "default", {})).table("shop.public.t")
    assert (default.event_time_tolerance, default.event_time_floor) == ("1d", None)
    item = table_config_item(default)
    assert "event_time_tolerance" not in item
    assert "event_time_floor" not in item
    settings = {"event_time_tolerance": "6h", "event_time_floor": "2020-01-01"}
    config = load_config(_config_dir(tmp_path / "set", settings))
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert (item["event_time_tolerance"], item["event_time_floor"]) == ("6h", "2020-01-01")
    back = table_config_from_item(item)
    assert (back.event_time_tolerance, back.event_time_floor) == ("6h", "2020-01-01")
    assert back == config.table("shop.public.t")


def test_new_columns_defaults_to_add_survives_dynamodb_and_refuse_or_ignore_need_columns(
    tmp_path: Path, tracker_tables: dict
) -> None:
    default = load_config(_config_dir(tmp_path / "default", {})).table("shop.public.t")
    assert default.new_columns is NewColumns.ADD
    assert "new_columns" not in table_config_item(default)
    columns = {"zeta": "string", "seq": "bigint"}
    config = load_config(_config_dir(tmp_path / "set", {"columns": columns, "new_columns": "ignore"}))
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert item["new_columns"] == "ignore"
    assert table_config_from_item(item) == config.table("shop.public.t")
    with pytest.raises(ConfigError, match=r"tables\[0\]\.new_columns: refuse needs columns"):
        load_config(_config_dir(tmp_path / "bare", {"new_columns": "refuse"}))
    with pytest.raises(ConfigError, match=r"tables\[0\]\.new_columns: Input should be 'add', 'refuse' or 'ignore'"):
        load_config(_config_dir(tmp_path / "typo", {"new_columns": "drop"}))


def test_partial_update_settings_default_resolve_and_survive_dynamodb(tmp_path: Path, tracker_tables: dict) -> None:
    default = load_config(_config_dir(tmp_path / "default", {})).table("shop.public.t")
    assert (default.missing_columns, default.unavailable_value_placeholder) == (
        MissingColumns.REFUSE,
        "__debezium_unavailable_value",
    )
    assert not {"missing_columns", "unavailable_value_placeholder"} & set(table_config_item(default))
    settings = {"missing_columns": "keep", "unavailable_value_placeholder": "__toasted__"}
    config = load_config(_config_dir(tmp_path / "set", settings, fmt="debezium"))
    load_into_dynamodb(config, "test", tracker_tables["table_config"], tracker_tables["batch_config"])
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert (item["missing_columns"], item["unavailable_value_placeholder"]) == ("keep", "__toasted__")
    back = table_config_from_item(item)
    assert (back.missing_columns, back.unavailable_value_placeholder) == (MissingColumns.KEEP, "__toasted__")
    assert back == config.table("shop.public.t")
    with pytest.raises(ConfigError, match=r"unavailable_value_placeholder: only for debezium sources, this is a dms"):
        load_config(_config_dir(tmp_path / "dms", {"unavailable_value_placeholder": "x"}))
    with pytest.raises(ConfigError, match=r"missing_columns: Input should be 'refuse', 'keep' or 'null'"):
        load_config(_config_dir(tmp_path / "bad", {"missing_columns": "drop"}))


def test_a_table_built_in_code_takes_the_defaults_an_entry_resolves_to(tmp_path: Path) -> None:
    """Tests, the bench and the sandbox build a table as the Configuration Manager does: what they leave out
    is what a YAML entry that leaves it out resolves to."""
    from odp.config.models import SourceFormat, TableConfig, TableMode, TableType

    built = TableConfig(
        source="shop",
        schema_name="public",
        table="T",
        format=SourceFormat.DMS,
        primary_key=("zeta",),
        ordering_column="seq",
        cadence="fast",
        database="db",
    )
    assert (built.partition_by, built.table_type, built.mode) == ((), TableType.COPY_ON_WRITE, TableMode.CURRENT)
    assert (built.target_table, built.is_active, built.index) == ("t", True, IndexKind.RECORD)
    resolved = load_config(_config_dir(tmp_path, {"table": "T"})).table("shop.public.T")
    # the one difference: a configured table without index leaves it to its first write's size (small_table_rows);
    # a table built in code has the index it names
    assert resolved == built.model_copy(update={"small_table_rows": DEFAULT_SMALL_TABLE_ROWS})


def test_small_table_rows_defaults_for_a_table_that_leaves_its_index_survives_dynamodb_and_yields_to_index(
    tmp_path: Path, tracker_tables: dict
) -> None:
    """Issue 47 item 4: a configured current table without index or index_buckets leaves its index to its first
    write's size, 100,000 rows unless its settings say otherwise; an explicit index, index_buckets or a historical
    table does not."""
    left = load_config(_config_dir(tmp_path / "left", {})).table("shop.public.t")
    assert (left.index, left.small_table_rows) == (IndexKind.RECORD, 100_000)
    own = load_config(_config_dir(tmp_path / "own", {"small_table_rows": 20_000})).table("shop.public.t")
    assert own.small_table_rows == 20_000
    load_into_dynamodb(
        load_config(tmp_path / "own"), "test", tracker_tables["table_config"], tracker_tables["batch_config"]
    )
    item = tracker_tables["table_config"].get_item(Key={"table_id": "shop.public.t"}, ConsistentRead=True)["Item"]
    assert item["small_table_rows"] == 20_000
    assert table_config_from_item(item) == own
    for name, settings in {
        "record": {"index": "record"},
        "simple": {"index": "simple"},
        "bucket": {"index_buckets": 4},
        "historical": {"mode": "historical"},
        "off": {"small_table_rows": 0},
    }.items():
        table = load_config(_config_dir(tmp_path / name, settings)).table("shop.public.t")
        assert table.small_table_rows == 0, name
        assert "small_table_rows" not in table_config_item(table), name
    with pytest.raises(ConfigError, match=r"tables\[0\]\.small_table_rows: Input should be less than or equal"):
        load_config(_config_dir(tmp_path / "huge", {"small_table_rows": 5_000_000}))

"""config/catalog_stacks.yaml through the loader and ``python -m odp.config assign-stacks`` (docs/decisions/034)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from odp.config import ConfigError, load_config
from odp.config.__main__ import main
from tests.support.config_files import valid_files, write_config


def test_a_listed_source_without_tables_is_a_configuration_error(tmp_path: Path) -> None:
    files = valid_files()
    files["catalog_stacks.yaml"] = {"stacks": {"Catalog1": ["shop", "shoop"]}}
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, files))
    assert [str(issue) for issue in caught.value.issues] == [
        "catalog_stacks.yaml: stacks.Catalog1: source 'shoop' has no tables (config/tables/shoop.yaml): fix the "
        "name, or remove it once its tables are removed (no other source moves)"
    ]


def test_a_catalog_stack_name_outside_the_pattern_is_refused(tmp_path: Path) -> None:
    files = valid_files()
    files["catalog_stacks.yaml"] = {"stacks": {"DataLake": ["shop"]}}
    with pytest.raises(ConfigError, match=r"catalog_stacks.yaml: stacks.DataLake.\[key\]"):
        load_config(write_config(tmp_path, files))


def test_assign_stacks_appends_the_new_sources_and_the_file_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_dir = write_config(tmp_path, valid_files())
    assert load_config(config_dir).catalog_stacks.stack_of("shop") == "DataLake"

    assert main(["assign-stacks", "shop", "--config-dir", str(config_dir)]) == 0

    assert capsys.readouterr().out == "Catalog1: + shop\n"
    written = (config_dir / "catalog_stacks.yaml").read_text()
    assert yaml.safe_load(written) == {"stacks": {"Catalog1": ["shop"]}}
    assert load_config(config_dir).catalog_stacks.stack_of("shop") == "Catalog1"
    assert main(["assign-stacks", "shop", "--config-dir", str(config_dir)]) == 0  # listed: stays, nothing added
    assert (config_dir / "catalog_stacks.yaml").read_text() == written
    assert main(["assign-stacks", "nowhere", "--config-dir", str(config_dir)]) == 1
    assert "no tables for source(s) nowhere" in capsys.readouterr().err

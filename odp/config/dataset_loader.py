"""Load ``config/datasets/*.yaml`` with the checks that span files; every problem as a ConfigIssue.

Checked here (no Spark): the file name is the dataset name, the SQL file exists and is not empty,
every source names a configured raw table or dataset, no dataset reads itself through others (a
cycle), names are unique, a ``glue`` dataset reads no ``emr_serverless`` one (the Glue run comes first),
an ``incremental`` dataset has one source whose record key is the dataset's key, and the dataset's
dataset_config item (its SQL included) fits DynamoDB's 400 KB item limit. Whether the SQL parses, reads only
its sources and produces the key is checked by ``etl.datasets.sql_check`` on Spark's parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from odp.config.datasets import (
    DATASETS_DIR,
    DatasetConfig,
    DatasetFile,
    Refresh,
    dependency_order,
    record_key_of,
)
from odp.config.items import dataset_item_issue
from odp.config.loader import ConfigIssue, _read_yaml, _validate
from odp.config.models import EngineName, TableConfig


def _dataset_files(root: Path) -> list[Path]:
    folder = root / DATASETS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))


def _read_sql(path: Path, display: str, where: str, issues: list[ConfigIssue]) -> str | None:
    sql_display = f"{DATASETS_DIR}/{path.name}"
    if not path.is_file():
        issues.append(ConfigIssue(display, where, f"SQL file {sql_display} not found"))
        return None
    text = path.read_text(encoding="utf-8").strip().rstrip(";").strip()
    if not text:
        issues.append(ConfigIssue(display, where, f"SQL file {sql_display} is empty"))
        return None
    return text


Parsed = tuple[DatasetFile, str, Path]  # a dataset file valid on its own, its display name, its path


def _parse_dataset_files(root: Path, issues: list[ConfigIssue]) -> list[Parsed]:
    """Every datasets/*.yaml valid on its own, named after its file, each name once."""
    parsed: list[Parsed] = []
    names: dict[str, str] = {}
    for path in _dataset_files(root):
        display = f"{DATASETS_DIR}/{path.name}"
        data = _read_yaml(path, display, issues)
        model = _validate(DatasetFile, data, display, issues) if data is not None else None
        if model is None:
            continue
        if model.name != path.stem:
            issues.append(ConfigIssue(display, "name", f"name {model.name!r} must match the file name {path.stem!r}"))
        if model.name in names:
            issues.append(
                ConfigIssue(display, "name", f"dataset {model.name!r} is also defined in {names[model.name]}")
            )
            continue
        names[model.name] = display
        parsed.append((model, display, path))
    return parsed


def _unknown_source_issues(
    model: DatasetFile, display: str, known_tables: set[str], datasets: dict[str, DatasetFile]
) -> list[ConfigIssue]:
    """Pure: each source that names no configured raw table or dataset."""
    issues = []
    for index, source in enumerate(model.sources):
        if source.table is not None and source.table not in known_tables:
            reason = f"unknown raw table {source.table!r} (a table id <source>.<schema>.<table> from tables/)"
            issues.append(ConfigIssue(display, f"sources[{index}].table", reason))
        if source.dataset is not None and source.dataset not in datasets:
            issues.append(ConfigIssue(display, f"sources[{index}].dataset", f"unknown dataset {source.dataset!r}"))
    return issues


def _engine_order_issues(model: DatasetFile, display: str, datasets: dict[str, DatasetFile]) -> list[ConfigIssue]:
    """A glue dataset reading an emr_serverless dataset: the Glue run goes first, so it would read a stale one."""
    if model.engine is not EngineName.GLUE:
        return []
    return [
        ConfigIssue(
            display,
            f"sources[{index}].dataset",
            f"dataset {model.name!r} runs on glue and reads {source.dataset!r}, which runs on emr_serverless: the "
            "EMR Serverless run follows the Glue run, so move it to emr_serverless too (or its source to glue)",
        )
        for index, source in enumerate(model.sources)
        if source.dataset in datasets and datasets[source.dataset].engine is EngineName.EMR_SERVERLESS
    ]


def _dataset_config(model: DatasetFile, sql: str, display: str) -> DatasetConfig:
    return DatasetConfig(
        name=model.name,
        zone=model.zone,
        database=model.database,
        sources=tuple(model.sources),
        sql=sql,
        key=tuple(model.key),
        partition_by=tuple(model.partition_by),
        table_type=model.table_type,
        refresh=model.refresh,
        quality=tuple(model.quality),
        file=display,
        engine=model.engine,
    )


def _in_dependency_order(
    resolved: list[DatasetConfig], parsed: list[Parsed], issues: list[ConfigIssue]
) -> list[DatasetConfig]:
    """The datasets, each after its sources; none (with an issue on each dataset of it) on a cycle."""
    try:
        return dependency_order(resolved)
    except ValueError as error:
        in_cycle = str(error).removeprefix("cycle: ").split(" -> ")
        for model, display, _ in parsed:
            if model.name in in_cycle:
                issues.append(ConfigIssue(display, "sources", f"datasets read each other in a {error}"))
        return []


def load_datasets(
    root: Path, tables: Sequence[TableConfig], issues: list[ConfigIssue], *, known_table_ids: set[str] | None = None
) -> list[DatasetConfig]:
    """Every dataset of ``root/datasets``, resolved, in dependency order; problems go to ``issues``.

    ``known_table_ids``: every table id named in tables/*.yaml, valid or not (a source naming an
    invalid table is not reported a second time); default: the ids of ``tables``.
    """
    by_table = {table.table_id: table for table in tables}
    known_tables = known_table_ids if known_table_ids is not None else set(by_table)
    parsed = _parse_dataset_files(root, issues)
    by_name = {model.name: model for model, _, _ in parsed}
    resolved: list[DatasetConfig] = []
    for model, display, path in parsed:
        before = len(issues)
        issues.extend(_unknown_source_issues(model, display, known_tables, by_name))
        if model.refresh is Refresh.INCREMENTAL:
            _check_incremental(model, display, by_table, by_name, issues)
        issues.extend(_engine_order_issues(model, display, by_name))
        sql = _read_sql(path.parent / (model.sql or f"{model.name}.sql"), display, "sql", issues)
        if sql is None or len(issues) != before:
            continue
        dataset = _dataset_config(model, sql, display)
        too_large = dataset_item_issue(dataset)
        if too_large is not None:
            issues.append(ConfigIssue(display, "sql", too_large))
            continue
        resolved.append(dataset)
    return _in_dependency_order(resolved, parsed, issues)


def _check_incremental(
    model: DatasetFile,
    display: str,
    tables: dict[str, TableConfig],
    datasets: dict[str, DatasetFile],
    issues: list[ConfigIssue],
) -> None:
    """An incremental dataset maps each row of one source to at most one row with the same key."""
    if len(model.sources) != 1:
        issues.append(
            ConfigIssue(
                display,
                "refresh",
                f"incremental needs exactly one source, found {len(model.sources)} (a join is recomputed: use full)",
            )
        )
        return
    source = model.sources[0]
    if source.table is not None and source.table in tables:
        source_key = record_key_of(tables[source.table])
    elif source.dataset is not None and source.dataset in datasets:
        source_key = tuple(datasets[source.dataset].key)
    else:
        return  # unknown source: reported above
    if tuple(model.key) != source_key:
        issues.append(
            ConfigIssue(
                display,
                "key",
                f"incremental needs the source's record key {list(source_key)} as the key, found {model.key} "
                "(an aggregate or re-keyed dataset is recomputed: use full)",
            )
        )

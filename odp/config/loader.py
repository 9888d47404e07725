"""Load and validate a configuration directory as one unit.

``load_config`` reads ``environments.yaml``, ``cadences.yaml`` and every ``tables/*.yaml``, checks
each file against its model and then the rules that span files, and either returns an
:class:`OdpConfig` or raises :class:`ConfigError` carrying *every* issue found, each naming the file,
the path inside it and the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from odp.config.models import (
    DEFAULT_MAX_FILE_ATTEMPTS,
    SOURCE_SETTINGS,
    CadencesFile,
    Environment,
    EnvironmentsFile,
    SourceFormat,
    TableConfig,
    TableEntry,
    TableMode,
    TablesFile,
    TableType,
    source_setting_issues,
    table_id,
)
from odp.config.streams import STREAMS_FILE, StreamsFile, stream_issues
from odp.naming import physical_names

ENVIRONMENTS_FILE = "environments.yaml"
CADENCES_FILE = "cadences.yaml"
TABLES_DIR = "tables"
# ODP keeps its own data beside the tables (e.g. <database>/_odp_tombstones/): no table may take such a name.
RESERVED_PREFIX = "_odp"

ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in one place: ``file: path: reason``."""

    file: str
    path: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.path}" if self.path else self.file
        return f"{where}: {self.reason}"


class ConfigError(Exception):
    """The configuration is invalid; ``issues`` lists every problem found."""

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        self.issues = tuple(issues)
        lines = "\n".join(f"  - {issue}" for issue in self.issues)
        super().__init__(f"{len(self.issues)} configuration error(s):\n{lines}")


@dataclass(frozen=True)
class OdpConfig:
    """The whole validated configuration."""

    environments: EnvironmentsFile
    cadences: CadencesFile
    tables: tuple[TableConfig, ...]
    table_files: dict[str, str] = field(default_factory=dict)  # table_id -> file it came from
    streams: StreamsFile = field(default_factory=StreamsFile)  # streams.yaml (optional file)
    datasets: tuple[Any, ...] = ()  # odp.config.datasets.DatasetConfig, in dependency order

    def table(self, table_id: str) -> TableConfig:
        """The table with this id.

        Raises:
            KeyError: no table has this id.
        """
        for table in self.tables:
            if table.table_id == table_id:
                return table
        raise KeyError(f"no table {table_id!r} in the configuration")

    def tables_for_cadence(self, cadence: str, *, active_only: bool = True) -> list[TableConfig]:
        return [t for t in self.tables if t.cadence == cadence and (t.is_active or not active_only)]


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that rejects duplicate mapping keys (PyYAML keeps the last one silently)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _format_loc(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _read_yaml(path: Path, display: str, issues: list[ConfigIssue]) -> Any | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        issues.append(ConfigIssue(display, "", "file not found"))
        return None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        issues.append(ConfigIssue(display, where, f"not valid YAML: {problem}"))
        return None
    if data is None:
        issues.append(ConfigIssue(display, "", "file is empty"))
        return None
    if not isinstance(data, dict):
        issues.append(ConfigIssue(display, "", f"must be a mapping at the top level, found {type(data).__name__}"))
        return None
    return data


def _validate(model: type[ModelT], data: Any, display: str, issues: list[ConfigIssue]) -> ModelT | None:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        for detail in error.errors():
            reason = detail["msg"].removeprefix("Value error, ")
            if detail["type"] == "extra_forbidden":
                reason = "unknown key (check the spelling against the JSON schema in config/schema/)"
            issues.append(ConfigIssue(display, _format_loc(tuple(detail["loc"])), reason))
        return None


def _valid_entries(model: type[ModelT], data: dict[str, Any], name: str) -> dict[str, ModelT]:
    """The entries of the mapping ``data[name]`` that are valid on their own (errors are reported elsewhere)."""
    raw = data.get(name)
    valid: dict[str, ModelT] = {}
    if isinstance(raw, dict):
        for key, value in raw.items():
            try:
                valid[str(key)] = model.model_validate(value)
            except ValidationError:
                continue
    return valid


def _validate_tables_file(
    data: dict[str, Any], display: str, issues: list[ConfigIssue]
) -> tuple[TablesFile | None, list[int]]:
    """The tables file and the index in the file of each of its tables.

    When some tables are invalid: the file with its valid tables only. Every error is reported
    once, from the whole file; the valid tables still go through the checks that follow (keys,
    cadences, duplicates), so one run of validate reports everything.
    """
    whole = _validate(TablesFile, data, display, issues)
    if whole is not None:
        return whole, list(range(len(whole.tables)))
    entries = data.get("tables")
    if not isinstance(entries, list):
        return None, []
    indices = []
    for index, entry in enumerate(entries):
        try:
            TableEntry.model_validate(entry)
        except ValidationError:
            continue
        indices.append(index)
    try:
        return TablesFile.model_validate({**data, "tables": [entries[i] for i in indices]}), indices
    except ValidationError:
        return None, []  # the file's own fields (source, format, defaults) are invalid: reported above


def batch_only_issues(pick: Callable[[str], Any], stream: str | None) -> list[tuple[str, str]]:
    """Pure: (setting, reason) for each batch-only setting a streamed table sets (the stream job ignores them)."""
    if stream is None or pick("index_buckets") is None:
        return []
    return [("index_buckets", "applies to batch tables only (a streamed table is written by its stream job)")]


def _resolve_table(
    tables_file: TablesFile, index: int, entry: TableEntry, display: str, issues: list[ConfigIssue]
) -> TableConfig | None:
    """Merge a table entry over its file's defaults and check what must be set once merged."""
    defaults = tables_file.defaults

    def pick(name: str) -> Any:
        own = getattr(entry, name)
        return own if own is not None else getattr(defaults, name)

    where = f"tables[{index}]"
    before = len(issues)
    primary_key = pick("primary_key")
    cadence = pick("cadence")
    database = pick("database")
    ordering = pick("ordering_column")
    partition_by = pick("partition_by") or []
    columns = pick("columns")
    if not primary_key:
        issues.append(ConfigIssue(display, f"{where}.primary_key", "required (here or in defaults)"))
    elif len(set(primary_key)) != len(primary_key):
        issues.append(ConfigIssue(display, f"{where}.primary_key", f"repeats a column: {primary_key}"))
    stream = pick("stream")
    if cadence is None and stream is None:
        issues.append(ConfigIssue(display, f"{where}.cadence", "required (here or in defaults), or a stream"))
    if cadence is not None and stream is not None:
        issues.append(
            ConfigIssue(
                display,
                f"{where}.stream",
                f"a table is either batch (cadence {cadence!r}) or stream (stream {stream!r}), not both",
            )
        )
    if database is None:
        issues.append(ConfigIssue(display, f"{where}.database", "required (here or in defaults)"))
    if ordering is None and tables_file.format is SourceFormat.DMS:
        issues.append(
            ConfigIssue(
                display,
                f"{where}.ordering_column",
                "required for dms sources (the column DMS fills with the change sequence or commit time)",
            )
        )
    if len(set(partition_by)) != len(partition_by):
        issues.append(ConfigIssue(display, f"{where}.partition_by", f"repeats a column: {partition_by}"))
    issues.extend(ConfigIssue(display, f"{where}.{name}", reason) for name, reason in batch_only_issues(pick, stream))
    if columns is not None:
        declared = set(columns)
        for role, names in (
            ("primary_key", primary_key or []),
            ("ordering_column", [ordering] if ordering else []),
            ("partition_by", partition_by),
        ):
            for name in names:
                if name not in declared:
                    issues.append(
                        ConfigIssue(display, f"{where}.{role}", f"column {name!r} is not declared in columns")
                    )
    issues.extend(
        ConfigIssue(display, f"{where}.{name}", reason)
        for name, reason in source_setting_issues(tables_file.format, pick, [*(primary_key or []), *partition_by])
    )
    if len(issues) != before:
        return None
    return TableConfig(
        source=tables_file.source,
        schema_name=entry.schema_name,
        table=entry.table,
        format=tables_file.format,
        primary_key=tuple(primary_key),
        ordering_column=ordering,
        partition_by=tuple(partition_by),
        table_type=pick("table_type") or TableType.COPY_ON_WRITE,
        mode=pick("mode") or TableMode.CURRENT,
        cadence=cadence,
        database=database,
        target_table=entry.target_table or entry.table.lower(),
        is_active=True if pick("is_active") is None else pick("is_active"),
        columns=columns,
        max_file_attempts=pick("max_file_attempts") or DEFAULT_MAX_FILE_ATTEMPTS,
        index_buckets=pick("index_buckets"),
        stream=stream,
        **{name: pick(name) for name in SOURCE_SETTINGS if pick(name) is not None},
    )


def _check_environments(environments: dict[str, Environment], issues: list[ConfigIssue]) -> None:
    """Rules across environments: prod needs a manual approval; one branch deploys one environment."""
    branches: dict[str, str] = {}
    for name, env in environments.items():
        if name == "prod" and not env.manual_approval:
            issues.append(
                ConfigIssue(
                    ENVIRONMENTS_FILE, "environments.prod.manual_approval", "prod must set manual_approval: true"
                )
            )
        if env.branch is None:
            continue
        if env.branch in branches:
            issues.append(
                ConfigIssue(
                    ENVIRONMENTS_FILE,
                    f"environments.{name}.branch",
                    f"branch {env.branch!r} already deploys environment {branches[env.branch]!r}",
                )
            )
        branches.setdefault(env.branch, name)


def _check_physical_names(environments: EnvironmentsFile, cadences: CadencesFile, issues: list[ConfigIssue]) -> None:
    """Every AWS name an environment and its cadences become follows its service's rule (odp.naming.NAME_RULES):
    a name AWS refuses fails here, naming the setting to shorten, not halfway through a deploy."""
    reported: set[str] = set()
    for env_name, env in environments.environments.items():
        for physical in physical_names(env_name, env.account, env.region, list(cadences.cadences)):
            problem = physical.problem()
            if problem is None or physical.name in reported:
                continue
            reported.add(physical.name)
            if physical.cadence is None:
                issues.append(ConfigIssue(ENVIRONMENTS_FILE, f"environments.{env_name}", problem))
            else:
                issues.append(
                    ConfigIssue(
                        CADENCES_FILE, f"cadences.{physical.cadence}", f"in environment {env_name!r}: {problem}"
                    )
                )


def _table_files(config_dir: Path) -> Iterator[Path]:
    tables_dir = config_dir / TABLES_DIR
    if tables_dir.is_dir():
        yield from sorted(p for p in tables_dir.iterdir() if p.suffix in (".yaml", ".yml"))


def _load_tables(
    root: Path, cadence_names: set[str] | None, issues: list[ConfigIssue]
) -> tuple[list[TableConfig], dict[str, str]]:
    """Every tables/*.yaml, resolved, with the checks that span table files and cadences."""
    tables: list[TableConfig] = []
    table_files: dict[str, str] = {}
    table_locations: dict[str, str] = {}
    target_locations: dict[tuple[str, str], str] = {}
    sources: dict[str, str] = {}
    files = list(_table_files(root))
    if not files:
        issues.append(ConfigIssue(f"{TABLES_DIR}/", "", "no table files (tables/<source>.yaml) found"))
    for path in files:
        display = f"{TABLES_DIR}/{path.name}"
        data = _read_yaml(path, display, issues)
        tables_file, indices = _validate_tables_file(data, display, issues) if data is not None else (None, [])
        if tables_file is None:
            continue
        if tables_file.source != path.stem:
            issues.append(
                ConfigIssue(display, "source", f"source {tables_file.source!r} must match the file name {path.stem!r}")
            )
        if tables_file.source in sources:
            issues.append(
                ConfigIssue(
                    display, "source", f"source {tables_file.source!r} is also in {sources[tables_file.source]}"
                )
            )
        sources.setdefault(tables_file.source, display)
        for index, entry in zip(indices, tables_file.tables, strict=True):
            before = len(issues)
            table = _resolve_table(tables_file, index, entry, display, issues)
            # The checks across tables run on what the entry names, resolved or not: all errors at once.
            where = f"tables[{index}]"
            identity = table_id(tables_file.source, entry.schema_name, entry.table)
            target_table = entry.target_table or entry.table.lower()
            database = entry.database or tables_file.defaults.database
            cadence = entry.cadence or tables_file.defaults.cadence
            if identity in table_locations:
                issues.append(
                    ConfigIssue(
                        display, where, f"duplicate table id {identity!r} (first at {table_locations[identity]})"
                    )
                )
            if target_table.startswith(RESERVED_PREFIX):
                issues.append(
                    ConfigIssue(
                        display,
                        f"{where}.target_table",
                        f"{target_table!r}: names starting with {RESERVED_PREFIX!r} are reserved for ODP",
                    )
                )
            target = (database, target_table)
            if database is not None and target in target_locations and identity not in table_locations:
                issues.append(
                    ConfigIssue(
                        display,
                        f"{where}.target_table",
                        f"target {target[0]}.{target[1]} is already written by {target_locations[target]}",
                    )
                )
            if cadence_names is not None and cadence is not None and cadence not in cadence_names:
                known = ", ".join(sorted(cadence_names))
                issues.append(ConfigIssue(display, f"{where}.cadence", f"unknown cadence {cadence!r} (known: {known})"))
            table_locations.setdefault(identity, f"{display} {where}")
            if database is not None:
                target_locations.setdefault(target, f"{display} {where}")
            if table is None or len(issues) != before:
                continue
            table_files[table.table_id] = display
            tables.append(table)

    return tables, table_files


def _load_streams(
    root: Path, tables: list[TableConfig], table_files: dict[str, str], issues: list[ConfigIssue]
) -> StreamsFile | None:
    """streams.yaml (optional) and the rules across it and the tables (see odp.config.streams)."""
    path = root / STREAMS_FILE
    streams = StreamsFile()
    if path.is_file():
        data = _read_yaml(path, STREAMS_FILE, issues)
        streams = _validate(StreamsFile, data, STREAMS_FILE, issues) if data is not None else None
        if streams is None:
            return None
    for subject, reason in stream_issues(tables, streams, check_unused=not issues):
        if subject in table_files:
            issues.append(ConfigIssue(table_files[subject], subject, reason))
        else:
            issues.append(ConfigIssue(STREAMS_FILE, f"streams.{subject}", reason))
    return streams


def load_config(config_dir: str | Path) -> OdpConfig:
    """Read and validate a configuration directory.

    Raises:
        ConfigError: with every issue found, across all files.
    """
    root = Path(config_dir)
    issues: list[ConfigIssue] = []
    if not root.is_dir():
        raise ConfigError([ConfigIssue(str(root), "", "configuration directory not found")])

    environments = None
    data = _read_yaml(root / ENVIRONMENTS_FILE, ENVIRONMENTS_FILE, issues)
    if data is not None:
        environments = _validate(EnvironmentsFile, data, ENVIRONMENTS_FILE, issues)
        # The rules across environments run even when another part of the file is invalid.
        valid = environments.environments if environments is not None else None
        _check_environments(valid or _valid_entries(Environment, data, "environments"), issues)

    cadences = None
    cadence_names: set[str] | None = None
    data = _read_yaml(root / CADENCES_FILE, CADENCES_FILE, issues)
    if data is not None:
        cadences = _validate(CadencesFile, data, CADENCES_FILE, issues)
        raw = data.get("cadences")
        # A table naming a cadence that exists but is invalid is not reported a second time.
        cadence_names = set(cadences.cadences) if cadences is not None else set(raw) if isinstance(raw, dict) else None

    if environments is not None and cadences is not None:
        _check_physical_names(environments, cadences, issues)

    tables, table_files = _load_tables(root, cadence_names, issues)
    streams = _load_streams(root, tables, table_files, issues)
    from odp.config.dataset_loader import load_datasets  # noqa: PLC0415 - it imports this module

    datasets = load_datasets(root, tables, issues)

    if issues or environments is None or cadences is None:
        raise ConfigError(issues)
    return OdpConfig(
        environments=environments,
        cadences=cadences,
        tables=tuple(tables),
        table_files=table_files,
        streams=streams or StreamsFile(),
        datasets=tuple(datasets),
    )

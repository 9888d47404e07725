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

from odp.config.access import ACCESS_FILE, AccessFile, access_issues
from odp.config.catalog_stacks import CATALOG_STACKS_FILE, CatalogStacksFile, catalog_stack_issues
from odp.config.models import (
    DEFAULT_SHARD_COLUMN,
    INDEX_CONFLICT,
    CadencesFile,
    Environment,
    EnvironmentsFile,
    IndexKind,
    SourceFormat,
    TableConfig,
    TableEntry,
    TablesFile,
    source_setting_issues,
    table_id,
)
from odp.config.patterns import MergedRoute, Pick, SourceRule, resolve_table
from odp.config.streams import STREAMS_FILE, StreamsFile, stream_issues
from odp.naming import physical_names, stream_physical_names

ENVIRONMENTS_FILE = "environments.yaml"
CADENCES_FILE = "cadences.yaml"
TABLES_DIR = "tables"
# ODP keeps its own data beside the tables (e.g. <database>/_odp_tombstones/): no table may take such a name.
RESERVED_PREFIX = "_odp"
_REQUIRED = "required (here or in defaults)"

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
    access: AccessFile = field(default_factory=AccessFile)  # access.yaml (optional file)
    rules: tuple[SourceRule, ...] = ()  # one per source with include globs or merged tables (odp.config.patterns)
    catalog_stacks: CatalogStacksFile = field(default_factory=CatalogStacksFile)  # catalog_stacks.yaml (optional)

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


def index_issues(pick: Callable[[str], Any], stream: str | None) -> list[tuple[str, str]]:
    """Pure: (setting, reason) for the index settings of a merged table entry: ``index: simple`` with
    ``index_buckets`` (they exclude each other), and either on a streamed table (batch tables only: the stream job
    ignores them)."""
    issues = []
    if pick("index") not in (None, IndexKind.RECORD) and pick("index_buckets") is not None:
        issues.append(("index", INDEX_CONFLICT))
    if stream is not None:
        reason = "applies to batch tables only (a streamed table is written by its stream job)"
        issues += [(name, reason) for name in ("index_buckets", "index", "small_table_rows") if pick(name) is not None]
    return issues


def _picker(tables_file: TablesFile, entry: TableEntry) -> Pick:
    def pick(name: str) -> Any:
        own = getattr(entry, name)
        return own if own is not None else getattr(tables_file.defaults, name)

    return pick


def _repeats(name: str, columns: list[str]) -> list[tuple[str, str]]:
    return [(name, f"repeats a column: {columns}")] if len(set(columns)) != len(columns) else []


def _required_issues(pick: Pick, source_format: SourceFormat) -> list[tuple[str, str]]:
    """Pure: (setting, reason) for what a table must set once merged over its defaults."""
    primary_key, cadence, stream = pick("primary_key"), pick("cadence"), pick("stream")
    issues = _repeats("primary_key", primary_key) if primary_key else [("primary_key", _REQUIRED)]
    if cadence is None and stream is None:
        issues.append(("cadence", f"{_REQUIRED}, or a stream"))
    if cadence is not None and stream is not None:
        issues.append(
            ("stream", f"a table is either batch (cadence {cadence!r}) or stream (stream {stream!r}), not both")
        )
    if pick("database") is None:
        issues.append(("database", _REQUIRED))
    if pick("ordering_column") is None and source_format is SourceFormat.DMS:
        issues.append(
            (
                "ordering_column",
                "required for dms sources (the column DMS fills with the change sequence or commit time)",
            )
        )
    return issues + _repeats("partition_by", pick("partition_by") or [])


def _undeclared_column_issues(pick: Pick) -> list[tuple[str, str]]:
    """Pure: (setting, reason) for each key, ordering or partition column missing from ``columns``."""
    columns = pick("columns")
    if columns is None:
        return []
    ordering = pick("ordering_column")
    roles = {
        "primary_key": pick("primary_key") or [],
        "ordering_column": [ordering] if ordering else [],
        "partition_by": pick("partition_by") or [],
    }
    return [
        (role, f"column {name!r} is not declared in columns")
        for role, names in roles.items()
        for name in names
        if name not in columns
    ]


def _table_issues(pick: Pick, source_format: SourceFormat) -> list[tuple[str, str]]:
    """Pure: every (setting, reason) of a merged table entry, in the order they are reported."""
    key_columns = [*(pick("primary_key") or []), *(pick("partition_by") or [])]
    return [
        *_required_issues(pick, source_format),
        *index_issues(pick, pick("stream")),
        *_undeclared_column_issues(pick),
        *source_setting_issues(source_format, pick, key_columns),
    ]


def shard_issues(entry: TableEntry, pick: Pick) -> list[tuple[str, str]]:
    """Pure: (setting, reason) for a merged entry (``from``) whose shard cannot be part of its key."""
    if entry.from_ is None:
        return []
    shard = entry.shard_column or DEFAULT_SHARD_COLUMN
    issues = []
    if shard in (pick("primary_key") or []):
        issues.append(("shard_column", f"{shard!r} is in primary_key: a merged table puts its shard first itself"))
    if pick("stream") is not None:
        issues.append(("stream", "a merged table (from) is a batch table: the stream job writes one source table"))
    return issues


def include_issues(tables_file: TablesFile, cadence_names: set[str] | None) -> list[tuple[str, str]]:
    """Pure: (setting, reason) for defaults that cannot make the tables ``include`` onboards (they have no entry)."""
    if tables_file.include is None:
        return []
    defaults = tables_file.defaults
    found = _table_issues(lambda name: getattr(defaults, name), tables_file.format)
    if cadence_names is not None and defaults.cadence is not None and defaults.cadence not in cadence_names:
        found.append(("cadence", f"unknown cadence {defaults.cadence!r} (known: {', '.join(sorted(cadence_names))})"))
    if defaults.stream is not None:
        found.append(("stream", "include onboards batch tables: a streamed table needs an entry of its own"))
    return [(name, f"{reason} (include onboards tables from defaults)") for name, reason in found]


def _resolve_table(
    tables_file: TablesFile, index: int, entry: TableEntry, display: str, issues: list[ConfigIssue]
) -> TableConfig | None:
    """Merge a table entry over its file's defaults and check what must be set once merged; the
    table, or None with its problems added to ``issues``."""
    pick = _picker(tables_file, entry)
    found = _table_issues(pick, tables_file.format) + shard_issues(entry, pick)
    issues.extend(ConfigIssue(display, f"tables[{index}].{name}", reason) for name, reason in found)
    return None if found else resolve_table(tables_file.source, tables_file.format, entry, pick)


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


def _check_stream_names(environments: EnvironmentsFile, streams: StreamsFile, issues: list[ConfigIssue]) -> None:
    """Every AWS name a stream becomes in each environment follows its service's rule: a stream name too
    long for ``odp-<env>-stream-<stream>-job-stopped`` (an EventBridge rule: 64 characters) fails here."""
    for stream in streams.streams:
        for env_name in environments.environments:
            problems = [p for p in (n.problem() for n in stream_physical_names(env_name, stream)) if p is not None]
            issues.extend(
                ConfigIssue(STREAMS_FILE, f"streams.{stream}", f"in environment {env_name!r}: {problem}")
                for problem in problems
            )


def _table_files(config_dir: Path) -> Iterator[Path]:
    tables_dir = config_dir / TABLES_DIR
    if tables_dir.is_dir():
        yield from sorted(p for p in tables_dir.iterdir() if p.suffix in (".yaml", ".yml"))


@dataclass
class _Seen:
    """What the table files read so far named, and where first: across files, an id, a target and
    a source are each taken once."""

    tables: dict[str, str] = field(default_factory=dict)  # table id -> "<file> tables[<n>]"
    targets: dict[tuple[str, str], str] = field(default_factory=dict)  # (database, table) -> "<file> tables[<n>]"
    sources: dict[str, str] = field(default_factory=dict)  # source -> file


def _source_issues(tables_file: TablesFile, path: Path, display: str, seen: _Seen) -> list[ConfigIssue]:
    """Pure: a tables file's source is its file name and is in no other file."""
    source = tables_file.source
    issues = []
    if source != path.stem:
        issues.append(ConfigIssue(display, "source", f"source {source!r} must match the file name {path.stem!r}"))
    if source in seen.sources:
        issues.append(ConfigIssue(display, "source", f"source {source!r} is also in {seen.sources[source]}"))
    return issues


def _cross_table_issues(
    tables_file: TablesFile,
    index: int,
    entry: TableEntry,
    display: str,
    *,
    seen: _Seen,
    cadence_names: set[str] | None,
) -> list[ConfigIssue]:
    """The checks across tables, on what the entry names, resolved or not (all errors at once); the
    entry's id and target are then recorded in ``seen``."""
    where = f"tables[{index}]"
    identity = table_id(tables_file.source, entry.source_schema, entry.source_table)
    target_table = entry.target_table or entry.source_table.lower()
    database = entry.database or tables_file.defaults.database
    cadence = entry.cadence or tables_file.defaults.cadence
    target = (database, target_table)
    issues = []
    if identity in seen.tables:
        issues.append(
            ConfigIssue(display, where, f"duplicate table id {identity!r} (first at {seen.tables[identity]})")
        )
    if target_table.startswith(RESERVED_PREFIX):
        reason = f"{target_table!r}: names starting with {RESERVED_PREFIX!r} are reserved for ODP"
        issues.append(ConfigIssue(display, f"{where}.target_table", reason))
    if database is not None and target in seen.targets and identity not in seen.tables:
        reason = f"target {database}.{target_table} is already written by {seen.targets[target]}"
        issues.append(ConfigIssue(display, f"{where}.target_table", reason))
    if cadence_names is not None and cadence is not None and cadence not in cadence_names:
        known = ", ".join(sorted(cadence_names))
        issues.append(ConfigIssue(display, f"{where}.cadence", f"unknown cadence {cadence!r} (known: {known})"))
    seen.tables.setdefault(identity, f"{display} {where}")
    if database is not None:
        seen.targets.setdefault(target, f"{display} {where}")
    return issues


def _read_tables_file(path: Path, issues: list[ConfigIssue]) -> tuple[TablesFile | None, list[int]]:
    """One tables file, validated (see _validate_tables_file); problems go to ``issues``."""
    display = f"{TABLES_DIR}/{path.name}"
    data = _read_yaml(path, display, issues)
    return _validate_tables_file(data, display, issues) if data is not None else (None, [])


def source_rule(tables_file: TablesFile, tables: list[TableConfig]) -> SourceRule | None:
    """Pure: the rule the File Manager places a source's files by; None when it has no globs (include, from)."""
    merged = tuple(
        MergedRoute(glob=f"{t.schema_name}.{t.table}", table_id=t.table_id)
        for t in tables
        if t.source == tables_file.source and t.shard_column is not None
    )
    if tables_file.include is None and not merged:
        return None
    return SourceRule(
        source=tables_file.source,
        format=tables_file.format,
        include=tuple(tables_file.include or ()),
        exclude=tuple(tables_file.exclude),
        defaults=tables_file.defaults,
        merged=merged,
    )


def outside_prefix(database: str, prefix: str) -> str:
    """Pure: why ``database`` is refused under ``database_prefix``."""
    return (
        f"database {database!r} does not start with database_prefix {prefix!r} ({ENVIRONMENTS_FILE}): the jobs' "
        f"roles are granted the catalog by {prefix}* only"
    )


def database_prefix_issues(tables_file: TablesFile, indices: list[int], prefix: str | None) -> list[tuple[str, str]]:
    """Pure: (path, reason) for each database a tables file names (its defaults, which onboarded tables take too, and
    each entry's own) that does not start with ``prefix``; none without a prefix."""
    if prefix is None:
        return []
    named = [("defaults.database", tables_file.defaults.database)]
    entries = zip(indices, tables_file.tables, strict=True)
    named += [(f"tables[{index}].database", entry.database) for index, entry in entries]
    return [(path, outside_prefix(name, prefix)) for path, name in named if name and not name.startswith(prefix)]


def _load_tables(
    root: Path,
    cadence_names: set[str] | None,
    issues: list[ConfigIssue],
    rules: list[SourceRule] | None = None,
    *,
    database_prefix: str | None = None,
) -> tuple[list[TableConfig], dict[str, str]]:
    """Every tables/*.yaml, resolved, with the checks that span table files and cadences (and, with a
    ``database_prefix``, that each database starts with it); each source's rule (include globs, merged tables) goes
    to ``rules``."""
    tables: list[TableConfig] = []
    table_files: dict[str, str] = {}  # table id -> the file it came from
    seen = _Seen()
    files = list(_table_files(root))
    if not files:
        issues.append(ConfigIssue(f"{TABLES_DIR}/", "", "no table files (tables/<source>.yaml) found"))
    for path in files:
        display = f"{TABLES_DIR}/{path.name}"
        tables_file, indices = _read_tables_file(path, issues)
        if tables_file is None:
            continue
        issues.extend(_source_issues(tables_file, path, display, seen))
        found = include_issues(tables_file, cadence_names)
        issues.extend(ConfigIssue(display, f"defaults.{name}", reason) for name, reason in found)
        found = database_prefix_issues(tables_file, indices, database_prefix)
        issues.extend(ConfigIssue(display, path, reason) for path, reason in found)
        seen.sources.setdefault(tables_file.source, display)
        first = len(tables)
        for index, entry in zip(indices, tables_file.tables, strict=True):
            before = len(issues)
            table = _resolve_table(tables_file, index, entry, display, issues)
            issues.extend(
                _cross_table_issues(tables_file, index, entry, display, seen=seen, cadence_names=cadence_names)
            )
            if table is not None and len(issues) == before:
                table_files[table.table_id] = display
                tables.append(table)
        rule = source_rule(tables_file, tables[first:])
        if rule is not None and rules is not None:
            rules.append(rule)
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


def _optional_file(root: Path, name: str, model: type[ModelT], issues: list[ConfigIssue]) -> ModelT | None:
    """An optional file's model: its empty default when the file is absent, None when it is invalid (reported)."""
    path = root / name
    if not path.is_file():
        return model()
    data = _read_yaml(path, name, issues)
    return _validate(model, data, name, issues) if data is not None else None


def _load_access(
    root: Path,
    environments: EnvironmentsFile | None,
    tables: list[TableConfig],
    datasets: list[Any],
    issues: list[ConfigIssue],
) -> AccessFile | None:
    """access.yaml (optional) and its grants checked against the tables and datasets (see odp.config.access)."""
    access = _optional_file(root, ACCESS_FILE, AccessFile, issues)
    if access is None:
        return None
    known_envs = environments.environments if environments is not None else {}
    for where, reason in access_issues(access, tables, datasets, known_envs):
        issues.append(ConfigIssue(ACCESS_FILE, where, reason))
    return access


def _load_catalog_stacks(root: Path, tables: list[TableConfig], issues: list[ConfigIssue]) -> CatalogStacksFile | None:
    """catalog_stacks.yaml (optional): which stack holds each source's catalog (see odp.config.catalog_stacks)."""
    stacks = _optional_file(root, CATALOG_STACKS_FILE, CatalogStacksFile, issues)
    if stacks is None:
        return None
    issues.extend(
        ConfigIssue(CATALOG_STACKS_FILE, where, reason) for where, reason in catalog_stack_issues(stacks, tables)
    )
    return stacks


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

    rules: list[SourceRule] = []
    prefix = environments.database_prefix if environments is not None else None
    tables, table_files = _load_tables(root, cadence_names, issues, rules, database_prefix=prefix)
    streams = _load_streams(root, tables, table_files, issues)
    if environments is not None and streams is not None:
        _check_stream_names(environments, streams, issues)
    from odp.config.dataset_loader import load_datasets  # noqa: PLC0415 - it imports this module

    datasets = load_datasets(root, tables, issues)
    if prefix is not None:
        outside = [d for d in datasets if not d.database.startswith(prefix)]
        issues.extend(ConfigIssue(d.file, "database", outside_prefix(d.database, prefix)) for d in outside)
    access = _load_access(root, environments, tables, datasets, issues)
    catalog_stacks = _load_catalog_stacks(root, tables, issues)

    if issues or environments is None or cadences is None:
        raise ConfigError(issues)
    return OdpConfig(
        environments=environments,
        cadences=cadences,
        tables=tuple(tables),
        table_files=table_files,
        streams=streams or StreamsFile(),
        datasets=tuple(datasets),
        access=access or AccessFile(),
        rules=tuple(rules),
        catalog_stacks=catalog_stacks or CatalogStacksFile(),
    )

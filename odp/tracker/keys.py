"""Pure functions over S3 keys: which table a file belongs to, its id, whether it is data at all."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from odp.config.models import SourceFormat, table_id
from odp.tracker.statuses import FileKind

# Suffixes of the files each source writes. Firehose writes files without any suffix unless its
# delivery stream sets a file extension: such a name is data too, read in its table's configured format.
DATA_SUFFIXES = (".parquet", ".csv", ".csv.gz", ".json", ".jsonl", ".json.gz", ".jsonl.gz", ".gz")
IGNORED_NAMES = ("_SUCCESS", "_committed", "_started", ".DS_Store")
IGNORED_SUFFIXES = (".tmp", ".temp", ".crc", ".inprogress", "$folder$")


class StagingKeyError(ValueError):
    """An S3 key that does not follow ``<source>/<schema>/<table>/<file>``."""


@dataclass(frozen=True)
class StagingKey:
    """A staging key split into its parts. Extra folders (DMS date partitions) may sit before the file."""

    source: str
    schema_name: str
    table: str
    file_name: str

    @property
    def table_id(self) -> str:
        return table_id(self.source, self.schema_name, self.table)


def parse_staging_key(key: str) -> StagingKey:
    """Split ``<source>/<schema>/<table>/[date folders/]<file>``.

    Raises:
        StagingKeyError: fewer than four segments or an empty segment.
    """
    parts = key.split("/")
    if len(parts) < 4 or any(part == "" for part in parts):
        raise StagingKeyError(f"key {key!r} does not follow <source>/<schema>/<table>/<file>")
    return StagingKey(source=parts[0], schema_name=parts[1], table=parts[2], file_name=parts[-1])


def normalise_etag(etag: str | None) -> str:
    """S3 reports ETags with quotes in some APIs and without in events; compare them bare."""
    return (etag or "").strip().strip('"')


def make_file_id(bucket: str, key: str, etag: str | None, version_id: str | None = None) -> str:
    """Deterministic id of one version of one S3 object.

    The same object reported twice (a redelivered message, or two events for one PUT) gets the
    same id; a new version of the key (new content, so a new ETag, or a new version id) gets a new one.
    """
    material = "\n".join((bucket, key, normalise_etag(etag), version_id or ""))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def skip_reason(key: str, size: int | None) -> str | None:
    """Why a staging object is not a data file, or ``None`` when it is one."""
    if key.endswith("/"):
        return "folder marker"
    name = key.rsplit("/", 1)[-1]
    if name in IGNORED_NAMES or name.startswith("."):
        return f"marker file {name!r}"
    if name.endswith(IGNORED_SUFFIXES):
        return f"temporary file {name!r}"
    if size is not None and size == 0:
        return "zero-byte object"
    # No extension (Firehose's default name) is data, read in its table's configured format.
    if "." in name and not name.lower().endswith(DATA_SUFFIXES):
        return f"unknown suffix on {name!r} (expected one of {', '.join(DATA_SUFFIXES)}, or no extension)"
    return None


def classify_staging_object(key: str, size: int | None) -> tuple[StagingKey | None, str | None]:
    """The table a staging object belongs to, or why it is skipped: exactly one of the two is set.

    The one decision the File Manager makes for every object; the sandbox report lists what it skips.
    """
    reason = skip_reason(key, size)
    if reason is not None:
        return None, reason
    try:
        return parse_staging_key(key), None
    except StagingKeyError as error:
        return None, str(error)


def file_kind(file_name: str, source_format: SourceFormat | str | None = None) -> FileKind:
    """DMS names full-load files LOAD00000001.parquet (and .csv); everything else is CDC."""
    if source_format in (None, SourceFormat.DMS, SourceFormat.DMS.value) and file_name.upper().startswith("LOAD"):
        return FileKind.FULL_LOAD
    return FileKind.CDC

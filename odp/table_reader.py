"""The one reader that checks use to see a Hudi table without Spark: hudi-rs (the ``hudi`` package).

Bench, sandbox and tests compare tables through it, so a check never shares a code path with the
Spark job it verifies. hudi-rs and pyarrow are development dependencies: imported when called.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


class TableReadError(RuntimeError):
    """A table could not be read; the message names the path."""


def read_hudi_snapshot(base_path: str | Path) -> pa.Table | None:
    """The latest snapshot of a Hudi table as an Arrow table (hudi-rs merges MERGE_ON_READ logs itself).

    ``base_path`` is a folder, a ``file://`` URI or an object store URI. Returns None when hudi-rs
    returns no record batch (a table without data files).

    Raises:
        TableReadError: a local path holds no Hudi table, or hudi-rs could not read it.
    """
    import pyarrow as pa  # noqa: PLC0415 - a development dependency, not shipped with odp
    from hudi import HudiTableBuilder  # noqa: PLC0415 - hudi-rs loads a native library; development only

    uri = str(base_path).removeprefix("file://")
    if "://" not in uri and not (Path(uri) / ".hoodie").is_dir():
        raise TableReadError(f"no Hudi table at {uri}")
    try:
        batches = HudiTableBuilder.from_base_uri(uri).build().read()
    except Exception as error:
        raise TableReadError(f"hudi-rs could not read {uri}: {error}") from error
    return pa.Table.from_batches(batches) if batches else None

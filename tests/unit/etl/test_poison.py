"""Which landed files a table's error names (pure; no Spark)."""

from __future__ import annotations

from etl.errors import ChangeFileError, SchemaEvolutionError
from etl.file_processor.poison import files_named_by
from tests.support.trackers import tracked

ONE = tracked("src/app/t/1.csv", etag="a")
ELEVEN = tracked("src/app/t/11.csv", etag="b")
ODD = tracked("src/app/t/2026-01-01 00:00+x.csv", etag="c")


def test_a_change_file_error_names_its_file_by_key_or_uri() -> None:
    assert files_named_by(ChangeFileError("src/app/t/11.csv", "row 2: bad"), [ONE, ELEVEN]) == [ELEVEN]
    assert files_named_by(ChangeFileError("file:///lake/staging/src/app/t/1.csv", "x"), [ONE, ELEVEN]) == [ONE]


def test_a_message_names_whole_keys_only() -> None:
    error = RuntimeError("Py4JJavaError: reading s3://staging/src/app/t/11.csv: unexpected end of stream")
    assert files_named_by(error, [ONE, ELEVEN]) == [ELEVEN]
    assert files_named_by(RuntimeError("src/app/t/2026-01-01 00:00+x.csv: row 1: bad"), [ONE, ODD]) == [ODD]


def test_an_error_that_names_several_files_counts_against_none() -> None:
    error = ChangeFileError("src/app/t/1.csv, src/app/t/11.csv", "reading failed, the error names no single file")
    assert files_named_by(error, [ONE, ELEVEN]) == []


def test_an_error_that_names_no_file_counts_against_none() -> None:
    assert files_named_by(SchemaEvolutionError("column n: table has bigint, files bring string"), [ONE]) == []

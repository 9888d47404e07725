"""Which landed file a table's error names, and whether it convicts the file at once (pure; no Spark)."""

from __future__ import annotations

from etl.errors import ChangeFileError, SchemaEvolutionError
from etl.file_processor.poison import deterministic_failure, files_named_by
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


def test_a_content_failure_of_one_file_convicts_it_at_once() -> None:
    for reason in (
        "row 2: unknown Op 'Z' (expected I, U or D)",
        "row 1, column amount: value 'n/a' is not a valid double",
        "missing key column id",
        "row 2: source.ts_ms 253402300799000: event time 9999-12-31 23:59:59 is later than the horizon",
        "unreadable Parquet: java.lang.RuntimeException: file:/x/1.csv is not a Parquet file. Expected magic number",
        "corrupt or truncated gzip data (Compressed file ended before the end-of-stream marker was reached)",
        "unreadable Parquet: file:/lake/socket_timeout/503/11.csv is not a Parquet file",  # paths say nothing
    ):
        assert deterministic_failure(ChangeFileError("src/app/t/11.csv", reason), [ONE, ELEVEN]) == ELEVEN, reason


def test_a_read_failure_that_may_pass_next_time_is_counted_not_convicted() -> None:
    for cause in (
        "org.apache.hadoop.fs.s3a.AWSS3IOException: Slow Down (Service: Amazon S3; Status Code: 503)",
        "java.net.SocketTimeoutException: Read timed out",
        "java.net.SocketException: Connection reset",
        "com.amazonaws.services.s3.model.AmazonS3Exception: Access Denied (Status Code: 403)",
        "AWSKMSException: The ciphertext refers to a customer master key that does not exist",
        "java.io.FileNotFoundException: No such file or directory: s3://staging/src/app/t/1.csv",
    ):
        error = ChangeFileError("src/app/t/1.csv", f"unreadable Parquet: {cause}")
        assert deterministic_failure(error, [ONE, ELEVEN]) is None, cause
        assert files_named_by(error, [ONE, ELEVEN]) == [ONE]  # counted against the file, max_file_attempts


def test_only_a_change_file_error_naming_one_landed_file_convicts() -> None:
    several = ChangeFileError("src/app/t/1.csv, src/app/t/11.csv", "reading failed, the error names no single file")
    assert deterministic_failure(several, [ONE, ELEVEN]) is None
    assert deterministic_failure(ChangeFileError("src/app/t/9.csv", "row 1: null key id"), [ONE, ELEVEN]) is None
    assert deterministic_failure(RuntimeError("src/app/t/1.csv: row 1: bad"), [ONE, ELEVEN]) is None
    assert deterministic_failure(SchemaEvolutionError("column n: table has bigint, files bring string"), [ONE]) is None

"""Which landed file a table's error names, and whether it convicts the file at once (pure; no Spark)."""

from __future__ import annotations

from etl.errors import ChangeFileError, SchemaEvolutionError, TableConfigError, UntracedReadError
from etl.file_processor.poison import deterministic_failure, files_named_by, trace_failure, traceable_failure
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


FILES = [tracked(f"src/app/t/{n}.parquet", etag=str(n)) for n in range(8)]
COLLISION = "[COLUMN_ALREADY_EXISTS] The column `status` already exists."


def test_a_read_failure_naming_no_file_is_traced_unless_it_is_the_tables() -> None:
    several = ChangeFileError("src/app/t/1.csv, src/app/t/11.csv", "reading failed, the error names no single file")
    assert traceable_failure(RuntimeError(COLLISION), [ONE, ELEVEN])
    # judged by its cause: a line number of the stack below it (:503) is no sign of an S3 error
    assert traceable_failure(
        RuntimeError(f"{COLLISION}\n\tat org.apache.spark.rdd.FileScanRDD.x(FileScanRDD.scala:503)"), [ONE]
    )
    assert traceable_failure(several, [ONE, ELEVEN])
    for the_tables in (
        SchemaEvolutionError("column n: table has bigint, files bring string"),
        TableConfigError("src.app.t: CSV files need the table's columns in its configuration"),
        UntracedReadError("src.app.t: reading its 2 landed file(s) failed"),
        RuntimeError("java.net.SocketTimeoutException: Read timed out"),  # may pass next time
    ):
        assert not traceable_failure(the_tables, [ONE, ELEVEN]), the_tables
    assert not traceable_failure(ChangeFileError("src/app/t/11.csv", "row 2: bad"), [ONE, ELEVEN])  # names its file


def test_a_traced_failure_is_its_files_error_and_convicts_it() -> None:
    def probe(files: list) -> BaseException | None:
        return RuntimeError(COLLISION) if FILES[5] in files else None

    error, trace = trace_failure(RuntimeError(COLLISION), FILES, probe, table_id="src.app.t")
    assert isinstance(error, ChangeFileError)
    assert str(error) == f"src/app/t/5.parquet: unreadable file: {COLLISION}"
    assert deterministic_failure(error, FILES) == FILES[5]
    assert trace.reads == 4  # [0..3] reads, [4, 5] fails, [4] reads, then [5] alone fails: its own error


def test_a_reader_error_met_while_tracing_is_kept_as_it_is() -> None:
    row_error = ChangeFileError("src/app/t/2.parquet", "row 3, column amount: value 'x' is not a valid double")

    def probe(files: list) -> BaseException | None:
        return row_error if FILES[2] in files else None

    error, _ = trace_failure(RuntimeError(COLLISION), FILES, probe, table_id="src.app.t")
    assert error is row_error


def test_a_failure_every_part_shares_is_the_tables() -> None:
    error, trace = trace_failure(
        RuntimeError("metadata unreadable"),
        FILES,
        lambda files: RuntimeError("metadata unreadable"),
        table_id="src.app.t",
    )
    assert isinstance(error, UntracedReadError)
    assert str(error) == (
        f"src.app.t: reading its 8 landed file(s) failed, and reading them apart ({trace.reads} reads) traced the "
        "failure to no file: RuntimeError: metadata unreadable"
    )

"""A table's files of one format are read by one scan (etl.readers.one_scan): the plan does not grow with the file
count, and every per-file error still names its file among many."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etl.change_counts import count_changes
from etl.errors import ChangeFileError
from etl.readers import SourceFile, first_error, read_changes
from etl.readers.one_scan import LISTING_PARALLELISM, bound_listing_tasks, copies, same_file
from odp.config.models import NewColumns, SourceFormat
from tests.support.lake import table_config
from tests.support.spark_work import job_counter

DMS = pa.schema([("Op", pa.string()), ("SEQ", pa.string()), ("ID", pa.int64()), ("NAME", pa.string())])


def _dms_file(folder: Path, n: int, schema: pa.Schema = DMS) -> SourceFile:
    path = folder / f"20260101-{n:04d}.parquet"
    row = {"Op": "I", "SEQ": str(n + 1), "ID": n, "NAME": f"n{n}", "EXTRA": "x"}
    pq.write_table(pa.Table.from_pylist([{k: row[k] for k in schema.names}], schema=schema), path)
    return SourceFile(uri=path.as_uri(), key=f"src/app/t/{path.name}", order=n)


def _dms_files(folder: Path, count: int, schema: pa.Schema = DMS) -> list[SourceFile]:
    return [_dms_file(folder, n, schema) for n in range(count)]


def _scans(frame) -> int:
    """File scans in the lineage of the RDD Spark will run for the frame (a Parquet / binaryFile scan is one
    FileScanRDD; the text readers' parse sits on the binaryFile scan's RDD; one per file before)."""
    lineage = frame._jdf.queryExecution().toRdd().toDebugString()
    return lineage.count("FileScanRDD") + lineage.count("BinaryFileRDD")


def test_same_file_compares_paths_as_written_without_their_scheme() -> None:
    assert same_file("file:///lake/a b+c.parquet") == same_file("file:/lake/a b+c.parquet") == "lake/a b+c.parquet"
    assert same_file("s3://bucket/k/1.parquet") == "bucket/k/1.parquet"
    assert same_file("file:/lake/1.parquet") != same_file("file:/lake/11.parquet")
    # a landed URI is the key as it is: nothing decoded
    assert same_file("s3://bucket/a%41+b.csv") == "bucket/a%41+b.csv"


def test_a_path_delivered_twice_is_read_in_a_second_round() -> None:
    one, two = SourceFile("file:///l/1.parquet", "k/1", 0), SourceFile("file:///l/2.parquet", "k/2", 1)
    again = SourceFile("file:/l/1.parquet", "k/1", 2)
    assert copies([one, two, again]) == [[one, two], [again]]
    assert copies([one, two]) == [[one, two]]


@pytest.mark.spark
@pytest.mark.parametrize("source_format", [SourceFormat.DMS, SourceFormat.FILES])
def test_parquet_files_of_a_table_are_one_scan_whatever_their_count(spark, tmp_path: Path, source_format) -> None:
    config = table_config("t", source_format=source_format, columns={"id": "bigint", "name": "string", "seq": "bigint"})
    files = _dms_files(tmp_path, 12)
    frame = read_changes(spark, files, config)
    assert _scans(frame) == 1  # one scan, where a read per file would be 12
    first_error(frame, config.primary_key, files)
    rows = frame.orderBy("_odp_file_order").select("_odp_file", "_odp_file_order", "_odp_row", "id").collect()
    assert [tuple(row) for row in rows] == [(f.key, f.order, 0, f.order) for f in files]


@pytest.mark.spark
def test_row_numbers_and_files_of_a_multi_row_multi_file_scan(spark, tmp_path: Path) -> None:
    files = []
    for n in range(3):
        path = tmp_path / f"{n}.parquet"
        rows = [{"Op": "U", "SEQ": str(10 * n + r), "ID": r, "NAME": f"{n}-{r}"} for r in range(4)]
        pq.write_table(pa.Table.from_pylist(rows, schema=DMS), path, row_group_size=2)
        files.append(SourceFile(uri=path.as_uri(), key=f"k/{path.name}", order=2 - n))  # order is not the name's
    frame = read_changes(spark, files, table_config("t"))
    got = frame.orderBy("_odp_file_order", "_odp_row").select("_odp_file", "_odp_file_order", "_odp_row", "name")
    assert [tuple(row) for row in got.collect()] == [
        (f"k/{n}.parquet", 2 - n, r, f"{n}-{r}") for n in (2, 1, 0) for r in range(4)
    ]


@pytest.mark.spark
def test_dms_files_of_two_schemas_are_two_scans_and_keep_their_own_columns(spark, tmp_path: Path) -> None:
    wide = DMS.append(pa.field("EXTRA", pa.string()))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    narrow_files = _dms_files(tmp_path / "a", 3)
    wide_files = [
        SourceFile(f.uri, f.key.replace("20260101", "20260102"), f.order + 3)
        for f in _dms_files(tmp_path / "b", 2, wide)
    ]
    frame = read_changes(spark, narrow_files + wide_files, table_config("t"))
    assert _scans(frame) == 2
    got = frame.orderBy("_odp_file_order").select("_odp_file_order", "EXTRA").collect()
    assert [tuple(row) for row in got] == [(0, None), (1, None), (2, None), (3, "x"), (4, "x")]


@pytest.mark.spark
def test_a_text_format_is_one_binary_scan_and_a_bad_line_names_its_file(spark, tmp_path: Path) -> None:
    config = table_config("t", columns={"id": "int", "name": "string", "seq": "string"})
    files = []
    for n in range(12):
        path = tmp_path / f"20260101-{n:02d}.csv"
        path.write_text(f"I,{n},n{n},{n + 1}\n" + ("I,x,bad,1\n" if n == 9 else ""))
        files.append(SourceFile(uri=path.as_uri(), key=f"src/app/t/{path.name}", order=n))
    frame = read_changes(spark, files, config)
    assert _scans(frame) == 1
    with pytest.raises(ChangeFileError) as raised:
        first_error(frame, config.primary_key, files)
    assert str(raised.value).startswith("src/app/t/20260101-09.csv: row 2, column id: value 'x'")


@pytest.mark.spark
def test_per_file_errors_name_the_right_file_among_many(spark, tmp_path: Path) -> None:
    files = _dms_files(tmp_path, 12)  # more than the driver's footer threads (8)
    config = table_config("t", columns={"id": "bigint", "name": "string", "seq": "bigint"})
    # a file with an undeclared column, refused: named although it is the 11th of 12
    refused = table_config(
        "t", columns={"id": "bigint", "name": "string", "seq": "bigint"}, new_columns=NewColumns.REFUSE
    )
    extra = tmp_path / "extra"
    extra.mkdir()
    mixed = [*files[:10], _dms_file(extra, 10, DMS.append(pa.field("EXTRA", pa.string()))), *files[11:]]
    with pytest.raises(ChangeFileError, match=r"^src/app/t/20260101-0010.parquet: column extra is not in the table"):
        read_changes(spark, mixed, refused)
    # an unreadable footer among many
    corrupt = Path(files[9].uri.removeprefix("file://"))
    corrupt.write_bytes(b"PAR1 not a parquet file PAR1")
    with pytest.raises(ChangeFileError, match=r"^src/app/t/20260101-0009.parquet: unreadable Parquet: "):
        read_changes(spark, files, config)
    # a value error in one row of one file, found in the one scan
    pq.write_table(pa.Table.from_pylist([{"Op": "I", "SEQ": None, "ID": 9, "NAME": "x"}], schema=DMS), corrupt)
    frame = read_changes(spark, files, config)
    with pytest.raises(ChangeFileError) as raised:
        first_error(frame, config.primary_key, files)
    assert str(raised.value) == "src/app/t/20260101-0009.parquet: row 1, ordering column seq is NULL"


def _plain_files(folder: Path, count: int, suffix: str) -> list[SourceFile]:
    """``count`` plain files of two rows each (``id`` = 10 * n + r, ``seq`` its ordering), CSV with a header or
    JSON lines."""
    files = []
    for n in range(count):
        path = folder / f"20260101-{n:04d}.{suffix}"
        rows = [(10 * n + r, f"n{n}-{r}", 100 * n + r) for r in range(2)]
        if suffix == "csv":
            path.write_text("ID,Name,Seq\n" + "".join(f"{i},{name},{seq}\n" for i, name, seq in rows))
        else:
            path.write_text("".join(json.dumps({"id": i, "name": name, "seq": seq}) + "\n" for i, name, seq in rows))
        files.append(SourceFile(uri=path.as_uri(), key=f"src/app/t/{path.name}", order=n))
    return files


@pytest.mark.spark
@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_plain_csv_and_json_lines_files_are_one_scan_whatever_their_count(spark, tmp_path: Path, suffix) -> None:
    # One file a scan before (each file's header / fields were its columns): 12 FileScanRDDs for 12 files.
    config = table_config(
        "t", source_format=SourceFormat.FILES, columns={"id": "bigint", "name": "string", "seq": "bigint"}
    )
    files = _plain_files(tmp_path, 12, suffix)
    frame = read_changes(spark, files, config)
    assert _scans(frame) == 1
    first_error(frame, config.primary_key, files)
    got = frame.orderBy("_odp_file_order", "_odp_row").select("_odp_file", "_odp_file_order", "_odp_row", "id", "name")
    assert [tuple(row) for row in got.collect()] == [
        (f.key, f.order, r, 10 * f.order + r, f"n{f.order}-{r}") for f in files for r in range(2)
    ]


@pytest.mark.spark
def test_plain_csv_files_of_two_headers_are_two_scans(spark, tmp_path: Path) -> None:
    files = _plain_files(tmp_path, 4, "csv")
    Path(files[2].uri.removeprefix("file://")).write_text("seq,id,name\n201,20,n2-0\n")  # the same columns, reordered
    config = table_config(
        "t", source_format=SourceFormat.FILES, columns={"id": "bigint", "name": "string", "seq": "bigint"}
    )
    frame = read_changes(spark, files, config)
    assert _scans(frame) == 2
    got = frame.orderBy("_odp_file_order", "_odp_row").select("_odp_file_order", "_odp_row", "id", "seq")
    assert [tuple(row) for row in got.collect()] == [
        (0, 0, 0, 0),
        (0, 1, 1, 1),
        (1, 0, 10, 100),
        (1, 1, 11, 101),
        (2, 0, 20, 201),
        (3, 0, 30, 300),
        (3, 1, 31, 301),
    ]


def _write(source: SourceFile, text: str) -> None:
    Path(source.uri.removeprefix("file://")).write_text(text)


@pytest.mark.spark
def test_plain_file_errors_name_the_right_file_among_many(spark, tmp_path: Path) -> None:
    columns = {"id": "bigint", "name": "string", "seq": "bigint"}
    config = table_config("t", source_format=SourceFormat.FILES, columns=columns)
    refused = table_config("t", source_format=SourceFormat.FILES, columns=columns, new_columns=NewColumns.REFUSE)
    for suffix, kind in (("csv", "CSV"), ("jsonl", "JSON")):
        folder = tmp_path / suffix
        folder.mkdir()
        files = _plain_files(folder, 12, suffix)
        name = f"src/app/t/20260101-{{:04d}}.{suffix}"
        # a column outside columns, refused: named although it is the 11th of 12
        _write(
            files[10],
            "id,name,seq,color\n100,x,1000,red\n" if kind == "CSV" else '{"id": 100, "seq": 1, "color": "red"}\n',
        )
        with pytest.raises(ChangeFileError, match=rf"^{name.format(10)}: column color is not in the table"):
            read_changes(spark, files, refused)
        # no key column
        _write(files[10], "name,seq\nx,1000\n" if kind == "CSV" else '{"name": "x", "seq": 1000}\n')
        with pytest.raises(ChangeFileError, match=rf"^{name.format(10)}: missing key column id$"):
            read_changes(spark, files, config)
        # a line Spark cannot parse, in the one scan
        _write(files[10], "id,name,seq\n100,x,1000,extra,fields\n" if kind == "CSV" else '{"id": 100, "seq": \n')
        cause = r"\[MALFORMED_CSV_RECORD\] Malformed CSV record: 100,x,1000,extra,fields" if kind == "CSV" else "Json"
        with pytest.raises(ChangeFileError, match=rf"^{name.format(10)}: unreadable {kind}: .*{cause}"):
            read_changes(spark, files, config)
        # a bad ordering value in the second row of the 6th file: its own row number
        _write(files[10], "id,name,seq\n100,x,1000\n" if kind == "CSV" else '{"id": 100, "seq": 1000}\n')
        _write(
            files[5],
            "id,name,seq\n50,x,1\n51,y,-5\n" if kind == "CSV" else '{"id": 50, "seq": 1}\n{"id": 51, "seq": -5}\n',
        )
        frame = read_changes(spark, files, config)
        with pytest.raises(ChangeFileError) as raised:
            first_error(frame, config.primary_key, files)
        assert str(raised.value) == f"{name.format(5)}: row 2, ordering column seq: value '-5' is negative"


@pytest.mark.spark
def test_a_json_lines_field_ignored_is_counted_for_its_own_file_only(spark, tmp_path: Path) -> None:
    files = _plain_files(tmp_path, 5, "jsonl")
    _write(files[3], '{"id": 30, "name": "x", "seq": 1, "color": "red"}\n{"id": 31, "seq": 2}\n')
    columns = {"id": "bigint", "name": "string", "seq": "bigint"}
    config = table_config("t", source_format=SourceFormat.FILES, columns=columns, new_columns=NewColumns.IGNORE)
    frame = read_changes(spark, files, config)
    assert "color" not in frame.columns
    counts = count_changes(frame, config.primary_key, files)
    assert (counts.rows, counts.dropped, counts.dropped_values) == (10, ((files[3].key, "color"),), 2)


@pytest.mark.spark
def test_file_names_with_quotes_backslashes_and_variables_stay_their_own(spark, tmp_path: Path) -> None:
    # the files' map is one SQL literal: quotes and backslashes escaped; a "${...}" (which Spark's parser would
    # substitute: "${env:HOME}" is the home folder) has its "$" written \\u0024. (Backslashes and braces
    # in the file's path itself are glob characters to Spark's reader, a colon a URI scheme to Hadoop's path: only
    # the keys hold them here.)
    names = ["it's.parquet", "ünï cödé.parquet", "plain.parquet", "${env:HOME}.parquet"]
    files = []
    for order, name in enumerate(names):
        path = tmp_path / f"{order}-{re.sub(r'[${}:]', '', name)}"
        row = {"Op": "I", "SEQ": "1", "ID": order, "NAME": name}
        pq.write_table(pa.Table.from_pylist([row], schema=DMS), path)
        # the URI as the job builds it from an S3 key: not percent-encoded
        files.append(SourceFile(uri=f"file://{path}", key=f"src\\app/t/{name}", order=order))
    expected = [(f"src\\app/t/{name}", n, name) for n, name in enumerate(names)]
    for scanned in (files[:3], files):
        frame = read_changes(spark, scanned, table_config("t"))
        got = frame.orderBy("_odp_file_order").select("_odp_file", "_odp_file_order", "name").collect()
        assert [tuple(row) for row in got] == expected[: len(scanned)]


@pytest.mark.spark
def test_the_listing_of_many_files_is_one_task_per_core_not_per_file(spark, tmp_path: Path) -> None:
    files = _dms_files(tmp_path, 40)  # over Spark's 32 paths: listed by a Spark job
    spark.conf.unset(LISTING_PARALLELISM)  # as a fresh job's session (another test's run may have bounded it)
    bound_listing_tasks(spark)
    tracker = spark.sparkContext.statusTracker()
    first = job_counter(spark)
    frame = read_changes(spark, files, table_config("t"))
    tasks = [
        tracker.getStageInfo(stage).numTasks
        for job in range(first, job_counter(spark))
        for stage in tracker.getJobInfo(job).stageIds
    ]
    assert tasks, "the listing ran no Spark job"
    assert max(tasks) <= spark.sparkContext.defaultParallelism  # one task a file before: 40
    # the paths the listing job found still map each row to its file
    rows = frame.orderBy("_odp_file_order").select("_odp_file", "_odp_file_order", "_odp_row", "id").collect()
    assert [tuple(row) for row in rows] == [(f.key, f.order, 0, f.order) for f in files]


@pytest.mark.spark
@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_a_file_named_with_glob_or_escape_characters_is_read_alone(spark, tmp_path: Path, suffix: str) -> None:
    # Spark globs the paths it is given: unescaped, "a[1]" read the file "a1" and "c*" every file starting with c;
    # and Spark reports a Parquet or CSV row's file URI-encoded: "p%41 q+r" is "p%2541%20q+r", the file "p%41 q+r"
    # (form-decoded as before, "pA q r": no landed file)
    def land(name: str, key: int, landed: bool) -> SourceFile | None:
        path = tmp_path / f"{name}.{suffix}"
        if suffix == "parquet":
            row = {"Op": "I", "SEQ": "1", "ID": key, "NAME": f"n{key}"}
            pq.write_table(pa.Table.from_pylist([row], schema=DMS), path)
        else:
            path.write_text(f"I,{key},n{key},1\n")
        return SourceFile(uri=f"file://{path}", key=f"src/app/t/{path.name}", order=key) if landed else None

    files = [land(name, key, True) for key, name in enumerate(["a[1]", "c*", "b{x,y}", "d?", "p%41 q+r"])]
    for name, key in (("a1", 10), ("cx", 11), ("bx", 12), ("dz", 13), ("pA q r", 14)):  # in the folder, not the run
        land(name, key, False)
    config = table_config("t", columns={"id": "int", "name": "string", "seq": "string"})
    frame = read_changes(spark, files, config)
    got = frame.orderBy("_odp_file_order").select("_odp_file", "id", "name").collect()
    assert [tuple(row) for row in got] == [
        (f"src/app/t/a[1].{suffix}", 0, "n0"),
        (f"src/app/t/c*.{suffix}", 1, "n1"),
        (f"src/app/t/b{{x,y}}.{suffix}", 2, "n2"),
        (f"src/app/t/d?.{suffix}", 3, "n3"),
        (f"src/app/t/p%41 q+r.{suffix}", 4, "n4"),
    ]

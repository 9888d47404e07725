"""Column names a table cannot hold side by side (etl.readers.column_names): pure, no Spark."""

from __future__ import annotations

from pyspark.sql import types as T

from etl.readers.column_names import kept_spellings, name_clash, schema_clash

CASE = " differ only in case: Spark compares column names case-insensitively, so they cannot be two columns"


def test_names_that_differ_only_in_case_are_named_both() -> None:
    assert name_clash(["Op", "id", "status", "STATUS"]) == f"columns status and STATUS{CASE} (rename one at the source)"
    assert name_clash(["Op", "id", "status", "status_code"]) is None


def test_odp_and_hudi_names_are_refused_whatever_their_case() -> None:
    reason = " has a name ODP reserves for its own columns (_odp, _odp_*, _hoodie_*): rename it at the source"
    assert name_clash(["id", "_HOODIE_commit_time"]) == f"column _HOODIE_commit_time{reason}"
    assert name_clash(["id", "_odp_op"], noun="attribute") == f"attribute _odp_op{reason}"
    assert name_clash(["id", "_odp"]) == f"column _odp{reason}"
    assert name_clash(["id", "odp_op", "hoodie", "_odpx"]) is None


def test_nested_fields_that_differ_only_in_case_are_named_by_their_path() -> None:
    inner = T.StructType([T.StructField("code", T.LongType()), T.StructField("Code", T.LongType())])
    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("lines", T.ArrayType(T.StructType([T.StructField("s", inner)]))),
        ]
    )
    assert schema_clash(schema) == f"columns lines.s.code and lines.s.Code{CASE} (rename one at the source)"
    # a nested field may carry a reserved name: it never meets ODP's columns
    nested = T.StructType([T.StructField("s", T.StructType([T.StructField("_odp_op", T.StringType())]))])
    assert schema_clash(nested) is None


def test_the_spelling_kept_is_the_declared_one_else_the_one_most_records_carry() -> None:
    seen = {"status": 3, "STATUS": 5, "Status": 5, "id": 8}
    assert kept_spellings(seen) == {"status": "STATUS"}  # most records, then the first in sorted order
    assert kept_spellings(seen, ["id", "status"]) == {"status": "status"}
    assert kept_spellings({"status": 1}, ["Status"]) == {"status": "Status"}  # declared and carried differ
    assert kept_spellings({"status": 1, "id": 1}, ["status"]) == {}  # each name spelled one way

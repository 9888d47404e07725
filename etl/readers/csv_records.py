"""Pure parser of AWS DMS CSV files (S3 target, ``DataFormat=csv``): one file's text -> changes.

Runs on the executors, one file at a time, like :mod:`etl.readers.records`. Every line is checked:

- a header row (DMS ``AddColumnName=true``) is used when configured (``csv_header: true``) or detected
  (the first line names the configured columns, with or without ``Op`` first); its names must be the
  configured columns (any order, case-insensitive), and give the order of the fields. A table with
  ``missing_columns: keep`` or ``null`` also takes a header naming only some of them (and detects one whose
  every field is a configured column): the others are kept stored (:attr:`ParsedChange.keep`) or NULL;
- without a header the fields are the configured columns in their configured order, after ``Op`` in
  CDC files (``Op`` is optional in full-load files: DMS ``IncludeOpForFullLoad``);
- every line must have the number of fields of the first one; a line that does not is an error that
  names the line, the expected and the found field count: never a silent shift of values.

Values stay text here; the reader converts them to the declared types and refuses what does not convert.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence

from etl.change_frame import INSERT
from etl.readers.records import MAX_RECORD_CHARS, ParsedChange, decoded_changes

OP_FIELD = "op"


class CsvError(ValueError):
    """The file does not fit the table's CSV layout."""


def _is_header(fields: list[str], names: Sequence[str], *, partial: bool = False) -> bool:
    found = [field.strip().lower() for field in fields]
    if partial:  # missing_columns keep / null: every field a configured column (or Op), none twice
        return len(set(found)) == len(found) and set(found) <= {OP_FIELD, *names} and bool(set(found) - {OP_FIELD})
    return sorted(found) in (sorted(names), sorted([OP_FIELD, *names]))


def _layout(
    first: list[str], names: Sequence[str], header: bool | None, is_full_load: bool, *, partial: bool = False
) -> tuple[list[str], bool]:
    """(field names in file order, whether the first line is a header). ``partial``: a header may leave out
    configured columns (``missing_columns`` keep / null).

    Raises:
        CsvError: a header that does not name the configured columns; a field count that fits no layout.
    """
    if header or (header is None and _is_header(first, names, partial=partial)):
        found = [field.strip().lower() for field in first]
        data = [name for name in found if name != OP_FIELD]
        fits = set(data) <= set(names) if partial else sorted(data) == sorted(names)
        if not fits or len(set(found)) != len(found):
            raise CsvError(f"the header names columns {found}, the configuration has {list(names)} (+ Op)")
        if OP_FIELD not in found and not is_full_load:
            raise CsvError(f"the header has no Op column, which a CDC file needs: {found}")
        return found, True
    if len(first) == len(names) + 1:
        return [OP_FIELD, *names], False
    if len(first) == len(names) and is_full_load:
        return list(names), False
    expected = f"{len(names) + 1} (Op + {len(names)} configured columns)"
    if is_full_load:
        expected += f" or {len(names)} (the columns, without Op)"
    raise CsvError(f"line 1 has {len(first)} fields, expected {expected}: {list(names)}")


def parse_csv(
    text: str,
    names: Sequence[str],
    *,
    is_full_load: bool,
    header: bool | None = None,
    delimiter: str = ",",
    null_value: str | None = None,
    missing: str = "refuse",
    kept_names: Sequence[str] | None = None,
) -> Iterator[ParsedChange]:
    """Every change of one DMS CSV file (``names``: the configured columns, lower case, in order).

    Rows are numbered 0, 1, ... among the data lines (a header is not counted). An empty field is NULL
    unless ``null_value`` is set (then only that text is NULL). Ends with one error change at the first
    bad line (``line N: reason``, N counting every physical line of the file). ``missing``: the table's
    ``missing_columns``; with ``keep`` the columns a header leaves out are kept stored, named as in
    ``kept_names`` (the configured spelling of ``names``), with ``null`` they are NULL.
    """
    csv.field_size_limit(MAX_RECORD_CHARS)  # Python's default, 131,072, would refuse a DMS LOB column of 200 KB
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    layout: list[str] | None = None
    absent: dict[str, None] = {}
    keep: tuple[str, ...] = ()
    row = 0
    try:
        for fields in reader:
            if not fields:  # a blank line (the file's last newline, or an empty line)
                continue
            if layout is None:
                layout, is_header = _layout(fields, names, header, is_full_load, partial=missing != "refuse")
                absent = {name: None for name in names if name not in layout}
                spelled = dict(zip(names, kept_names or names, strict=True))
                keep = tuple(spelled[name] for name in absent) if missing == "keep" else ()
                if is_header:
                    continue
            if len(fields) != len(layout):
                raise CsvError(f"line {reader.line_num} has {len(fields)} fields, expected {len(layout)}: {layout}")
            values = {
                name: None if (value == "" if null_value is None else value == null_value) else value
                for name, value in zip(layout, fields, strict=True)
            }
            op = values.pop(OP_FIELD, None)
            op = (op or "").strip().upper()
            if is_full_load and op == "":
                op = INSERT
            yield ParsedChange(row=row, op=op or None, values={**values, **absent}, keep=keep)
            row += 1
    except csv.Error as error:
        yield ParsedChange(row=row, error=f"line {reader.line_num}: CSV does not parse: {error}")
    except CsvError as error:
        yield ParsedChange(row=row, error=str(error))


def parse_csv_content(
    data: bytes,
    names: Sequence[str],
    *,
    is_full_load: bool,
    header: bool | None = None,
    delimiter: str = ",",
    null_value: str | None = None,
    encoding: str = "utf-8",
    missing: str = "refuse",
    kept_names: Sequence[str] | None = None,
) -> Iterator[ParsedChange]:
    """:func:`parse_csv` over a file's bytes (gzip recognised by its magic bytes, decoded strictly)."""
    return decoded_changes(
        data,
        encoding,
        lambda text: parse_csv(
            text,
            names,
            is_full_load=is_full_load,
            header=header,
            delimiter=delimiter,
            null_value=null_value,
            missing=missing,
            kept_names=kept_names,
        ),
    )

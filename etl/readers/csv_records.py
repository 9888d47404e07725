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
from dataclasses import dataclass
from typing import Any

from etl.change_frame import INSERT
from etl.readers.records import MAX_RECORD_CHARS, ParsedChange, decoded_changes
from odp.config.models import TableConfig

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


@dataclass(frozen=True)
class CsvLayout:
    """How a table's DMS CSV files are laid out, from its configuration (:meth:`of`): ``names``, the configured
    columns (lower case, in order); ``header`` (None: detected); the ``delimiter``; ``null_value`` (None: an empty
    field is NULL); the ``encoding``; ``missing``, the table's ``missing_columns``; ``kept_names``, the configured
    spelling of ``names`` (None: as ``names``)."""

    names: Sequence[str]
    header: bool | None = None
    delimiter: str = ","
    null_value: str | None = None
    encoding: str = "utf-8"
    missing: str = "refuse"
    kept_names: Sequence[str] | None = None

    @classmethod
    def of(cls, config: TableConfig, kept_names: Sequence[str]) -> CsvLayout:
        """The layout of ``config``'s files (``kept_names``: its columns as they are written)."""
        return cls(
            names=tuple(name.lower() for name in config.columns or {}),
            header=config.csv_header,
            delimiter=config.csv_delimiter,
            null_value=config.csv_null_value,
            encoding=config.encoding,
            missing=config.missing_columns.value,
            kept_names=tuple(kept_names),
        )


def parse_csv(text: str, names: Sequence[str], *, is_full_load: bool, **layout: Any) -> Iterator[ParsedChange]:
    """Every change of one DMS CSV file laid out as ``CsvLayout(names, **layout)`` (:func:`csv_changes`)."""
    return csv_changes(text, CsvLayout(names, **layout), is_full_load=is_full_load)


def parse_csv_content(
    data: bytes, names: Sequence[str], *, is_full_load: bool, **layout: Any
) -> Iterator[ParsedChange]:
    """:func:`parse_csv` over a file's bytes (:func:`csv_content_changes`)."""
    return csv_content_changes(data, CsvLayout(names, **layout), is_full_load=is_full_load)


def csv_changes(text: str, layout: CsvLayout, *, is_full_load: bool) -> Iterator[ParsedChange]:
    """Every change of one DMS CSV file.

    Rows are numbered 0, 1, ... among the data lines (a header is not counted). An empty field is NULL
    unless ``layout.null_value`` is set (then only that text is NULL). Ends with one error change at the first
    bad line (``line N: reason``, N counting every physical line of the file). With ``layout.missing`` ``keep``
    the columns a header leaves out are kept stored, named as in ``layout.kept_names``; with ``null`` they are
    NULL.
    """
    names, null_value, missing = layout.names, layout.null_value, layout.missing
    csv.field_size_limit(MAX_RECORD_CHARS)  # Python's default, 131,072, would refuse a DMS LOB column of 200 KB
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=layout.delimiter, strict=True)
    layout_names: list[str] | None = None
    absent: dict[str, None] = {}
    keep: tuple[str, ...] = ()
    row = 0
    try:
        for fields in reader:
            if not fields:  # a blank line (the file's last newline, or an empty line)
                continue
            if layout_names is None:
                layout_names, is_header = _layout(
                    fields, names, layout.header, is_full_load, partial=missing != "refuse"
                )
                absent = {name: None for name in names if name not in layout_names}
                spelled = dict(zip(names, layout.kept_names or names, strict=True))
                keep = tuple(spelled[name] for name in absent) if missing == "keep" else ()
                if is_header:
                    continue
            if len(fields) != len(layout_names):
                raise CsvError(
                    f"line {reader.line_num} has {len(fields)} fields, expected {len(layout_names)}: {layout_names}"
                )
            values = {
                name: None if (value == "" if null_value is None else value == null_value) else value
                for name, value in zip(layout_names, fields, strict=True)
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


def csv_content_changes(data: bytes, layout: CsvLayout, *, is_full_load: bool) -> Iterator[ParsedChange]:
    """:func:`csv_changes` over a file's bytes (gzip recognised by its magic bytes, decoded strictly in
    ``layout.encoding``)."""
    return decoded_changes(data, layout.encoding, lambda text: csv_changes(text, layout, is_full_load=is_full_load))

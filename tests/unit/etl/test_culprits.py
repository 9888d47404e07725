"""Tracing a failing set to its culprit by reading it apart (etl.culprits): pure, every read counted."""

from __future__ import annotations

import math

import pytest

from etl.culprits import find_culprit


class Reader:
    """A probe over file numbers: a read fails when it holds a file that fails alone (``bad``), a pair of files
    that cannot be read together (``clashes``), or when ``everything`` fails; every read is recorded."""

    def __init__(self, bad=(), clashes=(), everything: bool = False) -> None:
        self.bad = set(bad)
        self.clashes = [set(pair) for pair in clashes]
        self.everything = everything
        self.reads: list[list[int]] = []

    def __call__(self, files: list[int]) -> BaseException | None:
        self.reads.append(files)
        if self.everything:
            return RuntimeError("the table's metadata does not read")
        broken = sorted(self.bad.intersection(files))
        if broken:
            return ValueError(f"cannot decode file {broken[0]}")
        if any(pair <= set(files) for pair in self.clashes):
            return TypeError("columns cannot be merged")
        return None


FILES = list(range(1000))


def blamed(trace) -> object:
    """The item a trace blames, None when it blames none."""
    return trace.culprit.item if trace.culprit is not None else None


@pytest.mark.parametrize("bad", [0, 1, 7, 499, 500, 512, 998, 999])
def test_one_bad_file_among_a_thousand_costs_about_ten_reads(bad: int) -> None:
    reader = Reader(bad=[bad])
    trace = find_culprit(FILES, reader, ValueError("the scan failed"))
    assert trace.culprit is not None
    assert (trace.culprit.item, trace.culprit.alone, str(trace.culprit.error)) == (
        bad,
        True,
        f"cannot decode file {bad}",
    )
    assert trace.reads == len(reader.reads)
    # ten halvings of 1,000 files, the culprit read alone, and (first file) one part that reads as evidence
    assert trace.reads <= math.ceil(math.log2(len(FILES))) + 1, reader.reads
    assert sum(len(read) for read in reader.reads) < 2 * len(FILES)  # about one pass over the files in all


def test_the_culprit_alone_is_never_read_twice() -> None:
    reader = Reader(bad=[6])
    trace = find_culprit(list(range(8)), reader, ValueError("x"))
    assert blamed(trace) == 6
    assert reader.reads == [[0, 1, 2, 3], [4, 5], [6]]  # [6] failed alone: the culprit, no read again


def test_one_file_is_its_own_culprit_without_a_read() -> None:
    failure = ValueError("the scan failed")
    trace = find_culprit(["only.parquet"], Reader(everything=True), failure)
    assert trace.culprit is not None
    assert (trace.culprit.item, trace.culprit.error, trace.reads) == ("only.parquet", failure, 0)
    assert find_culprit([], Reader(), failure).culprit is None


def test_a_burst_of_bad_files_at_the_start_is_traced_one_file_at_a_time() -> None:
    files = list(range(64))
    reader = Reader(bad=range(10))
    first = find_culprit(files, reader, ValueError("x"))
    assert blamed(first) == 0
    # every first half failed: the unread halves are read, smallest first, until one reads
    # ([8..15] holds bad files 8 and 9: read on; [16..31] reads)
    assert reader.reads[-5:] == [[1], [2, 3], [4, 5, 6, 7], list(range(8, 16)), list(range(16, 32))]
    second = find_culprit(files[1:], Reader(bad=range(10)), ValueError("x"))
    assert blamed(second) == 1


def test_a_failure_every_part_shares_convicts_no_file() -> None:
    reader = Reader(everything=True)
    trace = find_culprit(FILES, reader, RuntimeError("the table's metadata does not read"))
    assert trace.culprit is None
    assert trace.reads == len(reader.reads) <= 2 * math.ceil(math.log2(len(FILES))) + 1


def test_two_files_that_both_fail_alone_convict_neither() -> None:
    # nothing of the set reads: as likely the table's failure as two bad files; the table's error, bounded retries
    assert find_culprit([0, 1], Reader(bad=[0, 1]), ValueError("x")).culprit is None


def test_a_file_that_cannot_be_read_beside_the_others_is_blamed_not_its_neighbours() -> None:
    # file 0 holds a column as a struct where files 1..999 hold it as a string: each reads alone, none with 0
    reader = Reader(clashes=[(0, other) for other in range(1, 1000)])
    trace = find_culprit(FILES, reader, TypeError("columns cannot be merged"))
    assert trace.culprit is not None
    assert (trace.culprit.item, trace.culprit.alone, trace.culprit.beside) == (0, False, 500)
    assert str(trace.culprit.error) == "columns cannot be merged"
    assert trace.reads <= 3 * math.ceil(math.log2(len(FILES))) + 3


def test_a_failure_between_files_that_does_not_repeat_convicts_nothing() -> None:
    class Flaky(Reader):
        def __call__(self, files: list[int]) -> BaseException | None:
            self.reads.append(files)
            return None  # the failure of the whole set is gone on every read apart

    trace = find_culprit(list(range(16)), Flaky(), OSError("connection reset"))
    assert trace.culprit is None


def test_an_error_naming_its_own_file_ends_the_search() -> None:
    reader = Reader(bad=[3, 9])

    def convicts(error: BaseException, files: list[int]) -> int | None:
        named = int(str(error).rsplit(" ", 1)[-1])
        return named if named in files else None

    trace = find_culprit(list(range(16)), reader, ValueError("x"), convicts=convicts)
    assert trace.culprit is not None
    assert (trace.culprit.item, trace.reads) == (3, 1)  # the first half's error named file 3

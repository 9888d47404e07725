"""Which item of a failing set causes its failure: the set read apart, by bisection, every read counted.

Pure (no Spark): the caller gives a ``probe`` that reads a subset and returns the error it raises (None: it read).
The File Processor traces a table's failing read to a landed file with it, the plain-file reader a failing Spark
scan to the file it fails on, the dataset job a failing refresh to the input it fails on.

:func:`find_culprit` finds one culprit per call (the caller sets it aside and reads the rest again; a rest that
fails again is traced again):

1. **Alone.** The candidates (at first every item) are halved; the first half is read alone. If it fails the
   culprit is there, else in the second half (the whole failed). The last candidate is read alone (unless that
   read was the last one): a file that fails alone is the culprit, with its own error. One bad item among 1,000
   costs 10 or 11 reads, whatever the error's type.
2. **Evidence.** A failure of the table's own (its state, its configuration) fails every subset alike, and the
   search would end on the first item. So an item that fails alone is only blamed when some other part of the set
   reads, or when it is the only item: if no read has passed yet, the halves left unread are read, smallest first,
   until one reads. If none does, nothing of the set reads: not an item's failure (``Trace.culprit`` None).
3. **Beside.** If the last candidate reads alone, the failure lies between items (two files whose columns cannot
   be merged, a spelling two files disagree on). The search is repeated with a reference, a part known to read: the
   larger half that reads alone, then every half read beside it that reads too. The culprit is the item that does
   not read beside the reference, read once more with it (a failure that does not repeat convicts nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")
Probe = Callable[[list[Item]], BaseException | None]  # reads the items; returns the error it raised, None if it read
Convicts = Callable[[BaseException, list[Item]], Item | None]  # the one probed item an error names, if any


@dataclass(frozen=True)
class Culprit(Generic[Item]):
    """The item a failure is traced to. ``alone``: it fails when read by itself (``error`` is that read's); else it
    reads by itself but not beside ``beside`` other items that read together (``error`` is that read's)."""

    item: Item
    error: BaseException
    alone: bool = True
    beside: int = 0


@dataclass(frozen=True)
class Trace(Generic[Item]):
    """What :func:`find_culprit` found (None: no item is the difference) and the reads it took."""

    culprit: Culprit[Item] | None
    reads: int


class _Reads:
    """The probe over item indices, counted; reads of one item are remembered (a read alone is never repeated)."""

    def __init__(self, items: Sequence[Item], probe: Probe, convicts: Convicts | None) -> None:
        self.items = items
        self.probe = probe
        self.convicts = convicts
        self.count = 0
        self.passed = False  # some read of a part of the set passed
        self.alone: dict[int, BaseException | None] = {}
        self.named: Culprit | None = None  # an item a probe's error names itself

    def __call__(self, indices: Sequence[int]) -> BaseException | None:
        if len(indices) == 1 and indices[0] in self.alone:
            return self.alone[indices[0]]
        self.count += 1
        subset = [self.items[i] for i in indices]
        error = self.probe(subset)
        if len(indices) == 1:
            self.alone[indices[0]] = error
        self.passed |= error is None
        if error is not None and self.convicts is not None and self.named is None:
            item = self.convicts(error, subset)
            self.named = Culprit(item, error) if item is not None else None
        return error


def _halves(indices: list[int]) -> tuple[list[int], list[int]]:
    middle = len(indices) // 2
    return indices[:middle], indices[middle:]


class _NothingReads(Exception):
    """No part of the set reads: the failure is not an item's."""


class _Named(Exception):
    """A probe's error named its item: the search ends there."""


def _read(reads: _Reads, indices: Sequence[int]) -> BaseException | None:
    error = reads(indices)
    if reads.named is not None:
        raise _Named
    return error


def _alone(reads: _Reads) -> Culprit | None:
    """Step 1 and 2 of the module's search: the culprit if it fails alone, None if the last candidate reads alone.

    Raises:
        _NothingReads: the last candidate fails alone and no part of the set reads.
    """
    candidates = list(range(len(reads.items)))
    unread: list[list[int]] = []  # second halves the search did not read, largest first
    while len(candidates) > 1:
        first, second = _halves(candidates)
        if _read(reads, first) is not None:
            candidates = first
            unread.append(second)
        else:
            candidates = second
    (culprit,) = candidates
    error = _read(reads, [culprit])
    if error is None:
        return None
    if not reads.passed and not any(_read(reads, part) is None for part in reversed(unread)):
        raise _NothingReads
    return Culprit(reads.items[culprit], error)


def _beside(reads: _Reads) -> Culprit | None:
    """Step 3 of the module's search: the item that does not read beside a reference that reads; None when the
    failure does not repeat."""
    reference: list[int] = []
    candidates = list(range(len(reads.items)))
    last: tuple[list[int], BaseException] | None = None  # the last read that failed, and its error
    while len(candidates) > 1:
        first, second = _halves(candidates)
        error = _read(reads, reference + first)
        if error is None:
            reference, candidates = reference + first, second
            continue
        last = (reference + first, error)
        if not reference and _read(reads, second) is None:
            reference = second
        candidates = first
    if not reference:
        return None
    together = reference + candidates
    error = last[1] if last is not None and last[0] == together else _read(reads, together)
    if error is None:
        return None
    return Culprit(reads.items[candidates[0]], error, alone=False, beside=len(reference))


def find_culprit(
    items: Sequence[Item], probe: Probe, failure: BaseException, *, convicts: Convicts | None = None
) -> Trace[Item]:
    """Pure: the item that makes ``items`` fail (they failed together with ``failure``), read apart by ``probe``
    (the module's three steps). ``convicts``: the one item of a probed subset its error names (a reader's own
    message), which ends the search at once.

    One item is its own culprit with ``failure`` (no read). Returns the culprit (None: no part of the set reads, or
    the failure lies between items and does not repeat when they are read apart) and how many reads it took.
    Never raises for a probe's failure: a probe returns the error.
    """
    if len(items) <= 1:
        return Trace(Culprit(items[0], failure) if items else None, 0)
    reads = _Reads(items, probe, convicts)
    try:
        found = _alone(reads)
        if found is None:
            found = _beside(reads)
    except _Named:
        found = reads.named
    except _NothingReads:
        found = None
    return Trace(found, reads.count)

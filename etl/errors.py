"""Errors of the File Processor job. Each one fails a single table, never the whole run."""

from __future__ import annotations


class EtlError(Exception):
    """Base class of the errors that fail one table's run."""


class ChangeFileError(EtlError):
    """A landed file cannot be turned into changes; the message names the file and the reason."""

    def __init__(self, file: str, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = file
        self.reason = reason


class UnstorableChangeError(ChangeFileError):
    """A change of a landed file its table cannot store (a partition value its layout cannot hold, a kept column
    with nothing to keep), found before anything of the batch was written: the File Processor quarantines the
    file and applies the table's other files in the same run."""


class UntracedReadError(EtlError):
    """A read of a table's landed files failed and reading them apart traced the failure to no file (every part
    fails alike, or the failure did not repeat): the table's failure, with its cause."""


class SchemaEvolutionError(EtlError):
    """Incoming columns cannot be written into the table's schema (an incompatible type change)."""


class TableConfigError(EtlError):
    """The table's configuration is missing or does not fit the data (e.g. CSV without columns)."""


class CommitNotFoundError(EtlError):
    """A Hudi write returned but the timeline shows no completed commit of this run: nothing is marked processed."""


class TransformError(EtlError):
    """A table's configured transform (SQL SELECT) does not run or drops what the write needs."""

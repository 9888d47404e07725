"""Poison files: which landed files a table's failure names, so repeated failures can quarantine them.

Every reader error names its file by key (``ChangeFileError``, readers' messages ``<key>: <reason>``);
an error that names no file (a Hudi write, a lost lease, S3 unavailable) is the table's, not a file's,
and counts against no file: the table fails and retries as before, nothing is set aside. An error naming
several files counts against none (it cannot tell which one is bad).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from etl.errors import ChangeFileError
from odp.tracker import TrackedFile


def _names(text: str, key: str) -> bool:
    """Whether ``text`` names ``key`` whole, alone or at the end of a URI (``a/11.csv`` does not name ``a/1.csv``)."""
    return re.search(r"(?<![\w.-])" + re.escape(key) + r"(?![\w./-])", text) is not None


def files_named_by(error: BaseException, landed: Sequence[TrackedFile]) -> list[TrackedFile]:
    """Pure: the one landed file an error names, as a list; empty when it names none or several.

    An error naming several files (a reader that cannot tell which one failed) counts against none:
    quarantining them all could set good files aside.
    """
    if isinstance(error, ChangeFileError):
        named = [f for f in landed if error.file in (f.key, f.uri) or error.file.endswith("/" + f.key)]
        if named:
            return named if len(named) == 1 else []
    named = [f for f in landed if _names(f"{error}", f.key)]
    return named if len(named) == 1 else []

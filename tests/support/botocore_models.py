"""One botocore loader per test process: botocore's JSON models (a service's model, the endpoint rules, the
partitions) parsed once, not once per test.

moto's ``mock_aws()`` resets boto3's default session every time it starts (its ``reset_boto3_session``), so the first
client of every test builds a new botocore session, and each session's loader parsed the same JSON files again: a
fifth of the CPU of ``tests/unit/lambdas`` and ``tests/unit/odp`` (py-spy, docs/decisions/041). Sessions stay new per
test (credentials, region and moto's hooks as before); only the loader, whose results are the parsed files, is
shared, as every client of one session shares it.
"""

from __future__ import annotations

import functools

import botocore.loaders
import botocore.session


class _SearchPathsOnce(list):
    """A loader's search paths where appending a path it has is a no-op: each boto3 session appends boto3's own
    data folder to its loader's paths, which a shared loader would otherwise get once per session."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


@functools.cache
def _shared_loader(search_path_string: str | None = None) -> botocore.loaders.Loader:
    loader = botocore.loaders.create_loader(search_path_string)
    # the loader has no public setter for its search paths
    loader._search_paths = _SearchPathsOnce(loader.search_paths)
    return loader


def share_botocore_loader() -> None:
    """Make every botocore session of this process use one loader per data path (idempotent)."""
    botocore.session.create_loader = _shared_loader

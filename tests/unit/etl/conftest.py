"""A small lake for the File Processor tests: staging folders, moto trackers, table config, runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from odp.naming import TrackerTableNames
from tests.support.lake import Lake


@pytest.fixture
def lake(tmp_path: Path, dynamodb: Any, tracker_tables: dict[str, Any], tracker_names: TrackerTableNames) -> Lake:
    return Lake(root=tmp_path, tables=tracker_tables, names=tracker_names, dynamodb=dynamodb)


Hook = Callable[[str, str], None]

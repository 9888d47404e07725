"""Three streamed tables (COW current, MOR current, historical) and a local stream folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl.hudi.options import HudiProfile, WriteProfile
from etl.streaming.batch import StreamTarget
from tests.support.stream_records import StreamFolder
from tests.support.streams import CUSTOMERS, EVENTS, ORDERS, STREAM


@pytest.fixture
def target(tmp_path: Path) -> StreamTarget:
    return StreamTarget(
        stream=STREAM,
        tables=(CUSTOMERS, ORDERS, EVENTS),
        raw_root=f"file://{tmp_path / 'raw'}",
        error_root=f"file://{tmp_path / 'errors'}",
        profile=WriteProfile(HudiProfile.LOCAL),
    )


@pytest.fixture
def folder(tmp_path: Path) -> StreamFolder:
    return StreamFolder(tmp_path / "kinesis")

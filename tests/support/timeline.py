"""Where a Hudi table's instant files lie, as the tests read them without Hudi: directly in ``.hoodie`` at table
version 6 (what ODP writes, ``<instant>.<action>[.<state>]``), in ``.hoodie/timeline`` at version 8 (an earlier
release's tables, a completed instant named ``<instant>_<completion>.<action>``)."""

from __future__ import annotations

from pathlib import Path


def timeline_dir(table_dir: Path) -> Path:
    """The folder of the table's active timeline (``.hoodie/timeline`` when it exists, else ``.hoodie``)."""
    hoodie = table_dir / ".hoodie"
    return hoodie / "timeline" if (hoodie / "timeline").is_dir() else hoodie


def instant_of(name: str) -> str:
    """The instant time of an instant file's name, whichever the table version."""
    return name.split(".", 1)[0].split("_", 1)[0]

"""Every reader of a stored shape that no release wrote, in one place, each to be removed.

No ODP release has been cut: the shapes below were written only by development builds before
2026-11-23. This module goes, with its callers' branches, at the first release (and by 2026-12-31
at the latest); nothing else in odp/ reads an old shape.
"""

from __future__ import annotations

import re
from typing import Any


class StaleTableConfigItemError(ValueError):
    """A table_config item written by an older Configuration Manager, in a form this version does not read."""


def refuse_columns_map(item: dict[str, Any]) -> None:
    """``columns`` stored as a map (before 2026-11-23) lost its order: ask for a redeploy.

    Raises:
        StaleTableConfigItemError: ``columns`` is a map.
    """
    if isinstance(item.get("columns"), dict):
        raise StaleTableConfigItemError(
            f"table_config item {item.get('table_id')}: columns are stored as a map, which has no order (written by "
            "an older Configuration Manager): redeploy the configuration (python -m odp.config load, or the "
            "pipeline) so they are stored as an ordered list"
        )


def named_after_batch(run_id: str, batch_id: str) -> bool:
    """A run without a recorded batch id (acquire recorded none before 2026-11-22) belongs to the batch
    its id names: the File Processor names its runs ``<batch_id>-<12 hex digits>``."""
    return re.fullmatch(re.escape(batch_id) + r"-[0-9a-f]{12}", run_id) is not None

"""Keep a table's lease alive while a long write runs."""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from odp.faults import fault_point
from odp.tracker import LeaseLostError, ProcessingTracker

logger = logging.getLogger(__name__)


class LeaseKeeper:
    """Renews a held lease every third of its length in a daemon thread (use as a context manager).

    A lost lease is remembered; :meth:`check` raises it before the run commits or records anything.
    """

    def __init__(self, tracker: ProcessingTracker, table_id: str, owner: str, *, lease_seconds: int) -> None:
        self._tracker = tracker
        self._table_id = table_id
        self._owner = owner
        self._lease_seconds = lease_seconds
        self._stop = threading.Event()
        self._lost: LeaseLostError | None = None
        self._thread = threading.Thread(target=self._run, name=f"lease-{table_id}", daemon=True)

    @property
    def interval(self) -> float:
        return max(self._lease_seconds / 3, 1.0)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._tracker.renew(self._table_id, self._owner, lease_seconds=self._lease_seconds)
                fault_point("etl.lease_renewal")  # killed while renewing: the lease outlives the run
            except LeaseLostError as error:
                logger.error("lease lost on %s: %s", self._table_id, error)
                self._lost = error
                return

    def check(self) -> None:
        """Raises:
        LeaseLostError: a renewal found the lease taken by another run.
        """
        if self._lost is not None:
            raise self._lost

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

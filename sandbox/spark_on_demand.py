"""A SparkSession started when a job first needs it: ``python -m sandbox run`` with nothing to process, or stopped
before its first job (a crash test's kill in the File Manager), starts no JVM."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class SparkOnDemand:
    """Starts its session with ``start`` on the first :meth:`session` call, once, whatever the threads."""

    def __init__(self, start: Callable[[], Any]) -> None:
        self._start = start
        self._session: Any = None
        self._lock = threading.Lock()

    def session(self) -> Any:
        with self._lock:
            if self._session is None:
                self._session = self._start()
            return self._session

    @property
    def started(self) -> bool:
        return self._session is not None


def session_of(spark: Any) -> Any:
    """The session to run a job on: ``spark`` itself (a SparkSession), or the one a :class:`SparkOnDemand` starts."""
    return spark.session() if isinstance(spark, SparkOnDemand) else spark

"""A table run's quarantine policy: which file a failure convicts, and setting it aside so the run goes on.

A file whose content fails in a way every run would repeat (etl.file_processor.poison) is quarantined at its first
failure and the run commits the table's other files; a failure that names no file is first traced to one by
reading the files apart (poison.trace_failure). A failure that ends the run counts against the one landed file it
names (``max_file_attempts``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from botocore.exceptions import ClientError

from etl.file_processor.lease import LeaseKeeper
from etl.file_processor.poison import (
    FileProbe,
    deterministic_failure,
    files_named_by,
    trace_failure,
    traceable_failure,
)
from etl.file_processor.table_plan import TablePlan
from etl.readers.common import java_cause
from odp.config.models import TableConfig
from odp.tracker import FileTracker, LeaseLostError, TrackedFile

logger = logging.getLogger(__name__)


@dataclass
class QuarantinePolicy:
    """One table run's quarantines; ``set_aside``: the keys of the files it quarantined, in the order found (kept
    for the run's record even if the run fails later)."""

    files: FileTracker
    run_id: str
    table_id: str
    set_aside: list[str] = field(default_factory=list)

    def without(
        self, plan: TablePlan, error: Exception, keeper: LeaseKeeper, *, probe: FileProbe | None = None
    ) -> TablePlan:
        """The plan without the one file ``error`` convicts, that file quarantined. With ``probe``, a failure that
        names no file is first traced to one (poison.trace_failure).

        Raises:
            error: again, when it convicts no single file (it may pass on the next try, or is the table's);
            UntracedReadError: reading the files apart traced the failure to no file.
        """
        bad = deterministic_failure(error, plan.apply)
        if bad is None and probe is not None and traceable_failure(error, plan.apply):
            error = self._traced(plan, error, probe, keeper)
            bad = deterministic_failure(error, plan.apply)
        if bad is None:
            raise error
        after = plan.set_aside(bad, f"{type(error).__name__}: {error}")
        keeper.check()
        self.hold(after.quarantine[len(plan.quarantine) :])
        return after

    def _traced(self, plan: TablePlan, error: Exception, probe: FileProbe, keeper: LeaseKeeper) -> BaseException:
        """``error`` traced to the file it belongs to (its error), or an UntracedReadError; logged with the reads."""
        traced, trace = trace_failure(error, plan.apply, probe, table_id=self.table_id)
        keeper.check()
        logger.warning(
            "%s: a read of %d file(s) failed (%s: %s); reading them apart took %d reads: %s",
            self.table_id,
            len(plan.apply),
            type(error).__name__,
            java_cause(error),
            trace.reads,
            f"traced to {trace.culprit.item.key}" if trace.culprit is not None else "no file is the difference",
        )
        return traced

    def hold(self, held: Sequence[tuple[TrackedFile, str]]) -> None:
        """file_tracker: each held file landed -> quarantined, its reason kept; its key joins ``set_aside``.

        A file no longer landed (an operator moved it meanwhile) is left as it is, and not applied either.
        """
        for tracked, reason in held:
            moved = self.files.quarantine(tracked, f"quarantined at its first failure, by run {self.run_id}: {reason}")
            if moved:
                self.set_aside.append(tracked.key)
            logger.error(
                "%s: %s %s; the run goes on without it (python -m odp file release %s %s, after a fix, applies "
                "it in its order): %s",
                self.table_id,
                tracked.key,
                "quarantined" if moved else "not landed any more, not applied",
                self.table_id,
                tracked.key,
                reason,
            )

    def count_failure(self, error: Exception, config: TableConfig | None) -> tuple[tuple[str, ...], str]:
        """Count a failure that ended the run against the landed file it names; quarantine it at its limit.

        A deterministic failure not caught while reading quarantines its file at once; any other failure naming one
        file counts against it (``max_file_attempts``). Runs while the failed run still holds the lease (before
        :meth:`ProcessingTracker.finish`). Returns the keys quarantined now and when (for the run's error). A tracker
        error here never hides the table's own error.
        """
        if config is None or isinstance(error, LeaseLostError):
            return (), ""
        text = f"{type(error).__name__}: {error}"
        try:
            landed = self.files.landed_files(self.table_id)
            bad = deterministic_failure(error, landed)
            if bad is not None:
                before = len(self.set_aside)
                self.hold([(bad, text)])
                return tuple(self.set_aside[before:]), "at its first failure"
            quarantined = tuple(
                f.key
                for f in files_named_by(error, landed)
                if self.files.record_failure(f, text, max_attempts=config.max_file_attempts)
            )
        except ClientError as failure:
            logger.error("%s: could not count the failure against its files: %s", self.table_id, failure)
            return (), ""
        for key in quarantined:
            logger.error(
                "%s: quarantined %s after %d failed runs; the table goes on without it "
                "(python -m odp file release %s %s, after a fix, applies it in its order)",
                self.table_id,
                key,
                config.max_file_attempts,
                self.table_id,
                key,
            )
        return quarantined, f"after {config.max_file_attempts} failed runs"

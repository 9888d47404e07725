"""EMR Serverless entry point of every job kind that may run there: the same contract as on Glue.

    spark-submit <sparkSubmitParameters> etl/jobs/emr_serverless.py <job kind> --odp_<name> <value> ...

The first argument names the job kind (odp.contracts.job_kinds: the kinds whose engines include EMR Serverless);
the rest are the job's contract arguments (odp/contracts/), as Glue receives them. The kind's own entry point runs
with :class:`etl.engine.EmrServerlessEngine`.
"""

from __future__ import annotations

import importlib
import sys

from odp.config.models import EngineName
from odp.contracts.job_kinds import kinds_on

JOBS = {kind.name: kind.entry_module for kind in kinds_on(EngineName.EMR_SERVERLESS)}


def main(argv: list[str] | None = None) -> int:
    """Run the named job; 2 when the job name is missing or unknown."""
    from etl.engine import EmrServerlessEngine  # noqa: PLC0415 - keep import time free of Spark

    argv = list(sys.argv if argv is None else argv)
    if len(argv) < 2 or argv[1] not in JOBS:
        print(f"usage: {argv[0]} {{{','.join(JOBS)}}} --odp_<name> <value> ...", file=sys.stderr)
        return 2
    job = importlib.import_module(JOBS[argv[1]])
    return job.main([argv[0], *argv[2:]], engine=EmrServerlessEngine())


if __name__ == "__main__":
    sys.exit(main())

"""The entry point of a job kind that exists only in tests/infra/test_job_kinds.py (a new kind is one contract, one
entry point and one registry entry): it parses its contract and says what it would do."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from odp.contracts.base import Environment, JobContract, RawRoot


@dataclass(frozen=True)
class TableAuditArgs(JobContract):
    """The throwaway kind's contract: the environment and where the raw tables live."""

    environment: Environment
    raw_root: RawRoot


def main(argv: list[str] | None = None, engine: Any = None) -> int:
    """Parse the contract (the engine's way) and report it."""
    from etl.engine import detect_engine

    engine = engine or detect_engine()
    args = engine.parse_arguments(TableAuditArgs, list(sys.argv if argv is None else argv), "table audit")
    print(f"would audit the raw tables under {args.raw_root} of {args.environment}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

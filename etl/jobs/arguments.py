"""A job's arguments from its command line, the same way for every job and engine: on Glue
getResolvedOptions over the contract's names, elsewhere argparse over the same names (etl.engine)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from odp.contracts.base import JobContract

if TYPE_CHECKING:
    from etl.engine import Engine

C = TypeVar("C", bound=JobContract)


def parse_job_arguments(contract: type[C], argv: list[str], description: str, engine: Engine | None = None) -> C:
    """The contract built from the engine's command line (``argv[0]`` is the script); default: the detected engine.

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    from etl.engine import detect_engine  # noqa: PLC0415 - the engines import Spark lazily, but keep it here

    return (engine or detect_engine()).parse_arguments(contract, argv, description)

"""A job's arguments from its command line, the same way for every job: on Glue (``awsglue``
importable) getResolvedOptions over the contract's names, elsewhere argparse over the same names."""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any, TypeVar

from odp.contracts.base import JobContract

C = TypeVar("C", bound=JobContract)


def parse_job_arguments(contract: type[C], argv: list[str], description: str) -> C:
    """The contract built from a Glue or local command line (``argv[0]`` is the script).

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    if importlib.util.find_spec("awsglue") is not None:
        from awsglue.utils import getResolvedOptions  # noqa: PLC0415 - only on Glue

        return contract.from_arguments(getResolvedOptions(argv, contract.resolvable_names(argv)))
    parser = argparse.ArgumentParser(description=description)
    for name in contract.argument_names():
        parser.add_argument(f"--{name}", dest=name)
    known, _ = parser.parse_known_args(argv[1:])
    given: dict[str, Any] = {name: value for name, value in vars(known).items() if value is not None}
    return contract.from_arguments(given)

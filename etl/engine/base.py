"""The engine adapter's interface and the argument parsing engines without getResolvedOptions share."""

from __future__ import annotations

import argparse
from typing import Any, Protocol, TypeVar

from odp.contracts.base import JobContract
from odp.tracker import JobRunRef

C = TypeVar("C", bound=JobContract)


class Engine(Protocol):
    """What a job's entry point needs from where it runs."""

    name: str

    def parse_arguments(self, contract: type[C], argv: list[str], description: str) -> C:
        """The contract from the command line (``argv[0]`` is the script).

        Raises:
            JobArgumentError: an argument is missing or malformed.
        """
        ...

    def spark_session(self, app_name: str) -> Any:
        """The SparkSession of the job (Hudi configured)."""
        ...

    def job_run(self, argv: list[str]) -> JobRunRef | None:
        """The job run this process is (recorded with each lease), or None when the engine does not say."""
        ...


def argparse_arguments(contract: type[C], argv: list[str], description: str) -> C:
    """The contract from ``--<name> <value>`` pairs, the names the contract declares (unknown flags ignored).

    Raises:
        JobArgumentError: an argument is missing or malformed.
    """
    parser = argparse.ArgumentParser(description=description)
    for name in contract.argument_names():
        parser.add_argument(f"--{name}", dest=name)
    known, _ = parser.parse_known_args(argv[1:])
    given: dict[str, Any] = {name: value for name, value in vars(known).items() if value is not None}
    return contract.from_arguments(given)

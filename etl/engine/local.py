"""A laptop or a test: argparse over the contract's names and the local Spark + Hudi session (etl.spark_session)."""

from __future__ import annotations

from typing import Any, TypeVar

from etl.engine.base import argparse_arguments
from odp.contracts.base import JobContract
from odp.tracker import JobRunRef

C = TypeVar("C", bound=JobContract)


class LocalEngine:
    name = "local"

    def parse_arguments(self, contract: type[C], argv: list[str], description: str) -> C:
        return argparse_arguments(contract, argv, description)

    def spark_session(self, app_name: str) -> Any:
        from etl.spark_session import local_spark_session  # noqa: PLC0415 - keep import time free of Spark

        return local_spark_session(app_name)

    def job_run(self, argv: list[str]) -> JobRunRef | None:
        return None

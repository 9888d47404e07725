"""ODP Spark code: CDC files of landed tables -> Hudi tables (see etl/README.md)."""

from etl.file_processor.processor import JobOutcome, run_file_processor

__all__ = ["JobOutcome", "run_file_processor"]

"""ODP's File Processor contender: one Spark application per wave over every table (bench.contenders.odp_job)."""

from __future__ import annotations

from pathlib import Path

from bench.contenders.common import Contender, TableMeasurement, WaveMeasurement
from bench.contenders.odp_job import DATABASE
from bench.workload import WaveFiles, table_id
from odp.config.models import IndexKind
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY


class OdpFileProcessor(Contender):
    name = "odp"
    job_module = "bench.contenders.odp_job"
    label = "ODP File Processor (one Spark application per wave)"
    table_concurrency = DEFAULT_TABLE_CONCURRENCY  # tables of a wave written at once (the cadence setting)
    table_type = "COPY_ON_WRITE"  # or MERGE_ON_READ (the other contenders always write COPY_ON_WRITE)
    index_buckets: int | None = None  # the table setting index_buckets (None: the record level index)
    table_types: dict[str, str] | None = None  # per table name, replacing table_type (a fleet's --merge-on-read)
    simple_index_tables: frozenset[str] = frozenset()  # written with index: simple (a fleet's --simple-index-up-to)

    def unavailable_reason(self) -> str | None:
        try:
            import etl.file_processor.processor  # noqa: F401
        except ImportError as error:
            return f"etl.file_processor.processor is not importable: {error}"
        return None

    def table_path(self, table: str) -> Path:
        return self.tables_root / DATABASE / table

    def table_type_of(self, table: str) -> str:
        """The table type ODP writes ``table`` with."""
        return (self.table_types or {}).get(table, self.table_type)

    def wave_spec(self, wave: int, files: list[WaveFiles], staging_root: Path) -> dict:
        """What bench.contenders.odp_job reads for one wave: the folders, ODP's settings and every table's files."""
        return {
            "wave": wave,
            "staging_root": str(staging_root),
            "raw_root": str(self.tables_root),
            "warehouse": str(self.root / "warehouse"),
            "table_concurrency": self.table_concurrency,
            "table_type": self.table_type,
            "index_buckets": self.index_buckets,
            "tables": [
                {
                    "table_id": table_id(item.table),
                    "keys": item.keys,
                    "partition": item.partition,
                    "table_type": self.table_type_of(item.table),
                    "index": (IndexKind.SIMPLE if item.table in self.simple_index_tables else IndexKind.RECORD).value,
                }
                for item in files
            ],
        }

    def _run(self, measurement: WaveMeasurement, wave: int, files: list[WaveFiles], staging_root: Path) -> None:
        spec = self.wave_spec(wave, files, staging_root)
        spec_path = self.write_spec(f"wave_{wave}", spec)
        self.run_job(measurement, wave, spec_path)
        outcome = measurement.add_outcome(spec_path.with_suffix(".outcome.json"))
        if outcome is not None:
            measurement.table_seconds = {table["table_id"]: table["seconds"] for table in outcome["tables"]}
            for table in outcome["tables"]:
                name = table["table_id"].rsplit(".", 1)[-1]
                measured = measurement.tables.setdefault(name, TableMeasurement())
                measured.seconds, measured.write_reason = table["seconds"], table.get("write_reason")
                measured.step_seconds = table.get("step_seconds")
            measurement.failures += [
                f"{table['table_id']}: {table['error']}" for table in outcome["tables"] if table.get("error")
            ]

"""The naive rewrite contender: one Spark application per wave over every table (bench.contenders.naive_job)."""

from __future__ import annotations

from pathlib import Path

from bench.contenders.common import Contender, WaveMeasurement
from bench.workload import WaveFiles


class NaiveRewrite(Contender):
    name = "naive_rewrite"
    label = "Naive rewrite (read all, merge, overwrite)"
    hudi = False
    job_module = "bench.contenders.naive_job"

    def _run(self, measurement: WaveMeasurement, wave: int, files: list[WaveFiles], staging_root: Path) -> None:
        spec = {
            "tables": [
                {
                    "table": item.table,
                    "files": [str(staging_root / key) for key in item.keys],
                    "target": str(self.table_path(item.table)),
                    "partition": item.partition,
                    "columns": list(item.columns),
                }
                for item in files
            ]
        }
        spec_path = self.write_spec(f"wave_{wave}", spec)
        self.run_job(measurement, wave, spec_path)
        measurement.add_outcome(spec_path.with_suffix(".outcome.json"))

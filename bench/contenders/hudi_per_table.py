"""Hudi's Spark datasource, one spark-submit per table per wave, DMS payload: HoodieStreamer's cost model.

Only a stand-in: it is reported under its own name and never as HoodieStreamer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bench.contenders.common import HUDI_SPARK_BUNDLE, REPO_ROOT, Contender, WaveMeasurement, spark_submit_prefix
from bench.measure import child_env, run_step
from bench.workload import WaveFiles

JOB = Path(__file__).with_name("hudi_table_job.py")


class HudiPerTable(Contender):
    name = "hudi_per_table"
    label = "Hudi datasource, one spark-submit per table (HoodieStreamer stand-in)"

    def unavailable_reason(self) -> str | None:
        if not HUDI_SPARK_BUNDLE.is_file():
            return f"Hudi Spark bundle missing at {HUDI_SPARK_BUNDLE}: run `make setup`"
        return None

    def _run(self, measurement: WaveMeasurement, wave: int, files: list[WaveFiles], staging_root: Path) -> None:
        env = child_env(
            PYSPARK_PYTHON=sys.executable,
            PYSPARK_DRIVER_PYTHON=sys.executable,
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        )
        for item in files:
            spec = {
                "table": item.table,
                "files": [str(staging_root / key) for key in item.keys],
                "target": str(self.table_path(item.table)),
                "partition": item.partition,
            }
            spec_path = self.write_spec(f"wave_{wave}_{item.table}", spec)
            command = [
                *spark_submit_prefix(f"bench-hudi-{item.table}"),
                "--jars",
                str(HUDI_SPARK_BUNDLE),
                str(JOB),
                str(spec_path),
            ]
            step = run_step(command, log_path=self.logs / f"wave_{wave}_{item.table}.log", env=env)
            measurement.add(step, table=item.table)
            measurement.add_outcome(spec_path.with_suffix(".outcome.json"))

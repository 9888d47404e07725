"""Apache Hudi's HoodieStreamer 1.0.2: one spark-submit per table per wave, DMS transformer and payload.

The jar (``org.apache.hudi:hudi-utilities-slim-bundle_2.12:1.0.2``) is fetched from Maven Central with
Maven, as the Makefile fetches the Spark bundle. When Maven cannot get it, the contender is reported
as unavailable with Maven's message: it is never replaced by another tool under its name.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bench.contenders.common import HUDI_SPARK_BUNDLE, JARS, Contender, WaveMeasurement, spark_submit_prefix
from bench.measure import child_env, run_step
from bench.workload import KEY, ORDERING, PARTITION, WaveFiles, staging_prefix, wave_folder

ARTIFACT = "org.apache.hudi:hudi-utilities-slim-bundle_2.12:1.0.2"
UTILITIES_JAR = JARS / "hudi-utilities-slim-bundle_2.12-1.0.2.jar"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STREAMER_CLASS = "org.apache.hudi.utilities.streamer.HoodieStreamer"


def fetch_command() -> list[str]:
    """Maven (``-C``: fail on a checksum mismatch) copies the jar into .cache/jars/."""
    return [
        "mvn",
        "--batch-mode",
        "--quiet",
        "-C",
        "dependency:copy",
        f"-Dartifact={ARTIFACT}",
        f"-DoutputDirectory={JARS}",
    ]


def fetch_utilities_jar(timeout: float = 300) -> str | None:
    """Fetch the jar unless it is there; returns why it is not there, or ``None``."""
    if UTILITIES_JAR.is_file():
        return None
    JARS.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(fetch_command(), capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"could not run Maven to fetch {ARTIFACT}: {error}"
    if done.returncode != 0 or not UTILITIES_JAR.is_file():
        output = ANSI.sub("", done.stdout + done.stderr)
        errors = [line for line in output.splitlines() if "ERROR" in line]
        first = errors[0].replace("[ERROR]", "").strip() if errors else f"exit {done.returncode}"
        return f"Maven could not fetch {ARTIFACT}: {first[:400]}"
    return None


def streamer_command(table: str, source_root: Path, target: Path) -> list[str]:
    """HoodieStreamer over one table's wave folder (ParquetDFSSource), upsert with the DMS payload."""
    confs = {
        "hoodie.streamer.source.dfs.root": str(source_root),
        "hoodie.datasource.write.recordkey.field": KEY,
        "hoodie.datasource.write.partitionpath.field": PARTITION,
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
    }
    command = [
        *spark_submit_prefix(f"bench-hoodiestreamer-{table}"),
        "--jars",
        str(HUDI_SPARK_BUNDLE),
        "--class",
        STREAMER_CLASS,
        str(UTILITIES_JAR),
        "--table-type",
        "COPY_ON_WRITE",
        "--op",
        "UPSERT",
        "--source-class",
        "org.apache.hudi.utilities.sources.ParquetDFSSource",
        "--source-ordering-field",
        ORDERING,
        "--transformer-class",
        "org.apache.hudi.utilities.transform.AWSDmsTransformer",
        "--payload-class",
        "org.apache.hudi.common.model.AWSDmsAvroPayload",
        "--target-base-path",
        str(target),
        "--target-table",
        table,
    ]
    for key, value in confs.items():
        command += ["--hoodie-conf", f"{key}={value}"]
    return command


class HoodieStreamer(Contender):
    name = "hoodiestreamer"
    label = "HoodieStreamer 1.0.2 (one spark-submit per table)"

    def __init__(self, work_root: Path, *, fetch: bool = True) -> None:
        super().__init__(work_root)
        self._reason = fetch_utilities_jar() if fetch else (None if UTILITIES_JAR.is_file() else "jar not fetched")

    def unavailable_reason(self) -> str | None:
        return self._reason

    def _run(self, measurement: WaveMeasurement, wave: int, files: list[WaveFiles], staging_root: Path) -> None:
        env = child_env()
        for item in files:
            source_root = staging_root / staging_prefix(item.table) / wave_folder(wave)
            command = streamer_command(item.table, source_root, self.table_path(item.table))
            measurement.add(run_step(command, log_path=self.logs / f"wave_{wave}_{item.table}.log", env=env))

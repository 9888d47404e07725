"""The EMR Serverless entry point run the way EMR Serverless runs it: spark-submit, the same arguments.

``spark-submit --master local[2] <spark_submit_parameters> sandbox/job_process/__main__.py <config dir>
etl/jobs/emr_serverless.py <job> --odp_...``: the Hudi bundle and ODP's extensions jar on the driver's and
executors' class path (not spark.jars), the job contract's arguments as entry point arguments, a process of its own
(its own JVM) whose AWS holds the configuration as deployed (sandbox/job_process/: moto in the driver, table_config
and dataset_config loaded by the Configuration Manager), then the entry point itself, unchanged. The demo refreshes a
dataset this way and compares it with the one the in-process dataset job wrote (sandbox/datasets.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from etl.spark_session import hudi_bundle_jar, hudi_extensions_jar, local_jvm_options
from odp.contracts.spark import spark_submit_parameters

REPO_ROOT = Path(__file__).resolve().parents[1]
ENTRY_POINT = REPO_ROOT / "etl" / "jobs" / "emr_serverless.py"
JOB_PROCESS = REPO_ROOT / "sandbox" / "job_process" / "__main__.py"  # moto holding the configuration, then the job
# Laptop sizing of the spark-submit run (on EMR Serverless: the application's capacity settings).
LOCAL_CONF = {
    "spark.driver.memory": "1g",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}
TIMEOUT_SECONDS = 900


class EmrRunError(RuntimeError):
    """spark-submit exited non-zero; the message holds the end of its output."""


def spark_submit_command(job: str, arguments: dict[str, str], *, warehouse: Path, config_dir: Path) -> list[str]:
    """The spark-submit command line of one job run on local[2]; ``arguments`` as the contract's
    ``to_arguments()`` gives them (``--odp_<name>`` -> value), EMR Serverless's entryPointArguments; ``config_dir``
    loaded into the process's DynamoDB first (sandbox/job_process/)."""
    import pyspark

    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    class_path = [str(hudi_bundle_jar()), str(hudi_extensions_jar())]  # as on EMR: the bundle, then ODP's jar
    conf = {
        **LOCAL_CONF,
        "spark.sql.warehouse.dir": str(warehouse),
        # the local JVM's options as every local session has them (with this class path, the class data archive:
        # docs/decisions/023)
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse} {local_jvm_options()}".strip(),
    }
    entry_arguments = [item for name, value in arguments.items() for item in (name, value)]
    return [
        str(spark_submit),
        "--master",
        "local[2]",
        *spark_submit_parameters(class_path, conf),
        str(JOB_PROCESS),
        str(config_dir),
        str(ENTRY_POINT),
        job,
        *entry_arguments,
    ]


def run_emr_entry_point(job: str, arguments: dict[str, str], *, workdir: Path, config_dir: Path) -> str:
    """Run one job through the EMR entry point, the configuration of ``config_dir`` deployed in its process; its
    output (stdout and stderr) is kept in ``workdir``.

    Raises:
        EmrRunError: the run exited non-zero.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    command = spark_submit_command(job, arguments, warehouse=workdir / "warehouse", config_dir=config_dir)
    environment = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    environment.pop("PYSPARK_SUBMIT_ARGS", None)  # the sandbox's own session settings are not EMR's
    done = subprocess.run(
        command, cwd=workdir, env=environment, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
    )
    output = done.stdout + done.stderr
    (workdir / f"{job}.log").write_text(output, encoding="utf-8")
    if done.returncode != 0:
        tail = "\n".join(output.splitlines()[-30:])
        raise EmrRunError(f"spark-submit {job} exited {done.returncode}:\n{tail}")
    return output

"""Two CDC runs with deletes into a table whose record index has several file groups, in its own Spark process.

``python -m tests.unit.etl.classpath_child WORKDIR [--without-driver-class-path]``: the scenario of
tests/support/record_index_waves.py in a JVM of its own. Exit 0 when every run completed with the expected table,
1 otherwise; the table runs' statuses and errors go to WORKDIR/outcome.json. ``--without-driver-class-path``
builds the session without ``spark.driver.extraClassPath`` (the Hudi bundle only on ``spark.jars``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from moto import mock_aws

import etl.hudi.options
from etl.spark_session import local_spark_session
from tests.support.paths import AWS_REGION
from tests.support.record_index_waves import KEYS_PER_INDEX_FILE_GROUP, scenario


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--without-driver-class-path", action="store_true")
    args = parser.parse_args()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        os.environ[name] = "testing"
    os.environ["AWS_DEFAULT_REGION"] = AWS_REGION
    etl.hudi.options.KEYS_PER_LOCAL_INDEX_FILE_GROUP = KEYS_PER_INDEX_FILE_GROUP
    without = ("spark.driver.extraClassPath",) if args.without_driver_class_path else ()
    spark = local_spark_session("odp-classpath-test", str(args.workdir / "warehouse"), without=without)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        with mock_aws():
            outcome = scenario(spark, args.workdir)
    finally:
        spark.stop()
    (args.workdir / "outcome.json").write_text(json.dumps(outcome, indent=2))
    print(json.dumps(outcome, indent=2))
    return 0 if all(run["status"] == "completed" for run in outcome["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())

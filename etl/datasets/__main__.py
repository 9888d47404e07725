"""``python -m etl.datasets check [--config-dir config]``: every dataset's SQL on Spark's parser and analyzer.

``python -m odp.config validate`` checks the files without a JVM; this starts a local Spark session
(about half a minute) and checks what only Spark can: the SQL parses, reads only its sources,
produces the key, every rule is valid, an incremental SQL is one row per source row. Exit 1 with
every problem, each naming the file and field.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m etl.datasets", description="ODP datasets")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="check every dataset's SQL with Spark; exit 1 with all problems")
    check.add_argument("--config-dir", type=Path, default=Path("config"))
    args = parser.parse_args(argv)

    from etl.datasets.sql_check import check_all_sql  # noqa: PLC0415 - keep --help free of Spark
    from etl.spark_session import local_spark_session  # noqa: PLC0415
    from odp.config.loader import ConfigError, load_config  # noqa: PLC0415

    try:
        config = load_config(args.config_dir)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 1
    spark = local_spark_session("odp-dataset-check")
    spark.sparkContext.setLogLevel("ERROR")
    issues = check_all_sql(spark, config)
    if issues:
        print(f"{len(issues)} dataset SQL error(s):", file=sys.stderr)
        for issue in issues:
            print(f"  - {issue}", file=sys.stderr)
        return 1
    print(f"{args.config_dir}: the SQL of {len(config.datasets)} dataset(s) is valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A first load and the table's first upsert, with the record index built by the load or by the upsert (issue 47,
docs/decisions/033).

python -m bench.first_load [--rows 200000] [--changes 1000] [--rounds 2] [--out bench/results/first-load.json]

Hudi's writes alone, through the project's one options builder (``etl.hudi.options.hudi_write_options``, local
profile) in one local JVM: an unpartitioned COPY_ON_WRITE table of ``--rows`` rows and 20 columns, loaded with
``bulk_insert``, then ``--changes`` updates upserted. ``index_at_load``: the load writes the record index (ODP before
decision 033); ``index_at_upsert``: the load leaves it and the upsert builds it from the files (ODP after). The two
alternate, ``--rounds`` times; every table ends with ``--rows`` keys, each once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import etl.hudi.options
from etl.change_frame import SEQ
from etl.hudi.options import HudiProfile, WriteOperation, WriteProfile, hudi_write_options
from etl.hudi.table_version import save_hudi
from etl.hudi.target import HudiTarget
from etl.spark_session import local_spark_session
from odp.config.models import SourceFormat, TableConfig

COLUMNS = 18  # beside the key and _odp_seq: 20 columns
PROFILE = WriteProfile(HudiProfile.LOCAL, cores=2)
TARGET = HudiTarget.from_table(
    TableConfig(source="bench", schema_name="s", table="t", format=SourceFormat.DMS, primary_key=("id",), database="b")
)


def rows(spark: SparkSession, count: int, *, seq: int, step: int = 1) -> DataFrame:
    """``count`` rows, keys 0, step, 2 * step, ...; every value derived from the key and ``seq``."""
    frame = spark.range(0, count * step, step).withColumn(SEQ, F.lit(seq).cast("long"))
    for column in range(COLUMNS):
        frame = frame.withColumn(f"c{column}", F.concat(F.lit(f"v{column}-{seq}-"), F.col("id").cast("string")))
    return frame.withColumn("_hoodie_is_deleted", F.lit(False))


def timed_write(frame: DataFrame, base_path: str, operation: WriteOperation, **sizes: int) -> float:
    options = hudi_write_options(TARGET, operation=operation, profile=PROFILE, catalog_sync=False, **sizes)
    started = time.perf_counter()
    save_hudi(frame, base_path, options)
    return round(time.perf_counter() - started, 2)


def one_table(spark: SparkSession, root: Path, name: str, *, table_rows: int, changes: int) -> dict[str, Any]:
    """A load then an upsert of one table; ``name`` says where its record index is built."""
    base_path = f"file://{root / name}"
    defer = etl.hudi.options.defers_record_index
    # index_at_load: the options of ODP before decision 033 (and of a load past RECORD_INDEX_DEFERRED_UP_TO_ROWS);
    # index_at_upsert: the load leaves the index to the upsert at any size, to measure where the bound should be
    built_by_load = name == "index_at_load"
    etl.hudi.options.defers_record_index = lambda target, operation, *_: (
        not built_by_load and operation is WriteOperation.BULK_INSERT
    )
    try:
        load = timed_write(rows(spark, table_rows, seq=1), base_path, WriteOperation.BULK_INSERT, input_rows=table_rows)
    finally:
        etl.hudi.options.defers_record_index = defer
    step = max(1, table_rows // changes)
    upsert = timed_write(
        rows(spark, changes, seq=2, step=step),
        base_path,
        WriteOperation.UPSERT,
        input_rows=changes,
        stored_rows=table_rows,
    )
    stored = spark.read.format("hudi").load(base_path)
    keys, distinct = stored.count(), stored.select("id").distinct().count()
    if keys != table_rows or distinct != table_rows:
        raise RuntimeError(f"{name}: {keys} rows, {distinct} keys, expected {table_rows} of each")
    return {"table": name, "load_seconds": load, "upsert_seconds": upsert, "total_seconds": round(load + upsert, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.first_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    load_average = list(os.getloadavg())
    spark = local_spark_session("bench-first-load")
    spark.sparkContext.setLogLevel("ERROR")
    runs = []
    with tempfile.TemporaryDirectory(prefix="odp-first-load-") as folder:
        for round_number in range(args.rounds):
            for name in ("index_at_load", "index_at_upsert"):
                root = Path(folder) / f"round-{round_number}"
                run = one_table(spark, root, name, table_rows=args.rows, changes=args.changes)
                runs.append({"round": round_number, **run})
                print(json.dumps(runs[-1]), flush=True)
    document = {
        "rows": args.rows,
        "changes": args.changes,
        "load_average_before": load_average,
        "runs": runs,
    }
    if args.out is not None:
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

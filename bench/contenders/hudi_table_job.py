"""One Hudi upsert of one table's wave files, as its own Spark application (a HoodieStreamer stand-in).

It does what HoodieStreamer with ``ParquetDFSSource``, ``AWSDmsTransformer`` and ``AWSDmsAvroPayload``
does for one table and one batch of files: read the files, add an empty ``Op`` where DMS wrote none
(the transformer), upsert with the DMS payload (a row whose ``Op`` is ``D`` deletes its key), record
key ``pk_id``, ordering ``cdc_timestamp_seq``, partition ``vendorid``. It is used only when the
HoodieStreamer jar (hudi-utilities-slim-bundle) cannot be fetched, and is reported under its own name.

Run as ``spark-submit --jars <hudi bundle> bench/contenders/hudi_table_job.py SPEC.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench.fs_stats import hadoop_statistics

OP, KEY, ORDERING, PARTITION = "Op", "pk_id", "cdc_timestamp_seq", "vendorid"
DMS_PAYLOAD = "org.apache.hudi.common.model.AWSDmsAvroPayload"


def write_options(table: str, partition: str | None = PARTITION) -> dict[str, str]:
    """The table settings HoodieStreamer gets from its command line in bench.contenders.hoodiestreamer
    (``partition`` None: a table without partitions, Hudi's NonpartitionedKeyGenerator)."""
    options = {
        "hoodie.table.name": table,
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": KEY,
        "hoodie.datasource.write.partitionpath.field": PARTITION,
        "hoodie.datasource.write.precombine.field": ORDERING,
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.datasource.write.payload.class": DMS_PAYLOAD,
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
    }
    if partition is None:
        options["hoodie.datasource.write.partitionpath.field"] = ""
        options["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    else:
        options["hoodie.datasource.write.partitionpath.field"] = partition
    return options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    spec_path = parser.parse_args(argv).spec
    spec = json.loads(spec_path.read_text())
    spark = SparkSession.builder.appName(f"bench-hudi-{spec['table']}").getOrCreate()
    try:
        frame = spark.read.parquet(*spec["files"])
        if OP not in frame.columns:
            frame = frame.withColumn(OP, F.lit(""))
        options = write_options(spec["table"], spec.get("partition", PARTITION))
        frame.write.format("hudi").options(**options).mode("append").save(spec["target"])
        hadoop = hadoop_statistics(spark)
    finally:
        spark.stop()
    spec_path.with_suffix(".outcome.json").write_text(json.dumps({"hadoop": hadoop}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

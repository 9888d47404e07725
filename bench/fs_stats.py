"""Hadoop FileSystem statistics of a contender's Spark application, read through the JVM gateway.

Every contender job calls ``hadoop_statistics(spark)`` just before ``spark.stop()`` and puts the result
in its outcome file; the counts are those of the whole JVM (driver and local executors), so of the wave.
``FileSystem.getAllStatistics`` gives bytes and operations per scheme; ``getGlobalStorageStatistics``
adds the per-operation counters of the file systems that keep them (S3A, HDFS: ``op_open``,
``op_list_status``, ...). Hadoop's local file system counts bytes read and written but no operations.
"""

from __future__ import annotations

from typing import Any


def hadoop_statistics(spark: Any) -> dict[str, dict[str, int]]:
    """Per scheme: bytes_read, bytes_written, read_ops, large_read_ops, write_ops, and any per-operation
    counter the global storage statistics hold for it (``op_*``)."""
    file_system = spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem
    out: dict[str, dict[str, int]] = {}
    for stats in file_system.getAllStatistics():
        scheme = out.setdefault(str(stats.getScheme()), {})
        scheme["bytes_read"] = scheme.get("bytes_read", 0) + int(stats.getBytesRead())
        scheme["bytes_written"] = scheme.get("bytes_written", 0) + int(stats.getBytesWritten())
        scheme["read_ops"] = scheme.get("read_ops", 0) + int(stats.getReadOps())
        scheme["large_read_ops"] = scheme.get("large_read_ops", 0) + int(stats.getLargeReadOps())
        scheme["write_ops"] = scheme.get("write_ops", 0) + int(stats.getWriteOps())
    storages = file_system.getGlobalStorageStatistics().iterator()
    while storages.hasNext():
        storage = storages.next()
        scheme = out.setdefault(str(storage.getScheme() or storage.getName()), {})
        values = storage.getLongStatistics()
        while values.hasNext():
            value = values.next()
            if str(value.getName()).startswith("op_"):
                scheme[str(value.getName())] = int(value.getValue())
    return out


def add(total: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> None:
    """Sum ``more`` into ``total`` (the statistics of several processes of one wave)."""
    for scheme, values in more.items():
        into = total.setdefault(scheme, {})
        for name, value in values.items():
            into[name] = into.get(name, 0) + int(value)


def since(now: dict[str, dict[str, int]], before: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """What the statistics counted between ``before`` and ``now`` (one wave of a JVM that serves several waves)."""
    return {
        scheme: {name: int(value) - before.get(scheme, {}).get(name, 0) for name, value in values.items()}
        for scheme, values in now.items()
    }

"""The kill harness and the fault points kill for real (SIGKILL), and only at the named point."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.kill_harness import run_child

PROGRAM = (
    "from odp.faults import fault_point\n"
    "print('before', flush=True)\n"
    "fault_point('demo.step')\n"
    "print('after', flush=True)\n"
)


def test_a_named_fault_point_kills_the_child_with_sigkill(tmp_path: Path) -> None:
    run = run_child([sys.executable, "-c", PROGRAM], output=tmp_path / "out.log", fault_point="demo.step")
    assert run.killed
    assert run.returncode == -9
    assert run.output == "before\n"


def test_other_fault_points_leave_the_child_alone(tmp_path: Path) -> None:
    run = run_child([sys.executable, "-c", PROGRAM], output=tmp_path / "out.log", fault_point="other.step")
    assert not run.killed
    assert (run.returncode, run.output) == (0, "before\nafter\n")


def test_the_parent_kills_the_whole_group_when_its_condition_holds(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    grandchild = tmp_path / "grandchild.pid"
    program = (
        "import pathlib, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"pathlib.Path({str(grandchild)!r}).write_text(str(child.pid))\n"
        f"pathlib.Path({str(marker)!r}).write_text('x')\n"
        "time.sleep(60)\n"
    )
    run = run_child([sys.executable, "-c", program], output=tmp_path / "out.log", kill_when=marker.exists)
    assert run.killed
    assert run.seconds < 30
    pid = int(grandchild.read_text())
    # the grandchild (as a Spark JVM would be) died with its group
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_killed_spark_child_leaves_no_spark_folder(tmp_path: Path) -> None:
    # a Spark driver that prints the folder of the files and jars it serves, then kills itself at a fault point
    program = "; ".join(
        [
            "from pyspark import SparkFiles",
            "from pyspark.sql import SparkSession",
            "from odp.faults import fault_point",
            "SparkSession.builder.master('local[1]').getOrCreate()",
            "print(SparkFiles.getRootDirectory(), flush=True)",
            "fault_point('demo.step')",
        ]
    )
    run = run_child([sys.executable, "-c", program], output=tmp_path / "out.log", fault_point="demo.step")
    assert run.killed
    root = Path(run.output.strip().splitlines()[-1])
    # in the harness's own folder, not in /tmp, and gone with the child (a SIGKILLed JVM never removes it)
    assert root.parent.parent.name.startswith("odp-killed-spark-"), root
    assert not root.exists()

"""The results document as a text table, a JSON file and a PNG chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def text_table(document: dict[str, Any]) -> str:
    """The side-by-side comparison ``make bench`` prints."""
    workload = document["workload"]
    waves = len(workload["change_rows_per_wave"])
    headers = ["contender", "status", "load s", *[f"wave {n} s" for n in range(1, waves)], "total s"]
    headers += ["rows/s", "peak MB", "files", "vs HS", "vs hudi/table"]
    rows = []
    for name, result in document["contenders"].items():
        if result["status"] != "ok":
            rows.append([name, result["status"], *[""] * (len(headers) - 2)])
            continue
        rows.append(
            [
                *_timing_cells(name, result),
                _ratio(document["ratio_to_hoodiestreamer"].get(name)),
                _ratio(document["ratio_to_hudi_per_table"].get(name)),
            ]
        )
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]
    lines = [
        f"{workload['tables']} tables x {workload['rows']} rows, {workload['waves']} CDC waves "
        f"(change rows per wave: {workload['change_rows_per_wave']}) on {document['machine']['cores']} cores",
        "  ".join(header.ljust(width) for header, width in zip(headers, widths, strict=True)),
    ]
    lines += ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    for name, result in document["contenders"].items():
        if result["status"] != "ok":
            lines.append(f"{name}: {result['status']}: {result['reason']}")
    lines.append(f"speedup_vs_hoodiestreamer: {document['speedup_vs_hoodiestreamer']}")
    if document.get("speedup_vs_hoodiestreamer_note"):
        lines.append(f"  ({document['speedup_vs_hoodiestreamer_note']})")
    lines.append(f"speedup_vs_hudi_per_table (stand-in, not HoodieStreamer): {document['speedup_vs_hudi_per_table']}")
    scale = document.get("scale")
    if scale:
        lines.append(f"scale check (ODP, one CDC wave, same changes, table x{scale['factor']}): {scale}")
    return "\n".join(lines)


def _timing_cells(name: str, result: dict[str, Any]) -> list[str]:
    """A timed contender's cells shared by both tables: name, status, seconds per wave and in total, rows/s,
    peak memory, files written."""
    return [
        name,
        "ok",
        *[f"{wave['seconds']:.1f}" for wave in result["waves"]],
        f"{result['total_seconds']:.1f}",
        f"{result['rows_per_second']:.0f}",
        f"{result['peak_rss_mb']:.0f}",
        str(result["files_written"]),
    ]


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def write_json(document: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def write_chart(document: dict[str, Any], path: Path) -> Path | None:
    """Seconds per wave and in total, one bar per timed contender; ``None`` when nothing was timed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = {name: result for name, result in document["contenders"].items() if result["status"] == "ok"}
    if not timed:
        return None
    waves = len(document["workload"]["change_rows_per_wave"])
    groups = ["full load", *[f"CDC wave {n}" for n in range(1, waves)], "total"]
    width = 0.8 / len(timed)
    figure, axis = plt.subplots(figsize=(10, 5))
    for index, result in enumerate(timed.values()):
        values = [wave["seconds"] for wave in result["waves"]] + [result["total_seconds"]]
        positions = [group + index * width for group in range(len(groups))]
        bars = axis.bar(positions, values, width, label=result["label"])
        axis.bar_label(bars, fmt="%.0f", fontsize=7)
    axis.set_xticks([group + width * (len(timed) - 1) / 2 for group in range(len(groups))], groups)
    axis.set_ylabel("wall time (s)")
    workload = document["workload"]
    machine = document["machine"]
    axis.set_title(
        f"{workload['tables']} tables x {workload['rows']:,} rows, {workload['waves']} CDC waves; "
        f"{machine['cores']} cores, {machine['spark_master']}"
    )
    axis.legend(fontsize=8)
    return _save(figure, path, 110)


def _save(figure: Any, path: Path, dpi: int) -> Path:
    """Write a matplotlib figure to ``path`` and close it."""
    import matplotlib.pyplot as plt

    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path


def markdown(document: dict[str, Any]) -> str:
    """The README's results table, from a results document."""
    workload, machine = document["workload"], document["machine"]
    waves = len(workload["change_rows_per_wave"])
    headers = ["contender", "status", "full load s", *[f"CDC wave {n} s" for n in range(1, waves)], "total s"]
    headers += ["rows/s", "peak RSS MB", "files written", "processes", "time vs hudi_per_table"]
    lines = [
        f"{workload['tables']} tables x {workload['rows']:,} rows, {workload['waves']} CDC wave(s), change rows per "
        f"wave {workload['change_rows_per_wave']}; {machine['cpu']}, {machine['cores']} cores, "
        f"{machine['memory_gib']} GiB, Spark {machine['spark']} {machine['spark_master']}, Hudi {machine['hudi']}; "
        f"run {document['started_at']} to {document['finished_at']}"
        f"{'; warm JVMs (one a contender across waves)' if document.get('warm_jvm') else ''}.",
        "",
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
    ]
    for name, result in document["contenders"].items():
        if result["status"] != "ok":
            cells = [name, f"{result['status']}: {result['reason'][:160]}", *[""] * (len(headers) - 2)]
        else:
            cells = [
                *_timing_cells(name, result),
                str(result["processes"]),
                _ratio(document["ratio_to_hudi_per_table"].get(name)),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def merge_on_read_note(document: dict[str, Any]) -> str:
    """``; ODP MERGE_ON_READ: dimension`` for a fleet run with ``--merge-on-read`` (``..., tables of at least
    200000 rows`` with ``--merge-on-read-from``), else empty."""
    classes = document["workload"].get("odp_merge_on_read_classes")
    from_rows = document["workload"].get("odp_merge_on_read_from_rows") or 0
    sizes = f", tables of at least {from_rows} rows" if from_rows else ""
    return f"; ODP MERGE_ON_READ: {', '.join(classes)}{sizes}" if classes else ""


def fleet_text(document: dict[str, Any]) -> str:
    """A fleet run (or fixed-cost run) per contender: CDC seconds, bytes written, write amplification, fixed cost."""
    tables = len(document["workload"]["tables"])
    jvm = ", warm JVMs (one a contender across waves)" if document.get("warm_jvm") else ""
    repeats = f", {len(document['repeats'])} alternating repeats" if document.get("repeats") else ""
    lines = [f"{document.get('kind', 'fleet')} run, {tables} tables{merge_on_read_note(document)}{jvm}{repeats}"]
    for name, result in document["contenders"].items():
        if result["status"] != "ok":
            lines.append(f"{name}: {result['status']}: {result['reason']}")
            continue
        waves = ", ".join(f"{wave['seconds']:.1f}" for wave in result["waves"])
        fit = result["table_costs"]["all"]
        onboarding = ""
        if "onboarding_seconds" in result:  # results written before it have the first wave only in ``waves``
            onboarding = (
                f"onboarding {result['onboarding_seconds']:.1f} s, onboarding bytes written "
                f"{result['onboarding_bytes_written']:,}, "
            )
        lines.append(
            f"{name}: waves s [{waves}], {onboarding}CDC {result['cdc_seconds']:.1f} s, CDC bytes written "
            f"{result['cdc_bytes_written']:,}, write amplification {result['cdc_write_amplification']}, "
            f"fixed s/table {fit['fixed_seconds']}, s/change {fit['per_change_seconds']}"
        )
        for group, steps in result.get("step_seconds_by_group", {}).items():
            medians = ", ".join(f"{step} {seconds}" for step, seconds in steps["median_seconds"].items())
            lines.append(f"  {name} {group} ({steps['runs']} CDC runs), median s: {medians}")
    for key in ("targets", "fixed_cost"):
        if document.get(key):
            lines.append(f"{key}: {json.dumps(document[key])}")
    return "\n".join(lines)


def write_fleet_chart(document: dict[str, Any], path: Path) -> Path | None:
    """Four panels per timed contender: wave time vs wave number (the longevity plot), bytes written per
    wave, write amplification per wave, and each table's seconds vs its change rows (fixed cost, cost per change)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = {name: result for name, result in document["contenders"].items() if result["status"] == "ok"}
    if not timed:
        return None
    figure, axes = plt.subplots(2, 2, figsize=(12, 8))
    wall, written, amplification, per_table = axes.flat
    for name, result in timed.items():
        cdc = [wave for wave in result["waves"] if wave["wave"] > 0]
        numbers = [wave["wave"] for wave in cdc]
        line = wall.plot(numbers, [wave["seconds"] for wave in cdc], marker="o", label=f"{name} wall")[0]
        wall.plot(numbers, [wave["cpu_seconds"] for wave in cdc], ls="--", color=line.get_color(), label=f"{name} CPU")
        written.plot(
            numbers, [wave["bytes_written"]["total"] / 1e6 for wave in cdc], marker="o", label=f"{name} written"
        )
        read = [wave["table_bytes_read_estimate"] for wave in cdc]
        if all(value is not None for value in read):
            written.plot(
                numbers, [value / 1e6 for value in read], ls="--", color=line.get_color(), label=f"{name} read"
            )
        amplification.plot(numbers, [wave["write_amplification"] or 0 for wave in cdc], marker="o", label=name)
        points = [
            (table["change_rows"], table["seconds"])
            for wave in cdc
            for table in wave["tables"].values()
            if table["seconds"] is not None
        ]
        if points:
            per_table.scatter(*zip(*points, strict=True), s=10, label=name)
    wall.set(title="CDC wave: wall (solid) and CPU (dashed) seconds", xlabel="wave", ylabel="s")
    written.set(title="table folders: MB written (solid), read (dashed, estimate)", xlabel="wave", ylabel="MB")
    written.set_yscale("log")
    amplification.set(title="write amplification (bytes written / changed rows' bytes)", xlabel="wave")
    amplification.set_yscale("log")
    per_table.set(title="seconds per table and wave vs its change rows", xlabel="change rows", ylabel="s")
    per_table.set_xscale("log")
    for axis in axes.flat:
        axis.legend(fontsize=7)
    machine = document["machine"]
    figure.suptitle(
        f"{document.get('kind', 'fleet')}: {machine['cores']} cores, {machine['spark_master']}"
        f"{merge_on_read_note(document)}"
    )
    return _save(figure, path, 100)


def write_many_files_chart(document: dict[str, Any], path: Path) -> Path | None:
    """CDC wave seconds per contender: the rows in one file against the same rows in one file each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars: dict[str, list[float]] = {}
    for shape in ("one_file", "many_files"):
        for name, result in document["runs"][shape]["contenders"].items():
            if result["status"] == "ok":
                bars.setdefault(name, []).append(result["cdc_seconds"])
    bars = {name: values for name, values in bars.items() if len(values) == 2}
    if not bars:
        return None
    figure, axis = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(bars)
    for index, (name, values) in enumerate(bars.items()):
        drawn = axis.bar([0 + index * width, 1 + index * width], values, width, label=name)
        axis.bar_label(drawn, fmt="%.1f", fontsize=7)
    axis.set_xticks(
        [width * (len(bars) - 1) / 2, 1 + width * (len(bars) - 1) / 2], ["1 file", f"{document['files']} files"]
    )
    axis.set(
        ylabel="CDC wave wall time (s)", title=f"{document['files']} changes of one table of {document['rows']:,} rows"
    )
    axis.legend(fontsize=8)
    return _save(figure, path, 100)

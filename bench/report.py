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
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
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
        f"run {document['started_at']} to {document['finished_at']}.",
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

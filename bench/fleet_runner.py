"""The fleet runs: the fleet (and longevity) run, the fixed-cost run and the many-files run.

Each generates its files from ``bench.fleet`` before any contender runs, runs the contenders one after
another on the same files (``bench.runner.run_contender``: every table checked against the model, a
wrong contender not timed) and returns a results document (see bench/README.md).
"""

from __future__ import annotations

import logging
import shutil
import statistics
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.fleet import FleetModel, FleetSpec, split_into_row_files, workload_summary
from bench.runner import ContenderResult, build_document, generate, make_contender, run_contender
from bench.workload import WaveFiles
from odp.contracts.file_processor import DEFAULT_TABLE_CONCURRENCY

LOG = logging.getLogger("bench")
Progress = Callable[[dict[str, Any]], None] | None
ODP, NAIVE = "odp", "naive_rewrite"
# issue 47: the fixed cost of a small table in a warm writer at most 1.0 s (:func:`small_table_seconds`)
SMALL_TABLE_TARGET_SECONDS = 1.0


def _run_all(
    model: FleetModel,
    waves: list[list[WaveFiles]],
    work_root: Path,
    contenders: list[str],
    *,
    odp_options: dict[str, Any],
    started: datetime,
    on_progress: Progress = None,
    warm_jvm: bool = False,
) -> dict[str, Any]:
    spec: FleetSpec = model.spec  # type: ignore[assignment]
    results: dict[str, ContenderResult] = {}
    document: dict[str, Any] = {}
    settings = {key: value for key, value in odp_options.items() if key != "simple_index_up_to"}
    simple_index = spec.tables_up_to(odp_options.get("simple_index_up_to"))
    for name in contenders:
        contender = make_contender(
            name,
            work_root,
            table_types=spec.table_types,
            simple_index_tables=simple_index,
            warm_jvm=warm_jvm,
            **settings,
        )
        results[name] = run_contender(contender, model, waves, model.staging_root)
        document = build_document(started, workload_summary(spec, model), waves, results)
        if on_progress is not None:
            on_progress(document)
    document.update({f"odp_{key}": value for key, value in odp_options.items()})
    document["warm_jvm"] = warm_jvm
    return document


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return round(numerator / denominator, 3) if numerator is not None and denominator else None


def _timed(document: dict[str, Any], name: str) -> dict[str, Any] | None:
    result = document["contenders"].get(name)
    return result if result and result["status"] == "ok" else None


def small_table_seconds(document: dict[str, Any], name: str) -> float | None:
    """A small table's fixed cost to a contender: the median of the fleet's smallest tables' fitted ``fixed_seconds``
    (:func:`bench.runner.table_costs`: a table's seconds in a wave less its changes' share) over the tables the
    contender writes at once: ODP its table concurrency, the naive rewrite one table after another. What a table adds
    to a run writing many, the figure the fleet model's classes take (bench/fleet_model.py). None: no fit."""
    result = _timed(document, name)
    if result is None:
        return None
    tables = document["workload"]["tables"]
    smallest = min(table["rows"] for table in tables)
    costs = result["table_costs"]
    fixed = [
        costs[table["name"]]["fixed_seconds"]
        for table in tables
        if table["rows"] == smallest and costs.get(table["name"], {}).get("fixed_seconds") is not None
    ]
    at_once = document.get("odp_table_concurrency", DEFAULT_TABLE_CONCURRENCY) if name == ODP else 1
    return round(statistics.median(fixed) / at_once, 3) if fixed else None


def fleet_targets(document: dict[str, Any]) -> dict[str, Any]:
    """The issue's fleet and longevity targets, read from the document (None where a side is untimed)."""
    odp, naive = _timed(document, ODP), _timed(document, NAIVE)
    out: dict[str, Any] = {
        "cdc_wall_odp_over_naive": _ratio(odp and odp["cdc_seconds"], naive and naive["cdc_seconds"]),
        # issue 27's target for a JVM a wave; issue 47's for warm JVMs on both sides
        "cdc_wall_target": 0.7 if document.get("warm_jvm") else 0.5,
        "cdc_bytes_written_odp_over_naive": _ratio(
            odp and odp["cdc_bytes_written"], naive and naive["cdc_bytes_written"]
        ),
        "cdc_bytes_written_target": 0.1,
        "small_table_seconds": {name: small_table_seconds(document, name) for name in document["contenders"]},
        "small_table_seconds_target": SMALL_TABLE_TARGET_SECONDS,
        # onboarding (the first wave, every table's first load) beside the CDC waves: reported, no target
        "onboarding_wall_odp_over_naive": _ratio(
            odp and odp.get("onboarding_seconds"), naive and naive.get("onboarding_seconds")
        ),
        "onboarding_bytes_written_odp_over_naive": _ratio(
            odp and odp.get("onboarding_bytes_written"), naive and naive.get("onboarding_bytes_written")
        ),
    }
    for name, result in document["contenders"].items():
        if result["status"] != "ok" or len(result["waves"]) <= 5:
            continue
        cdc = [wave["seconds"] for wave in result["waves"] if wave["wave"] > 0]
        out.setdefault("last_wave_over_wave_5", {})[name] = _ratio(cdc[-1], cdc[4])
    if "last_wave_over_wave_5" in out:
        out["last_wave_over_wave_5_target"] = 1.2
    return out


def fresh_model(spec: FleetSpec, staging_root: Path) -> FleetModel:
    """A fleet model over an emptied staging folder."""
    shutil.rmtree(staging_root, ignore_errors=True)
    return FleetModel(spec, staging_root)


def repeat_orders(contenders: list[str], repeats: int) -> list[list[str]]:
    """The contenders' order in each repeat: as given, then reversed, alternately (a machine that warms or loads up
    during a run favours neither side).

    Raises:
        ValueError: fewer than one repeat.
    """
    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, not {repeats}")
    return [list(contenders) if number % 2 == 0 else list(reversed(contenders)) for number in range(repeats)]


def _median(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return round(statistics.median(known), 3) if known else None


def over_repeats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The targets of several repeats: each ratio's value per repeat and their median (what the target is read on),
    and each contender's small table per repeat and its median (runs from 2026-12-01 on, docs/decisions/049)."""
    out: dict[str, Any] = {}
    for key in ("cdc_wall_odp_over_naive", "cdc_bytes_written_odp_over_naive"):
        values = [run["targets"][key] for run in runs]
        out[f"{key}_repeats"] = values
        out[key] = _median(values)
    per_repeat = [run["targets"].get("small_table_seconds") or {} for run in runs]
    if any(per_repeat):
        out["small_table_seconds_repeats"] = per_repeat
        names = dict.fromkeys(name for seconds in per_repeat for name in seconds)
        out["small_table_seconds"] = {name: _median(seconds.get(name) for seconds in per_repeat) for name in names}
    return out


def run_fleet(
    spec: FleetSpec,
    work_root: Path,
    contenders: list[str],
    *,
    odp_options: dict[str, Any] | None = None,
    on_progress: Progress = None,
    warm_jvm: bool = False,
    repeats: int = 1,
) -> dict[str, Any]:
    """The fleet run (``spec.waves`` CDC waves; the longevity run is the same with more waves). ``warm_jvm``: each
    contender's waves in one JVM (bench.warm_jvm); ``repeats``: the whole run again on the same files, the contenders'
    order alternating; the document's contenders are the first repeat's, ``repeats`` holds each, and the targets are
    the medians over them.

    Raises:
        ValueError: fewer than one repeat.
    """
    orders = repeat_orders(contenders, repeats)
    started = datetime.now(UTC)
    LOG.info("generating the fleet %s, %d waves", spec.groups, spec.waves)
    model, waves = generate(spec, work_root / "staging", FleetModel)
    assert isinstance(model, FleetModel)
    runs = []
    for number, order in enumerate(orders, start=1):
        LOG.info("repeat %d of %d: %s", number, len(orders), ", ".join(order))
        run = _run_all(
            model,
            waves,
            work_root,
            order,
            odp_options=odp_options or {},
            started=started,
            on_progress=on_progress,
            warm_jvm=warm_jvm,
        )
        run["targets"] = fleet_targets(run)
        runs.append(run)
    document = runs[0]
    document["kind"] = "fleet"
    if repeats > 1:
        document["repeats"] = [
            {"order": order, "contenders": run["contenders"], "targets": run["targets"]}
            for order, run in zip(orders, runs, strict=True)
        ]
        document["targets"] = {**document["targets"], **over_repeats(runs)}
    return document


def run_fixed_cost(
    tables: int,
    rows: int,
    changes: int,
    work_root: Path,
    contenders: list[str],
    *,
    odp_options: dict[str, Any] | None = None,
    seed: int = 11,
) -> dict[str, Any]:
    """Wave 1: only an anchor table gets a file of ``changes`` rows; wave 2: the anchor and ``tables`` small
    tables each get one file of ``changes`` rows. (wave 2 - wave 1) / ``tables`` is the cost a small table
    with a file adds to a wave; the anchor makes every contender start its application in both waves, so
    the difference is the tables' cost, not a JVM's."""
    started = datetime.now(UTC)
    spec = FleetSpec(groups=((1, rows), (tables, rows)), waves=2, seed=seed)
    model = fresh_model(spec, work_root / "staging")
    anchor = spec.table_names[0]
    waves = [
        model.full_load(),
        model.wave(1, {anchor: changes}, single_file=True, late=False),
        model.wave(2, dict.fromkeys(spec.table_names, changes), single_file=True, late=False),
    ]
    document = _run_all(model, waves, work_root, contenders, odp_options=odp_options or {}, started=started)
    document["kind"] = "fixed_cost"
    fixed: dict[str, Any] = {"tables": tables, "rows": rows, "changes_per_table": changes, "anchor": anchor}
    for name, result in document["contenders"].items():
        if result["status"] != "ok":
            continue
        none, every = result["waves"][1]["seconds"], result["waves"][2]["seconds"]
        fixed[name] = {
            "wave_with_none_s": none,
            "wave_with_every_table_s": every,
            "seconds_per_table": round((every - none) / tables, 3),
        }
    fixed["target_seconds_per_table"] = 1.0
    document["fixed_cost"] = fixed
    return document


def run_many_files(
    files: int,
    rows: int,
    work_root: Path,
    contenders: list[str],
    *,
    odp_options: dict[str, Any] | None = None,
    seed: int = 11,
) -> dict[str, Any]:
    """One table of ``rows`` rows, then one CDC wave of ``files`` changes: landed as one file, and (in a
    second run on the same rows) as ``files`` one-row files. Reports each run and the ratio of the CDC waves."""
    started = datetime.now(UTC)
    documents: dict[str, Any] = {}
    for shape in ("one_file", "many_files"):
        root = work_root / shape
        spec = FleetSpec(groups=((1, rows),), waves=1, seed=seed)
        model = fresh_model(spec, root / "staging")
        table = spec.table_names[0]
        load = model.full_load()
        wave = model.wave(1, {table: files}, single_file=True, late=False)
        if shape == "many_files":
            wave = [split_into_row_files(model.staging_root, wave[0])]
        documents[shape] = _run_all(
            model, [load, wave], root, contenders, odp_options=odp_options or {}, started=started
        )
    ratios = {}
    for name in contenders:
        one, many = _timed(documents["one_file"], name), _timed(documents["many_files"], name)
        ratios[name] = _ratio(many and many["cdc_seconds"], one and one["cdc_seconds"])
    return {
        "kind": "many_files",
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": files,
        "rows": rows,
        "runs": documents,
        "cdc_wave_many_over_one": ratios,
        "target": 3.0,
    }

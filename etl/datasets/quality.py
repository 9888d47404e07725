"""Quality rules on a dataset frame: each rule is one small aggregation, failures come with examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from odp.config.datasets import (
    AcceptedValuesRule,
    ExpressionRule,
    NotNullRule,
    QualityRule,
    RowCountRule,
    Severity,
    UniqueRule,
    rule_name,
)
from odp.tracker.dataset_run import RuleOutcome

EXAMPLES = 5


def key_rules(key: Sequence[str]) -> list[QualityRule]:
    """Rules every dataset gets: its key is never null and unique (Hudi would keep one row silently)."""
    return [
        NotNullRule(type="not_null", name="key_not_null", columns=list(key), severity=Severity.FAIL),
        UniqueRule(type="unique", name="key_unique", columns=list(key), severity=Severity.FAIL),
    ]


def _rows(frame: DataFrame) -> tuple[dict[str, Any], ...]:
    return tuple(
        {k: (v if isinstance(v, int | float | bool | str) or v is None else str(v)) for k, v in r.asDict().items()}
        for r in frame.limit(EXAMPLES).collect()
    )


def _failing(frame: DataFrame, condition: Any, columns: Sequence[str]) -> tuple[int, tuple[dict[str, Any], ...]]:
    bad = frame.where(condition)
    count = bad.count()
    return count, (_rows(bad.select(*columns)) if count else ())


def check_rule(frame: DataFrame, rule: QualityRule, key: Sequence[str], row_count: int) -> RuleOutcome:
    """One rule on the whole frame (the dataset as it would be after the write)."""
    shown = list(
        dict.fromkeys([*key, *getattr(rule, "columns", []), *([rule.column] if hasattr(rule, "column") else [])])
    )
    detail = ""
    if isinstance(rule, NotNullRule):
        condition = F.lit(False)
        for name in rule.columns:
            condition = condition | F.col(name).isNull()
        failing, examples = _failing(frame, condition, shown)
    elif isinstance(rule, UniqueRule):
        duplicates = frame.groupBy(*rule.columns).count().where(F.col("count") > 1)
        failing = int(duplicates.agg(F.coalesce(F.sum("count"), F.lit(0))).first()[0])
        examples = _rows(duplicates.withColumnRenamed("count", "rows")) if failing else ()
    elif isinstance(rule, AcceptedValuesRule):
        failing, examples = _failing(
            frame, F.col(rule.column).isNotNull() & ~F.col(rule.column).isin(rule.values), shown
        )
        detail = f"not in {rule.values}" if failing else ""
    elif isinstance(rule, RowCountRule):
        too_few = rule.min is not None and row_count < rule.min
        too_many = rule.max is not None and row_count > rule.max
        failing, examples = (row_count if too_few or too_many else 0), ()
        detail = f"({row_count} rows, bounds {rule.min}..{rule.max})" if failing or too_few else ""
        return RuleOutcome(
            rule=rule_name(rule),
            type=rule.type,
            severity=rule.severity.value,
            passed=not (too_few or too_many),
            failing_rows=failing,
            detail=detail,
        )
    elif isinstance(rule, ExpressionRule):
        failing, examples = _failing(frame, ~F.coalesce(F.expr(rule.expression), F.lit(False)), frame.columns)
        detail = f"not {rule.expression}" if failing else ""
    else:  # pragma: no cover - the discriminated union has no other member
        raise TypeError(f"unknown rule {rule!r}")
    return RuleOutcome(
        rule=rule_name(rule),
        type=rule.type,
        severity=rule.severity.value,
        passed=failing == 0,
        failing_rows=failing,
        examples=examples,
        detail=detail,
    )


def check_rules(frame: DataFrame, rules: Sequence[QualityRule], key: Sequence[str]) -> tuple[int, list[RuleOutcome]]:
    """The frame's row count and the outcome of the key rules, then the dataset's own (frame cached once)."""
    frame = frame.cache()
    try:
        row_count = frame.count()
        return row_count, [check_rule(frame, rule, key, row_count) for rule in [*key_rules(key), *rules]]
    finally:
        frame.unpersist()

"""DR-Arena's published tables without released data behind them: Table 4 (other benchmarks against the LMSYS
Search Arena, as far as the prose states it), Table 5 (human preference rates on task generation) and Table 7
(the human audit of the automated components).

None of them can be recomputed: the per-case votes and the audit annotations are not released, and Table 4's
body is missing from the paper's text. What can be checked is arithmetic the tables must obey:

- a share of ``n`` binary judgements is ``k/n`` for a whole ``k``; printed to one decimal of a percent it is
  *reachable* from ``n`` when some ``k`` in ``0..n`` gives ``round(100 k / n, 1)`` equal to it
  (:func:`reachable`, :func:`implied_count`, :func:`smallest_denominator`);
- the three shares of a three-way choice (Table 5) sum to 100 % in each column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from analysis_lib.fetch import published

TABLE4 = "dr_arena_table4_prose"
TABLE5 = "dr_arena_table5_task_generation"
TABLE7 = "dr_arena_table7_human_audit"

#: Table 5: cases judged (§4.3, "For 50 sampled cases") and annotators ("two expert annotators").
T5_CASES = 50
T5_ANNOTATORS = 2
#: Table 7: matches and turns audited (§4.4, "30 full-match logs (covering 64 interaction turns)").
T7_MATCHES = 30
T7_TURNS = 64


def table4() -> pl.DataFrame:
    """Table 4 as far as the text states it: ``benchmark, spearman, pearson, n_models, sign_stated`` (null where
    the text gives nothing)."""
    return pl.read_csv(published(TABLE4), schema_overrides={"n_models": pl.Int64, "sign_stated": pl.String})


def table5() -> pl.DataFrame:
    """Table 5: ``configuration, question_quality, rubric_accuracy`` (percent of the selections)."""
    return pl.read_csv(published(TABLE5))


def table7() -> pl.DataFrame:
    """Table 7: ``component, criterion, result, unit`` (``percent`` or ``kappa``)."""
    return pl.read_csv(published(TABLE7))


def implied_count(percent: float, n: int, decimals: int = 1) -> int | None:
    """The whole ``k`` in ``0..n`` with ``round(100 k / n, decimals) == percent`` (the nearest one when several
    do), or None when no ``k`` reaches the printed value."""
    k = np.arange(n + 1)
    hits = k[np.isclose(np.round(100 * k / n, decimals), percent, rtol=0, atol=10 ** -(decimals + 3))]
    if hits.size == 0:
        return None
    return int(hits[np.argmin(np.abs(100 * hits / n - percent))])


def reachable(percent: float, n: int, decimals: int = 1) -> bool:
    """Whether a printed percentage is ``k/n`` for a whole ``k`` (see :func:`implied_count`)."""
    return implied_count(percent, n, decimals) is not None


def smallest_denominator(percents: Sequence[float], *, decimals: int = 1, limit: int = 1000) -> int | None:
    """The smallest ``n`` (up to ``limit``) from which every printed percentage is reachable."""
    for n in range(1, limit + 1):
        if all(reachable(p, n, decimals) for p in percents):
            return n
    return None


def column_sums(t5: pl.DataFrame) -> dict[str, float]:
    """Each share column's sum over the configurations (a three-way choice: 100 %)."""
    return {c: float(t5[c].sum()) for c in t5.columns if c != "configuration"}


def reachability_table(values: pl.DataFrame, label: str, denominators: dict[str, int]) -> pl.DataFrame:
    """Per printed percentage (``label`` column and ``value``): the count ``k`` it implies for each denominator
    (``"—"`` where none does)."""
    rows = []
    for name, value in zip(values[label], values["value"], strict=True):
        row: dict[str, object] = {label: name, "printed (%)": value}
        for title, n in denominators.items():
            k = implied_count(value, n)
            row[title] = "—" if k is None else f"{k}/{n}"
        rows.append(row)
    return pl.DataFrame(rows)


def table5_long(t5: pl.DataFrame) -> pl.DataFrame:
    """Table 5 as ``cell, value`` rows (``Full Tree, question quality``, …)."""
    names = {"question_quality": "question quality", "rubric_accuracy": "rubric accuracy"}
    return pl.DataFrame(
        {"cell": [f"{c}, {names[col]}" for col in names for c in t5["configuration"]],
         "value": [float(v) for col in names for v in t5[col]]})


def table7_percentages(t7: pl.DataFrame) -> pl.DataFrame:
    """Table 7's percentages as ``criterion, value`` rows (the κ row left out)."""
    return t7.filter(pl.col("unit") == "percent").select("criterion", value=pl.col("result").cast(pl.Float64))

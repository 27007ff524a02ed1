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
from typing import NamedTuple

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


class Table5Check(NamedTuple):
    """Table 5's arithmetic: each column's sum (100 % for a three-way choice), its shares as ``cell, value`` rows
    (:func:`table5_long`), how many are ``k/cases`` and ``k/votes`` (``votes = cases × annotators``), the smallest
    number of selections giving all of them, and whether the full tree has the largest share in every column."""

    sums: dict[str, float]
    long: pl.DataFrame
    of_cases: int
    of_votes: int
    votes: int
    smallest: int | None
    full_tree_best: bool


def table5_check(t5: pl.DataFrame, cases: int = T5_CASES, annotators: int = T5_ANNOTATORS) -> Table5Check:
    """:class:`Table5Check` of Table 5 (``t5``: ``configuration`` and one share column per question)."""
    sums, long = column_sums(t5), table5_long(t5)
    votes = cases * annotators
    values = long["value"].to_list()
    best = all(t5.sort(c, descending=True)["configuration"][0] == "Full Tree" for c in sums)
    return Table5Check(sums, long, sum(reachable(v, cases) for v in values), sum(reachable(v, votes) for v in values),
                       votes, smallest_denominator(values), best)


class Table7Check(NamedTuple):
    """Table 7's percentages (:func:`table7_percentages`), how many are ``k/turns`` and ``k/matches``, the
    smallest number of judgements giving all of them, and the stop-efficiency percentage."""

    percentages: pl.DataFrame
    of_turns: int
    of_matches: int
    smallest: int | None
    stop: float


def table7_check(t7: pl.DataFrame, turns: int = T7_TURNS, matches: int = T7_MATCHES) -> Table7Check:
    """:class:`Table7Check` of Table 7 (``t7`` as :func:`table7`); the stop criterion is the row whose criterion
    starts with ``Stop``."""
    pct = table7_percentages(t7)
    values = pct["value"].to_list()
    stop = float(pct.filter(pl.col("criterion").str.starts_with("Stop"))["value"][0])
    return Table7Check(pct, sum(reachable(v, turns) for v in values), sum(reachable(v, matches) for v in values),
                       smallest_denominator(values), stop)

"""Vote coding and tests of the cross-arena comparison (SA §3.3, Figure 8): orient each vote from the search model's
side, tabulate per intent with one-sided binomial tests, compare tie shares, add two-sided and Holm p-values.

Coding (the authors' ``scripts/cross_setting_analysis.ipynb``): ``search`` / ``non-search`` when the winner is the
search / non-search side; every other voted outcome (``tie`` **and** ``tie (bothbad)``) is a ``tie``; no vote
gives a null vote. All ``share`` columns are fractions in [0, 1].
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from statsmodels.stats.multitest import multipletests

from analysis_lib.fetch import published
from analysis_lib.search_arena.models import NON_SEARCH_RAW
from analysis_lib.stats import preference_binomial_test

log = logging.getLogger(__name__)

EXCLUDED_OPPONENT_SUBSTRING = "gpt"
"""Search Arena opponents whose raw id contains this are left out (the authors' filter)."""

INTENT_ORDER: tuple[str, ...] = (
    "Factual Lookup",
    "Info Synthesis",
    "Analysis",
    "Recommendation",
    "Explanation",
    "Creative Generation",
    "Guidance",
    "Text Processing",
)
"""Order of the intent categories in Figure 8 (``Other`` is plotted by neither panel)."""
VOTES: tuple[str, ...] = ("search", "non-search", "tie")


def published_vote_totals() -> pl.DataFrame:
    """The paper's vote totals of both deployments (SA §3.3): ``arena`` (``text_arena``, ``search_arena``),
    ``search_preferred``, ``non_search_preferred``, ``ties``."""
    return pl.read_csv(published("search_arena_cross_arena_votes"))


# ---------------------------------------------------------------------------------------------- coding


def orient_votes(frame: pl.DataFrame, search_side: str = "search_side") -> pl.DataFrame:
    """Add ``vote`` (``search`` / ``non-search`` / ``tie``) from ``winner`` and the search model's side.

    ``search_side`` names a column holding ``"model_a"`` or ``"model_b"``. Any non-null winner other than
    the two sides (``tie``, ``tie (bothbad)``) is a tie; a null winner gives a null vote.
    """
    w, s = pl.col("winner"), pl.col(search_side)
    other = pl.when(s == "model_a").then(pl.lit("model_b")).otherwise(pl.lit("model_a"))
    return frame.with_columns(
        pl.when(w.is_null())
        .then(pl.lit(None, dtype=pl.String))
        .when(w == s)
        .then(pl.lit("search"))
        .when(w == other)
        .then(pl.lit("non-search"))
        .otherwise(pl.lit("tie"))
        .alias("vote")
    )


def search_arena_cross_battles(
    battles: pl.DataFrame,
    non_search_model: str = NON_SEARCH_RAW,
    exclude_substring: str | None = EXCLUDED_OPPONENT_SUBSTRING,
) -> pl.DataFrame:
    """The Search Arena battles of the non-search model against search models, with an oriented ``vote``.

    ``battles`` is the tidy battle frame (needs ``raw_model_a``, ``raw_model_b``, ``winner`` and
    ``primary_intent``; without raw columns ``model_a`` / ``model_b`` are matched instead). Kept: voted
    battles where exactly one side is ``non_search_model`` and the other side's raw id does not contain
    ``exclude_substring``. Battles of the model against itself are dropped (the authors' filter would keep
    them as a tie or as one win for each side; it is not a search vs non-search comparison).

    Returns the kept battles with ``search_side``, ``search_model``, ``intent`` (= ``primary_intent``) and
    ``vote``.
    """
    a_col, b_col = ("raw_model_a", "raw_model_b") if "raw_model_a" in battles.columns else ("model_a", "model_b")
    need = {a_col, b_col, "winner", "primary_intent"}
    missing = sorted(need - set(battles.columns))
    if missing:
        raise ValueError(f"battle frame lacks column(s) {missing}; expected the tidy frame of load_battles")
    a, b = pl.col(a_col), pl.col(b_col)
    a_is, b_is = a == non_search_model, b == non_search_model
    if exclude_substring:
        keep_a = a_is & ~b.str.contains(exclude_substring, literal=True)
        keep_b = b_is & ~a.str.contains(exclude_substring, literal=True)
    else:
        keep_a, keep_b = a_is, b_is
    out = battles.filter(pl.col("winner").is_not_null() & (keep_a ^ keep_b))
    self_battles = battles.filter(pl.col("winner").is_not_null() & a_is & b_is).height
    if self_battles:
        log.info(
            "search_arena_cross_battles: dropped %d battle(s) of %s against itself", self_battles, non_search_model
        )
    a_plain = pl.col(a_col) == non_search_model
    out = out.with_columns(
        pl.when(a_plain).then(pl.lit("model_b")).otherwise(pl.lit("model_a")).alias("search_side"),
        pl.when(a_plain).then(pl.col(b_col)).otherwise(pl.col(a_col)).alias("search_model"),
        pl.col("primary_intent").alias("intent"),
    )
    return orient_votes(out)


# ------------------------------------------------------------------------------------------ tabulation


def vote_table(
    frame: pl.DataFrame,
    by: str | None = "intent",
    order: Iterable[str] | None = INTENT_ORDER,
    split_ties: bool = False,
) -> pl.DataFrame:
    """Vote counts and shares per group (or overall with ``by=None``) with the binomial test of each.

    Columns: ``<by>``, ``n`` (battles), ``search``, ``non_search``, ``tie`` (counts), ``share_search``,
    ``share_non_search``, ``share_tie`` (fractions of ``n``), ``favours`` (``search``, ``non-search`` or
    ``even``), ``alternative`` and ``p_value`` (one-sided in the observed direction, ties excluded unless
    ``split_ties``). Groups listed in ``order`` come first in that order, the rest (e.g. ``Other``) after,
    alphabetically; an ``order`` group without battles gets a row of zeros, a NaN p-value and no favoured side
    (null).
    """
    frame = frame.filter(pl.col("vote").is_not_null())
    keys = [by] if by else []
    counts = frame.group_by(keys or pl.lit(1).alias("_all")).agg(
        pl.len().alias("n"),
        (pl.col("vote") == "search").sum().alias("search"),
        (pl.col("vote") == "non-search").sum().alias("non_search"),
        (pl.col("vote") == "tie").sum().alias("tie"),
    )
    rows: dict[Any, dict[str, Any]] = {}
    for r in counts.iter_rows(named=True):
        rows[r[by] if by else "all"] = r
    if by:
        listed = list(order or ())
        rest = sorted((g for g in rows if g not in set(listed)), key=lambda g: (g is None, str(g)))  # null last
        groups = listed + rest
    else:
        groups = ["all"]
    out = []
    for g in groups:
        r = rows.get(g, {"n": 0, "search": 0, "non_search": 0, "tie": 0})
        n, s, ns, t = int(r["n"]), int(r["search"]), int(r["non_search"]), int(r["tie"])
        test = preference_binomial_test(s, ns, t, split_ties=split_ties)
        row = {by: g} if by else {}
        row.update(
            n=n,
            search=s,
            non_search=ns,
            tie=t,
            share_search=s / n if n else float("nan"),
            share_non_search=ns / n if n else float("nan"),
            share_tie=t / n if n else float("nan"),
            favours=None if not n else "search" if s > ns else "non-search" if ns > s else "even",
            alternative=test.alternative,
            p_value=test.p_value,
        )
        out.append(row)
    return pl.DataFrame(out)


def vote_shares_long(
    table: pl.DataFrame, by: str = "intent", include: Iterable[str] | None = INTENT_ORDER
) -> pl.DataFrame:
    """Long frame (``<by>``, ``vote``, ``count``, ``share``) of a :func:`vote_table` for Figure 8."""
    if include is not None:
        table = table.filter(pl.col(by).is_in(list(include)))
    parts = []
    for vote, col in (("search", "search"), ("non-search", "non_search"), ("tie", "tie")):
        parts.append(
            table.select(
                pl.col(by),
                pl.lit(vote).alias("vote"),
                pl.col(col).alias("count"),
                (pl.col(col) / pl.col("n")).alias("share"),
            )
        )
    return pl.concat(parts)


# ------------------------------------------------------------------------ ties and per-intent tests


@dataclass(frozen=True)
class TieShareComparison:
    """Tie shares of two deployments (Figure 8), from :func:`compare_tie_shares`; shares are fractions.

    ``most_tied``: the ``k`` intents of the first table with the highest tie share (highest first);
    ``overall_first`` / ``overall_second``: tie share over all battles of each table (every row, ``Other``
    included); ``overall_difference``: first minus second; ``by_intent``: one row per intent with
    ``share_tie_first``, ``share_tie_second``, ``difference`` (first minus second, NaN where either has no
    battles); ``n_first_higher``: intents where the first share is strictly higher, out of ``n_compared``
    intents with battles in both.
    """

    most_tied: tuple[str, ...]
    overall_first: float
    overall_second: float
    overall_difference: float
    by_intent: pl.DataFrame
    n_first_higher: int
    n_compared: int


def _overall_tie_share(table: pl.DataFrame) -> float:
    n = int(table["n"].sum())
    return int(table["tie"].sum()) / n if n else float("nan")


def compare_tie_shares(
    first: pl.DataFrame,
    second: pl.DataFrame,
    k: int = 3,
    by: str = "intent",
    include: Iterable[str] | None = INTENT_ORDER,
) -> TieShareComparison:
    """Compare the tie shares of two per-intent :func:`vote_table` frames (e.g. Text Arena, Search Arena).

    The paper (§3.3, Fig 8) says the Text Arena has the most ties in Analysis, Creative Generation and Guidance
    and that ties are less frequent in the Search Arena in every category. ``most_tied`` ranks the intents of
    ``include`` (all groups if None) with at least one battle in ``first`` by tie share, highest first; equal
    shares keep the order of ``include``. The overall shares pool every row of each table.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    groups = list(include) if include is not None else first[by].to_list()

    def shares(table: pl.DataFrame) -> dict[Any, tuple[int, float]]:
        return {r[by]: (int(r["n"]), float(r["share_tie"])) for r in table.iter_rows(named=True)}

    s1, s2 = shares(first), shares(second)
    rows: list[dict[str, Any]] = []
    for g in groups:
        n1, t1 = s1.get(g, (0, float("nan")))
        n2, t2 = s2.get(g, (0, float("nan")))
        t1 = t1 if n1 else float("nan")
        t2 = t2 if n2 else float("nan")
        rows.append({by: g, "n_first": n1, "share_tie_first": t1, "n_second": n2, "share_tie_second": t2,
                     "difference": t1 - t2 if n1 and n2 else float("nan")})
    by_intent = pl.DataFrame(
        rows,
        schema={by: pl.String, "n_first": pl.Int64, "share_tie_first": pl.Float64, "n_second": pl.Int64,
                "share_tie_second": pl.Float64, "difference": pl.Float64},
    )
    ranked = sorted(
        (i for i, r in enumerate(rows) if r["n_first"]), key=lambda i: (-rows[i]["share_tie_first"], i)
    )
    most = tuple(rows[i][by] for i in ranked[:k])
    compared = by_intent.filter(pl.col("difference").is_not_nan())
    o1, o2 = _overall_tie_share(first), _overall_tie_share(second)
    return TieShareComparison(
        most_tied=most,
        overall_first=o1,
        overall_second=o2,
        overall_difference=o1 - o2,
        by_intent=by_intent,
        n_first_higher=int((compared["difference"] > 0).sum()),
        n_compared=compared.height,
    )


def intent_tests(
    table: pl.DataFrame, by: str = "intent", family: Iterable[str] | None = INTENT_ORDER
) -> pl.DataFrame:
    """The per-intent binomial tests of a :func:`vote_table`, with two-sided and Holm-adjusted p-values beside
    the paper's.

    ``p_value`` is the paper's: one-sided in the observed direction, the side chosen after seeing the counts,
    so it is half the two-sided value. Added here (ours, not the paper's): ``p_two_sided`` (exact binomial,
    ties excluded, as :func:`analysis_lib.stats.preference_binomial_test` with ``alternative="two-sided"``)
    and ``p_two_sided_holm``, Holm's step-down adjustment (``statsmodels`` ``multipletests``) of the two-sided
    values over the intents of ``family`` that have decisive votes (the paper runs eight per-intent tests per
    arena with no correction). Rows outside the family or without decisive votes get NaN in the Holm column.
    Returns ``by``, ``n``, ``search``, ``non_search``, ``tie``, ``favours``, ``p_value``, ``p_two_sided``,
    ``p_two_sided_holm``, ``in_family``.
    """
    fam = set(family) if family is not None else set(table[by].to_list())
    two = [
        preference_binomial_test(r["search"], r["non_search"], alternative="two-sided").p_value
        for r in table.iter_rows(named=True)
    ]
    out = table.select(by, "n", "search", "non_search", "tie", "favours", "p_value").with_columns(
        pl.Series("p_two_sided", two, dtype=pl.Float64),
        pl.col(by).is_in(list(fam)).fill_null(False).alias("in_family"),
    )
    p2 = out["p_two_sided"].to_numpy()
    mask = out["in_family"].to_numpy() & np.isfinite(p2)
    holm = np.full(out.height, np.nan)
    if mask.any():
        holm[mask] = multipletests(p2[mask], method="holm")[1]
    return out.with_columns(pl.Series("p_two_sided_holm", holm))


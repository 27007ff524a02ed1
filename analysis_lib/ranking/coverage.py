"""Validation of a rating method: do its intervals cover planted values over replicate datasets?

:func:`ranking_coverage` fits every replicate (battles simulated from known ratings and coefficients) with a fit
supplied by the caller that returns a :class:`~analysis_lib.ranking.result.Ranking` (plain or contextual BT,
bootstrap or sandwich intervals) and records, per estimate, whether its interval covers the truth;
:func:`result_coverage` does the same for one fitted result; :func:`coverage_summary` gives the share of
covering intervals per kind (and method) with a Wilson interval (``statsmodels``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import polars as pl

from analysis_lib.ranking.result import Ranking

Replicate = tuple[pl.DataFrame, Mapping[str, float], Mapping[str, float]]
#: Columns of :func:`ranking_coverage` and :func:`result_coverage`.
COLUMNS = {"replicate": pl.Int64, "method": pl.String, "kind": pl.String, "name": pl.String, "truth": pl.Float64,
           "estimate": pl.Float64, "ci_lower": pl.Float64, "ci_upper": pl.Float64, "covered": pl.Boolean}
#: The kinds of interval :func:`ranking_coverage` checks, in its order.
KINDS: tuple[str, ...] = ("rating", "rating, anchored per round", "rating, anchor-free (centred)", "coefficient")


def ranking_coverage(
    replicates: Iterable[Replicate], fit: Callable[[pl.DataFrame, int], Ranking], anchor: str
) -> pl.DataFrame:
    """One row per estimate: does the fit's interval cover the planted value?

    Each replicate is ``(battles, true Elo ratings with anchor = 1000, true coefficients)``; replicate ``k`` is
    fitted with ``fit(battles, k)`` (``k`` lets the fit vary its bootstrap seed). Columns ``replicate, method,
    kind, name, truth, estimate, ci_lower, ci_upper, covered``; ``method`` is the fit's ``ci_method``, ``kind``
    one of :data:`KINDS`:

    - ``"rating"``: the leaderboard's own interval (:meth:`Ranking.to_frame`: rounds centred, one full-data anchor
      offset; sandwich: that of the centred rating), against the truth;
    - ``"rating, anchored per round"``: the interval of the difference to the anchor, shifted by 1000
      (:meth:`Ranking.relative_to_anchor`), against the truth;
    - ``"rating, anchor-free (centred)"``: the interval of the rating minus the mean over the models with a truth
      (:meth:`Ranking.centred`), against the truth minus its mean over the same models;
    - ``"coefficient"``: each style coefficient.

    The anchor's rating is left out of the first two kinds (its truth is 1000 by definition); coefficients with
    zero spread in a replicate (NaN) and models without a truth are left out.
    """
    frames = [result_coverage(fit(battles, k), ratings, betas, anchor, replicate=k)
              for k, (battles, ratings, betas) in enumerate(replicates)]
    if not frames:
        raise ValueError("ranking_coverage: no replicates given")
    return pl.concat(frames)


def result_coverage(result: Ranking, ratings: Mapping[str, float], betas: Mapping[str, float], anchor: str, *,
                      replicate: int = 0) -> pl.DataFrame:
    """The rows of :func:`ranking_coverage` for one fitted ``result`` against true ``ratings`` (Elo, ``anchor`` =
    1000) and coefficients ``betas``."""
    rows: list[dict[str, object]] = []
    k, method = replicate, result.ci_method
    for kind, frame in (("rating", result.to_frame()), ("rating, anchored per round", result.relative_to_anchor())):
        for r in frame.filter((pl.col("model") != anchor) & pl.col("model").is_in(list(ratings))).iter_rows(
                named=True):
            rows.append(coverage_row(k, method, kind, r["model"], ratings[r["model"]], r["rating"], r["ci_lower"],
                                     r["ci_upper"]))
    centred = result.centred([m for m in result.models if m in ratings])
    mean_truth = float(np.mean([ratings[m] for m in centred["model"]]))
    for r in centred.iter_rows(named=True):
        rows.append(coverage_row(k, method, "rating, anchor-free (centred)", r["model"],
                                 ratings[r["model"]] - mean_truth, r["rating"], r["ci_lower"], r["ci_upper"]))
    for c in result.coefficients().drop_nans("estimate").iter_rows(named=True):
        if c["feature"] in betas:
            rows.append(coverage_row(k, method, "coefficient", c["feature"], betas[c["feature"]], c["estimate"],
                                     c["ci_lower"], c["ci_upper"]))
    return pl.DataFrame(rows, schema=COLUMNS)


def coverage_summary(coverage: pl.DataFrame, level: float = 0.95) -> pl.DataFrame:
    """Share of covering intervals per group of :func:`ranking_coverage` rows, with a Wilson interval.

    Groups: the columns of ``coverage`` among ``fit, method, kind`` (``kind`` at least). Columns ``[fit,]
    [method,] kind, coverage, intervals, ci_lower, ci_upper`` (fractions), sorted by the group columns. The Wilson
    interval treats the intervals as independent; ratings of one replicate share a fit, so it is somewhat too
    narrow for them.
    """
    # statsmodels.stats loads in about 3 s: here, not with the ranking package (the leaderboard command starts light)
    from statsmodels.stats.proportion import proportion_confint  # noqa: PLC0415

    keys = [c for c in ("fit", "method", "kind") if c in coverage.columns]
    out = coverage.group_by(keys).agg(pl.col("covered").sum().alias("_k"), pl.len().alias("intervals")).sort(keys)
    lo, hi = proportion_confint(out["_k"].to_numpy(), out["intervals"].to_numpy(), alpha=1 - level, method="wilson")
    return out.select(
        *keys,
        (pl.col("_k") / pl.col("intervals")).alias("coverage"),
        pl.col("intervals").cast(pl.Int64),
        pl.Series("ci_lower", np.atleast_1d(lo), dtype=pl.Float64),
        pl.Series("ci_upper", np.atleast_1d(hi), dtype=pl.Float64),
    )


def coverage_row(k: int, method: str, kind: str, name: str, truth: float, est: float, lo: float,
                 hi: float) -> dict[str, object]:
    """One row of :func:`ranking_coverage`; ``covered`` = ``lo ≤ truth ≤ hi`` (closed interval)."""
    return {
        "replicate": k, "method": method, "kind": kind, "name": name, "truth": float(truth), "estimate": float(est),
        "ci_lower": float(lo), "ci_upper": float(hi), "covered": bool(lo <= truth <= hi),
    }

r"""Does the citation style change preferences or ranks? (SA App. A.2, "citation style randomization")

Each answer of the arena is shown either in a standardised citation format or in its provider's original one,
at random, and the release records the style of each side (``citation_format_{a,b}`` of the tidy frame,
:mod:`analysis_lib.search_arena.system_config`). The paper states the result only in words: the style "does not
significantly affect user preferences and model rankings". The authors' announcement of the arena (the
search-arena blog post of April 2025, on the first 7k votes) describes the two analyses this module runs; the
tests and their thresholds are our choice:

1. **Preference** (:func:`style_coefficient`): contextual Bradley–Terry with one feature, the side's style
   indicator ``s = 1`` (standardised) or ``0`` (original), entered as the library's style features are
   (:mod:`analysis_lib.ranking.features`: normalised difference ``(s_a − s_b)/(s_a + s_b + 1)``, z-scored), fitted
   by maximum likelihood with ties as half wins; its coefficient β has a sandwich (robust) standard error and a
   two-sided Wald test, ``p = 2 Φ(−|β / se|)``. The feature is identified only by battles whose two sides differ
   in style; a release where they never differ gets no coefficient (:attr:`StyleCoefficient.reason`).
2. **Ranks** (:func:`style_ratings`): plain Bradley–Terry with each model split into two competitors, the model
   in each style ("sonar (standardized)", "sonar (original)"), fitted on the same battles with sandwich
   covariance. Per model, the rating difference ``δ_m = R(m, standardised) − R(m, original)`` (Elo) with a 95%
   interval from ``Var(δ_m) = C_ii + C_jj − 2 C_ij``; jointly, the Wald statistic ``W = δᵀ V⁻¹ δ`` with ``V`` the
   covariance of all differences, χ² with one degree of freedom per model under "the style changes no rating";
   and Kendall's τ between the models' orders in the two styles (scipy).

Battles used: voted battles whose two sides have a known style, without the non-search model (as every
leaderboard of the paper) and without self-battles; every other battle is counted under its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from analysis_lib import ranking
from analysis_lib.search_arena.models import ANCHOR, non_leaderboard_models
from analysis_lib.search_arena.system_config import STYLES

FEATURE = "standardized"
LEVEL = 0.95


def style_battles(battles: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """Voted battles with both styles known, as ``model_a, model_b, winner, style_a, style_b`` and the 0/1
    feature columns ``standardized_a``/``_b``; and the battles left out, per reason (nothing silently)."""
    excluded = set(non_leaderboard_models())
    reasons = {
        "no vote": pl.col("winner").is_null(),
        "citation style unknown on a side": pl.col("citation_format_a").is_null()
        | pl.col("citation_format_b").is_null(),
        "non-search model (left out of every leaderboard)": pl.col("model_a").is_in(list(excluded))
        | pl.col("model_b").is_in(list(excluded)),
        "self-battle": pl.col("model_a") == pl.col("model_b"),
    }
    left_out: dict[str, int] = {}
    kept = battles
    for reason, mask in reasons.items():
        left_out[reason] = int(kept.select(mask.fill_null(False).sum()).item())
        kept = kept.filter(~mask.fill_null(False))
    frame = kept.select(
        "model_a", "model_b", "winner",
        pl.col("citation_format_a").alias("style_a"), pl.col("citation_format_b").alias("style_b"),
        (pl.col("citation_format_a") == STYLES[0]).cast(pl.Int64).alias(f"{FEATURE}_a"),
        (pl.col("citation_format_b") == STYLES[0]).cast(pl.Int64).alias(f"{FEATURE}_b"),
    )
    return frame, left_out


@dataclass(frozen=True)
class StyleCoefficient:
    """The style coefficient of the contextual fit: β (per standard deviation of the z-scored feature), its
    sandwich standard error and Wald p-value, the battles fitted and those whose sides differ in style; NaN with
    a ``reason`` when the release cannot identify it."""

    beta: float
    se: float
    p_value: float
    n_battles: int
    n_mixed: int
    reason: str = ""


def style_coefficient(frame: pl.DataFrame) -> StyleCoefficient:
    """Module docstring, analysis 1, on the output of :func:`style_battles`."""
    mixed = int((frame["style_a"] != frame["style_b"]).sum())
    if mixed == 0:
        return StyleCoefficient(np.nan, np.nan, np.nan, frame.height, 0,
                                reason="the two sides of every battle share one citation style, so no battle "
                                       "compares the styles head to head")
    present = set(frame["model_a"]) | set(frame["model_b"])  # a release may lack the paper's anchor: the anchor
    fit = ranking.leaderboard(frame, anchor=ANCHOR if ANCHOR in present else None,  # sets only the ratings' offset
                              ci="sandwich", point="ml", features=[FEATURE], convention="float", on_separation="ridge")
    assert fit.covariance is not None
    m = len(fit.models)
    beta = float(fit.coef_ml[0])
    se = float(np.sqrt(fit.covariance[m, m]))
    p = float(2 * stats.norm.sf(abs(beta / se))) if se > 0 else np.nan
    return StyleCoefficient(beta, se, p, fit.n_battles, mixed)


def split_by_style(frame: pl.DataFrame) -> pl.DataFrame:
    """Battles with each side's competitor named ``"<model> (<style>)"`` (the model in the style it was shown)."""
    return frame.with_columns(
        pl.format("{} ({})", "model_a", "style_a").alias("model_a"),
        pl.format("{} ({})", "model_b", "style_b").alias("model_b"),
    ).select("model_a", "model_b", "winner")


@dataclass(frozen=True)
class StyleRatings:
    """Analysis 2 of the module docstring: per model, ``model, standardized, original`` (Elo, anchored at
    :data:`~analysis_lib.search_arena.models.ANCHOR` in its standardised style), ``difference``, ``ci_lower``,
    ``ci_upper``, ``battles`` (of the two competitors together); the joint Wald test; Kendall's τ."""

    table: pl.DataFrame
    wald: float
    df: int
    p_value: float
    kendall_tau: float
    n_battles: int

    @property
    def n_significant(self) -> int:
        """Models whose 95% interval of the difference excludes 0."""
        return int(((self.table["ci_lower"] > 0) | (self.table["ci_upper"] < 0)).sum())


def style_ratings(frame: pl.DataFrame) -> StyleRatings:
    """Module docstring, analysis 2, on the output of :func:`style_battles`."""
    split = split_by_style(frame)
    anchor = f"{ANCHOR} ({STYLES[0]})"
    fit = ranking.leaderboard(split, anchor=anchor if anchor in set(split["model_a"]) | set(split["model_b"])
                              else None, ci="sandwich", point="ml", on_separation="ridge")
    assert fit.covariance is not None
    index = {name: k for k, name in enumerate(fit.models)}
    rows, pairs = [], []
    for model in sorted({name.rsplit(" (", 1)[0] for name in fit.models}):
        i, j = index.get(f"{model} ({STYLES[0]})"), index.get(f"{model} ({STYLES[1]})")
        if i is None or j is None:  # the model was never shown in one of the styles
            continue
        pairs.append((i, j))
        rows.append((model, fit.rating_ml[i], fit.rating_ml[j], fit.num_battles[i] + fit.num_battles[j]))
    m = len(fit.models)
    contrast = np.zeros((len(pairs), m))
    for row, (i, j) in enumerate(pairs):
        contrast[row, i], contrast[row, j] = 1.0, -1.0
    delta = contrast @ fit.theta[:m] * ranking.SCALE
    cov = contrast @ fit.covariance[:m, :m] @ contrast.T * ranking.SCALE**2
    half = stats.norm.ppf(0.5 + LEVEL / 2) * np.sqrt(np.clip(np.diag(cov), 0, None))
    wald = float(delta @ np.linalg.solve(cov, delta)) if pairs else np.nan
    table = pl.DataFrame(rows, schema={"model": pl.String, STYLES[0]: pl.Float64, STYLES[1]: pl.Float64,
                                       "battles": pl.Int64}, orient="row").with_columns(
        pl.Series("difference", delta), pl.Series("ci_lower", delta - half), pl.Series("ci_upper", delta + half),
    ).sort("difference", descending=True)
    tau = float(stats.kendalltau(table[STYLES[0]], table[STYLES[1]]).statistic) if len(rows) > 1 else np.nan
    return StyleRatings(table, wald, len(pairs), float(stats.chi2.sf(wald, len(pairs))) if pairs else np.nan,
                        tau, fit.n_battles)

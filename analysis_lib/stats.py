"""Tests and agreement statistics.

Cohen's kappa for two raters over the same items (:func:`kappa_from_confusion`, :func:`cohen_kappa`) is
statsmodels' ``cohens_kappa`` on the k x k table of counts. Unweighted,

    kappa = (p_o - p_e) / (1 - p_e),    p_o = sum_i O_ii,    p_e = sum_i r_i c_i,

with O the observed joint proportions and r, c the two raters' marginal proportions. With linear or quadratic
weights over an ordered label set (the nugget paper's weighted kappa over (A, tie, B)),

    kappa = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij,    E_ij = r_i c_j,

with disagreement weights w_ij = |i - j| / (k - 1) (linear) or ((i - j) / (k - 1))^2 (quadratic); w_ij = 1 off
the diagonal and 0 on it gives the unweighted kappa again. Constant raters: when both raters give one and the
same label to every item, p_e = 1 (sum_ij w_ij E_ij = 0) and the formula is 0 / 0; the project defines kappa = 1
there (the raters agree on every item), where statsmodels would give NaN. One constant rater against a varying
one is not degenerate: p_o = p_e and kappa = 0.

Preference tests (Search Arena §3.3): :func:`preference_binomial_test` is an exact binomial test of
search-preferred against non-search-preferred votes, ties excluded, one-sided in the observed direction
(the authors' convention in ``scripts/cross_setting_analysis.ipynb``).

Rank agreement between benchmarks (Search Arena Appendix F, Table F.1): :func:`benchmark_correlations`
gives Kendall's tau and Spearman's rho on ordinal ranks (the paper's point estimates) and Pearson's r on raw
scores for every pair of benchmark columns, with percentile bootstrap intervals over models. The bootstrap
computes tau-b and Spearman's rho with average ranks on each resample's raw scores, so that a model drawn twice
is a tied pair (neither concordant nor discordant) rather than a concordant one, which ordinal re-ranking of a
resample would make it and which biases the intervals upward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
import polars as pl
from scipy import stats as _sps
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa

Weights = Literal["linear", "quadratic"] | None


def kappa_from_confusion(confusion: np.ndarray, weights: Weights = None) -> float:
    """Cohen's kappa from a k x k table of counts (rows: rater 1, columns: rater 2, same label order), unweighted
    or with ``"linear"`` / ``"quadratic"`` disagreement weights (formulas in the module docstring), computed by
    statsmodels' ``cohens_kappa``; 1.0 when both raters use one same label throughout (p_e = 1, the project's
    convention). Counts must be finite and non-negative, with a positive total."""
    table = np.asarray(confusion, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"confusion must be a square matrix, got shape {table.shape}")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if not np.isfinite(table).all() or (table < 0).any():
        raise ValueError("confusion must hold finite, non-negative counts")
    if table.sum() <= 0:
        raise ValueError("confusion matrix has no counts")
    rows, cols = np.flatnonzero(table.sum(axis=1)), np.flatnonzero(table.sum(axis=0))
    if rows.size == 1 and cols.size == 1 and rows[0] == cols[0]:  # p_e = 1: both raters constant, same label
        return 1.0
    return float(_sm_cohens_kappa(table, wt=weights, return_results=False))


def confusion_matrix(rater1: Sequence[str], rater2: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts of (rater1 label, rater2 label) pairs in the given label order; unknown labels are an error."""
    index = {lab: n for n, lab in enumerate(labels)}
    a = np.asarray(rater1, dtype=object)
    b = np.asarray(rater2, dtype=object)
    if a.shape != b.shape:
        raise ValueError(f"raters label different numbers of items: {a.shape[0]} vs {b.shape[0]}")
    for name, arr in (("rater1", a), ("rater2", b)):
        unknown = sorted({str(x) for x in arr if x not in index})
        if unknown:
            raise ValueError(f"{name}: labels {unknown} are not in labels={list(labels)}")
    ia = np.fromiter((index[x] for x in a), dtype=np.int64, count=a.size)
    ib = np.fromiter((index[x] for x in b), dtype=np.int64, count=b.size)
    table = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(table, (ia, ib), 1)
    return table


def cohen_kappa(
    rater1: Sequence[str], rater2: Sequence[str], labels: Sequence[str] | None = None, weights: Weights = None
) -> float:
    """Cohen's kappa between two label sequences (weights need an ordered ``labels``)."""
    if labels is None:
        if weights is not None:
            raise ValueError("weighted kappa needs the ordered label list `labels`")
        labels = sorted(set(rater1) | set(rater2))
    return kappa_from_confusion(confusion_matrix(rater1, rater2, labels), weights)


# ---------------------------------------------------------------------------------------------------------
# Binomial preference test (Search Arena §3.3)
# ---------------------------------------------------------------------------------------------------------

Alternative = Literal["observed", "two-sided", "greater", "less"]


@dataclass(frozen=True)
class BinomialTestResult:
    """Outcome of :func:`preference_binomial_test`.

    ``statistic`` is the share of ``wins`` among the votes tested, ``wins_used / n``; ``n = wins_used +
    losses_used``. ``alternative`` is the scipy alternative actually tested for "wins" (``greater``: wins are
    more likely than losses). ``direction`` names the observed direction: ``"wins"``, ``"losses"`` or
    ``"none"`` (equal counts; with p = 0.5 both one-sided tests then give the same p-value).
    """

    statistic: float
    p_value: float
    n: int
    wins_used: int
    losses_used: int
    alternative: str
    direction: str
    ties_split: bool


def preference_binomial_test(
    wins: int, losses: int, ties: int = 0, split_ties: bool = False, alternative: Alternative = "observed"
) -> BinomialTestResult:
    """Exact binomial test (p = 0.5) of ``wins`` against ``losses`` (e.g. search- vs non-search-preferred).

    Ties are excluded by default. ``split_ties=True`` adds ``ties // 2`` to each side (floor division, so an
    odd number of ties drops one tie), exactly as the authors' ``run_binom_test``. ``alternative="observed"``
    tests one-sided in the observed direction (``greater`` if wins > losses, else ``less``), as in the paper;
    ``"two-sided"``, ``"greater"`` or ``"less"`` test that alternative instead. With no votes to test
    (n = 0) the statistic and p-value are NaN.
    """
    for name, v in (("wins", wins), ("losses", losses), ("ties", ties)):
        if int(v) != v or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    half = int(ties) // 2 if split_ties else 0
    k, m = int(wins) + half, int(losses) + half
    n = k + m
    direction = "wins" if wins > losses else "losses" if losses > wins else "none"
    if alternative == "observed":
        alt = "greater" if wins > losses else "less"
    elif alternative in ("two-sided", "greater", "less"):
        alt = alternative
    else:
        raise ValueError(f"alternative must be 'observed', 'two-sided', 'greater' or 'less', got {alternative!r}")
    if n == 0:
        return BinomialTestResult(float("nan"), float("nan"), 0, 0, 0, alt, direction, split_ties)
    res = _sps.binomtest(k, n, p=0.5, alternative=alt)
    return BinomialTestResult(float(k / n), float(res.pvalue), n, k, m, alt, direction, split_ties)


# ---------------------------------------------------------------------------------------------------------
# Agreement between benchmarks (Search Arena Appendix F)
# ---------------------------------------------------------------------------------------------------------


def ordinal_ranks(scores: np.ndarray, descending: bool = True) -> np.ndarray:
    """Ranks 1..n along the last axis (1 = best when ``descending``); ties broken by position (first = better).

    Equals ``scipy.stats.rankdata(-x, method="ordinal")`` for one row, which is how the authors rank Table
    F.1 before Kendall's tau. Because ties are broken by row order, the result depends on the order of tied
    scores (SimpleQA has two pairs of ties).
    """
    x = np.asarray(scores, dtype=float)
    order = np.argsort(-x if descending else x, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, x.shape[-1] + 1) * np.ones_like(order), axis=-1)
    return ranks


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r row by row of two (B, n) arrays; NaN where a row is constant."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    den = np.sqrt((xc**2).sum(axis=-1) * (yc**2).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (xc * yc).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)


def _kendall_untied_rows(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Kendall's tau of untied rank rows (B, n): (concordant - discordant) / (n choose 2)."""
    n = rx.shape[-1]
    i, j = np.triu_indices(n, k=1)
    s = np.sign(rx[..., i] - rx[..., j]) * np.sign(ry[..., i] - ry[..., j])
    return s.sum(axis=-1) / (n * (n - 1) / 2)


def _kendall_tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b row by row of two (B, n) arrays of raw scores (``scipy.stats.kendalltau`` default).

    tau-b = (C - D) / sqrt((n0 - n1) (n0 - n2)), n0 = n (n - 1) / 2 pairs, n1 / n2 the pairs tied in x / y;
    NaN where either row is constant. A pair tied in x or y counts in neither C nor D.
    """
    n = x.shape[-1]
    i, j = np.triu_indices(n, k=1)
    sx = np.sign(x[..., i] - x[..., j])
    sy = np.sign(y[..., i] - y[..., j])
    n0 = n * (n - 1) / 2
    den = np.sqrt((n0 - (sx == 0).sum(axis=-1)) * (n0 - (sy == 0).sum(axis=-1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sy).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)


def _pair_statistics(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Kendall tau-b, Spearman rho, Pearson r) on the raw scores, row by row of two (B, n) arrays.

    These are the bootstrap statistics of :func:`benchmark_correlations`. Ties, including the duplicates a
    resample with replacement creates, stay ties: tau-b leaves tied pairs out, Spearman's rho uses average
    ranks (``scipy.stats.spearmanr``). Ordinal ranks would break a duplicated model's tie the same way in both
    columns and count it as concordant, pulling every resample towards +1.
    """
    ax = _sps.rankdata(x, method="average", axis=-1)
    ay = _sps.rankdata(y, method="average", axis=-1)
    return _kendall_tau_b_rows(x, y), _pearson_rows(ax, ay), _pearson_rows(x, y)


def benchmark_correlations(
    scores: pl.DataFrame,
    models: str = "model",
    benchmarks: Sequence[str] | None = None,
    *,
    rounds: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pl.DataFrame:
    """Agreement between every pair of benchmark columns of a model-by-benchmark score table.

    For each pair (in column order) the frame holds:

    - ``kendall_tau``: Kendall's tau between the *ordinal* ranks of the two columns (rank 1 = highest score,
      ties broken by row order: ``rankdata(-x, method="ordinal")``), the authors' convention for Table F.1.
      Ordinal ranks have no ties, so tau-a = tau-b = tau-c here;
    - ``kendall_tau_b``: tau-b on the raw scores (ties kept as ties; ``scipy.stats.kendalltau`` default), the
      order-independent alternative; it differs from ``kendall_tau`` only when a column has tied scores;
    - ``spearman_rho``: Spearman's rho between the ordinal ranks; ``pearson_r``: Pearson's r on raw scores;
    - ``kendall_tau_lo`` / ``_hi``, ``spearman_rho_lo`` / ``_hi``, ``pearson_r_lo`` / ``_hi``: percentile
      bootstrap interval at ``level`` over models (rows resampled with replacement, ``rounds`` rounds,
      ``numpy.random.default_rng(seed)``; resamples where a statistic is undefined, e.g. a constant column, are
      left out). On each resample Kendall's tau is computed as **tau-b on the raw scores** and Spearman's rho
      with **average ranks**, so that a model drawn twice is a tie, not a concordant pair (ordinal re-ranking of
      a resample would bias the interval upward). The tau interval is therefore the interval of tau-b; it
      brackets both point estimates in practice, which differ only when a column has tied scores. With ten
      models these intervals are wide and rough: read them as a scale of uncertainty, not as exact coverage;
    - ``n_models``.

    ``benchmarks`` defaults to every numeric column except ``models`` and interval columns ending in
    ``_lo`` / ``_hi``. Rows with a missing score in either column of a pair are dropped for that pair.
    """
    if models not in scores.columns:
        raise ValueError(f"scores has no model column {models!r}; columns: {scores.columns}")
    if benchmarks is None:
        benchmarks = [
            c
            for c, dt in scores.schema.items()
            if c != models and dt.is_numeric() and not c.endswith(("_lo", "_hi"))
        ]
    benchmarks = list(benchmarks)
    missing = [b for b in benchmarks if b not in scores.columns]
    if missing:
        raise ValueError(f"benchmark column(s) {missing} not in scores; columns: {scores.columns}")
    if len(benchmarks) < 2:
        raise ValueError(f"need at least two benchmark columns, got {benchmarks}")
    alpha = (1.0 - level) / 2.0
    rng = np.random.default_rng(seed)
    rows = []
    for bx, by in combinations(benchmarks, 2):
        pair = scores.select(bx, by).drop_nulls().drop_nans()
        x = pair[bx].to_numpy().astype(float)
        y = pair[by].to_numpy().astype(float)
        n = x.size
        if n < 3:
            raise ValueError(f"{bx} vs {by}: need at least 3 models with both scores, got {n}")
        rx, ry = ordinal_ranks(x), ordinal_ranks(y)
        row = {
            "benchmark_x": bx,
            "benchmark_y": by,
            "n_models": n,
            "kendall_tau": float(_sps.kendalltau(rx, ry).statistic),
            "kendall_tau_b": float(_sps.kendalltau(x, y).statistic),
            "spearman_rho": float(_sps.spearmanr(rx, ry).statistic),
            "pearson_r": float(_sps.pearsonr(x, y).statistic),
        }
        if rounds > 0:
            idx = rng.integers(0, n, size=(rounds, n))
            stats_b = _pair_statistics(x[idx], y[idx])
            boots = dict(zip(("kendall_tau", "spearman_rho", "pearson_r"), stats_b, strict=True))
            for name, vals in boots.items():
                vals = vals[np.isfinite(vals)]
                lo, hi = np.quantile(vals, [alpha, 1 - alpha]) if vals.size else (np.nan, np.nan)
                row[f"{name}_lo"], row[f"{name}_hi"] = float(lo), float(hi)
        rows.append(row)
    return pl.DataFrame(rows)


# ------------------------------------------------------------------------------------ leaderboard agreement


@dataclass(frozen=True)
class LeaderboardAgreement:
    """Agreement of two leaderboards over the same models (DR-Arena Table 3, Table 6, Fig 4)."""

    n_models: int
    spearman: float
    spearman_p: float
    pearson: float
    pearson_p: float
    spearman_published_ranks: float
    n_rank_swaps: int


def rank_swaps(a: np.ndarray, b: np.ndarray) -> int:
    """Number of model pairs ordered differently by two score vectors (pairs tied in either count as agreeing)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    da, db = np.sign(a[:, None] - a[None, :]), np.sign(b[:, None] - b[None, :])
    return int(np.triu(da * db < 0, 1).sum())


def _ratings(board: object, rating: str) -> pl.DataFrame | None:
    """``model, rating`` of a leaderboard frame or of a result with ``to_frame()`` (a ``ranking.Ranking``); ``None``
    for a plain vector."""
    frame = board.to_frame() if hasattr(board, "to_frame") and not isinstance(board, pl.DataFrame) else board
    if not isinstance(frame, pl.DataFrame):
        return None
    for c in ("model", rating):
        if c not in frame.columns:
            raise ValueError(f"a leaderboard frame needs the columns 'model' and {rating!r}; {c!r} not found "
                             f"(columns: {', '.join(frame.columns)})")
    return frame.select(pl.col("model").cast(pl.String), pl.col(rating).cast(pl.Float64).alias("_r"))


def leaderboard_agreement(a: object, b: object, *, rating: str = "rating") -> LeaderboardAgreement:
    """Spearman's rho (average ranks) and Pearson's r between two leaderboards, with scipy's p-values, and the
    number of model pairs the two order differently. ``spearman_published_ranks`` equals ``spearman`` here.

    ``a``, ``b``: two leaderboard frames (columns ``model`` and ``rating``; another rating column with
    ``rating=``) or two :class:`~analysis_lib.ranking.Ranking`, joined by model (the models of both; e.g. the full
    arena against a subset's board); or two rating vectors already aligned over the same models."""
    fa, fb = _ratings(a, rating), _ratings(b, rating)
    if (fa is None) != (fb is None):
        raise ValueError("pass two leaderboards (frames or Rankings) or two aligned rating vectors, not one of each")
    if fa is not None and fb is not None:
        joined = fa.join(fb, on="model", how="inner", suffix="_b")
        x, y = joined["_r"].to_numpy(), joined["_r_b"].to_numpy()
    else:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"need two rating vectors of the same length >= 3 (models in both leaderboards), got "
                         f"{x.size} and {y.size}")
    rho = _sps.spearmanr(x, y)
    r = _sps.pearsonr(x, y)
    return LeaderboardAgreement(x.size, float(rho.statistic), float(rho.pvalue), float(r.statistic),
                                float(r.pvalue), float(rho.statistic), rank_swaps(x, y))


def leaderboard_correlations(
    table: pl.DataFrame, x: str = "search_arena_elo", y: str = "dr_arena_elo"
) -> LeaderboardAgreement:
    """Spearman (average ranks) and Pearson between two Elo columns of a leaderboard table (DR-Arena Table 3),
    and Spearman between the published rank columns (``x``/``y`` with ``_elo`` replaced by ``_rank``) as a
    consistency check."""
    base = leaderboard_agreement(table[x].to_numpy(), table[y].to_numpy())
    xr, yr = x.replace("_elo", "_rank"), y.replace("_elo", "_rank")
    rank_rho = float(_sps.spearmanr(table[xr].to_numpy(), table[yr].to_numpy()).statistic)
    return LeaderboardAgreement(base.n_models, base.spearman, base.spearman_p, base.pearson, base.pearson_p,
                                rank_rho, base.n_rank_swaps)

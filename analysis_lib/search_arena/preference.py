"""Win rates, per-model and per-intent summaries, and the subsets of Search Arena's preference analysis.

Companion to :mod:`analysis_lib.search_arena.bt` (the rating models). Conventions follow the authors'
``scripts/preference_analysis.ipynb``:

- SA-D1 battle counts: voted battles, ``gemini-2.5-pro`` (non-search) removed, ties included.
- SA-D3 win fractions: decided battles only (ties excluded); row beats column =
  (row won as A + row won as B) / battles between them; average win rate = mean over opponents. The authors
  build this matrix from the decided battles *before* removing ``gemini-2.5-pro`` (so it appears as a row and
  an opponent); :func:`pairwise_win_fraction` takes whatever battles it is given.
- SA-31 search context: one-sided two-sample t-test (equal variances, ``scipy.stats.ttest_ind``) on the 0/1
  outcomes of each model's decided battles against every other model (self-battles dropped). Caveat (the
  authors' method, kept): battles between the two compared models appear in both samples (a win for one is a
  loss for the other), so the samples are not independent as the test assumes.
- SA-D5s subsets: English / non-English by the first language of the conversation (``language``; conversations
  without one are in neither), Factual = primary intent ``Factual Lookup`` or ``Info Synthesis``.
- SA-F4 / SA-D6 / SA-F5 summaries: one row per response (both sides of every voted battle), mean ± 95%
  t-interval; the citation panel of Fig 4 averages over responses that cite (``citation_count != 0``);
  ``gpt-4o-search-high-loc`` is left out of Fig 4 and of the source-share figures. In Fig 4 the per-model
  means come from the same battles as the BT fit (those without ``gpt-4o-search-high-loc``); the authors
  averaged over all voted battles, dropping only that model's own responses.
- SA-E2 / SA-E3 source shares: share of responses citing each group (``cites_<group>``), among responses
  citing at least one non-``other`` group, with a Wilson interval (the authors drew a t-interval of a
  proportion, which has zero width at 0 and 1); ``other`` is not shown.

Units: every ``share`` / ``win_rate`` column is a fraction in [0, 1]; notebooks format percentages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from analysis_lib.search_arena import bt, screening
from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.models import non_leaderboard_models, provider_of

FACTUAL_INTENTS: tuple[str, ...] = ("Factual Lookup", "Info Synthesis")
FIG4_EXCLUDED: tuple[str, ...] = ("gpt-4o-search-high-loc",)


# --------------------------------------------------------------------------------------------------------------
# subsets
# --------------------------------------------------------------------------------------------------------------


def _subset_filters(battles: pl.DataFrame) -> dict[str, pl.Expr]:
    """The predicates of :func:`leaderboard_subsets` (``all``: every battle)."""
    lang = pl.col("language")
    factual = pl.col("primary_intent").is_in(list(FACTUAL_INTENTS))
    out = {"all": pl.lit(True)}
    if battles["language"].is_not_null().any():
        out |= {"english": lang == "English", "non_english": lang.is_not_null() & (lang != "English")}
    if battles["primary_intent"].is_not_null().any():
        out |= {"factual": factual, "non_factual": ~factual.fill_null(False)}
    return out


def leaderboard_subsets(battles: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The five frames of Table D.1: ``all``, ``english``, ``non_english``, ``factual``, ``non_factual``.

    As the authors' notebook: English / non-English by the first language of the conversation (``language``;
    a conversation without one is in neither); Factual = ``primary_intent`` in :data:`FACTUAL_INTENTS`
    (Factual Lookup, Info Synthesis), non-Factual = everything else, a null intent included (pandas
    ``~isin``). A pair of subsets whose label no battle has (a release without intents or languages) is left out.
    """
    return {name: battles.filter(keep) for name, keep in _subset_filters(battles).items()}


#: The four subsets of Table D.1, in its column order.
SUBSETS: tuple[str, ...] = ("english", "non_english", "factual", "non_factual")


def table_d1(battles: bt.Frame, rounds: int = 100, seed: int = 0, *,
             full: pl.DataFrame | None = None) -> pl.DataFrame:
    """Table D.1: rating and rank per model on the full data and the four subsets (wide, one row per model).

    Columns ``model, rating, rank, rating_english, rank_english, …`` as in the published CSV
    (``analysis_lib.fetch.published("search_arena_table_d1_leaderboard")``), sorted by the full-data rating; the
    columns of a subset :func:`leaderboard_subsets` leaves out are null, as are those of a model with no battle in
    a subset. The battles are screened once (:func:`.screening.screened`) and split. ``full``: the leaderboard of
    all ``battles`` already fitted with the same rounds and seed (``bt.leaderboard(...).to_frame()``), not fitted
    again.
    """
    prep = screening.screened(battles)
    out: pl.DataFrame | None = None
    for name, keep in _subset_filters(prep.frame).items():
        suffix = "" if name == "all" else f"_{name}"
        board = (full if name == "all" and full is not None
                 else bt.leaderboard(prep.where(keep), rounds=rounds, seed=seed).to_frame())
        lb = board.select(
            "model", pl.col("rating").alias(f"rating{suffix}"), pl.col("rank").alias(f"rank{suffix}")
        )
        out = lb if out is None else out.join(lb, on="model", how="left")
    assert out is not None
    columns = [f"{c}_{s}" for s in SUBSETS for c in ("rating", "rank")]
    absent = [pl.lit(None, out[c.split("_")[0]].dtype).alias(c) for c in columns if c not in out.columns]
    return out.with_columns(absent).select("model", "rating", "rank", *columns).sort("rating", descending=True)


# --------------------------------------------------------------------------------------------------------------
# battle counts and win rates (SA-D1, SA-D3)
# --------------------------------------------------------------------------------------------------------------


def battles_per_model(battles: pl.DataFrame) -> pl.DataFrame:
    """``model, num_battles`` (each battle counts for both sides), most battles first."""
    both = pl.concat([battles.select(pl.col(c).alias("model")) for c in ("model_a", "model_b")])
    return both.group_by("model").len(name="num_battles").sort(["num_battles", "model"], descending=[True, False])


def _indices(frame: pl.DataFrame, models: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``models`` of each battle's ``model_a`` and ``model_b``."""
    index = {m: i for i, m in enumerate(models)}
    sides = frame.select(pl.col(c).replace_strict(index, return_dtype=pl.Int64) for c in ("model_a", "model_b"))
    return sides["model_a"].to_numpy(), sides["model_b"].to_numpy()


def pairwise_counts(battles: pl.DataFrame, order: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """Symmetric matrix of battle counts between models (either side), in ``order`` (default: by name)."""
    models = list(order) if order is not None else sorted(set(battles["model_a"]) | set(battles["model_b"]))
    frame = battles.filter(pl.col("model_a").is_in(models) & pl.col("model_b").is_in(models))
    a, b = _indices(frame, models)
    mat = np.zeros((len(models), len(models)))
    np.add.at(mat, (a, b), 1.0)
    return models, mat + mat.T - np.diag(np.diag(mat))


def pairwise_win_fraction(battles: pl.DataFrame, order: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """``(models, F)`` with ``F[i, j]`` = share of decided battles between ``i`` and ``j`` that ``i`` won.

    Ties are excluded; NaN where two models never had a decided battle (and on the diagonal). Default order:
    by average win rate, best first (the authors' order when none is given).
    """
    dec = screening.decided(battles).filter(pl.col("model_a") != pl.col("model_b"))
    models = sorted(set(dec["model_a"]) | set(dec["model_b"]))
    a, b = _indices(dec, models)
    a_won = (dec["winner"] == "model_a").to_numpy()
    wins = np.zeros((len(models), len(models)))
    np.add.at(wins, (np.where(a_won, a, b), np.where(a_won, b, a)), 1.0)
    games = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(games > 0, wins / games, np.nan)
    np.fill_diagonal(frac, np.nan)
    if order is None:
        avg = np.nanmean(frac, axis=1)
        order = [models[i] for i in np.argsort(-avg, kind="stable")]
    pos = [models.index(m) for m in order]
    return list(order), frac[np.ix_(pos, pos)]


def average_win_rates(battles: pl.DataFrame) -> pl.DataFrame:
    """``model, win_rate`` = mean over opponents of the pairwise win fraction (ties excluded), best first."""
    models, frac = pairwise_win_fraction(battles)
    return pl.DataFrame({"model": models, "win_rate": np.nanmean(frac, axis=1)})


# --------------------------------------------------------------------------------------------------------------
# SA-31: search context
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WinRateComparison:
    """One-sided two-sample t-test that ``model_1``'s win rate exceeds ``model_2``'s."""

    model_1: str
    model_2: str
    win_rate_1: float
    win_rate_2: float
    n_1: int
    n_2: int
    t: float
    p_value: float

    @property
    def reason(self) -> str:
        """Why the comparison has no value (a model with no decided battle in the data, as in a release without
        it); empty when both have battles."""
        gone = [m for m, n in ((self.model_1, self.n_1), (self.model_2, self.n_2)) if n == 0]
        verb = "has" if len(gone) == 1 else "have"
        return f"{' and '.join(gone)} {verb} no decided battle in this data" if gone else ""


def compare_win_rates(battles: pl.DataFrame, model_1: str, model_2: str) -> WinRateComparison:
    """SA-31: 0/1 outcomes of each model's decided battles (any opponent, self-battles dropped); t-test
    (equal variances) of ``win rate 1 > win rate 2``, as the authors' ``compare_models``.

    Pass the voted battles with the non-search model removed (``bt.prepare_battles(...).frame``), as they did.
    Caveat (the authors' method, kept): battles between ``model_1`` and ``model_2`` enter both samples, with
    opposite outcomes, so the two samples are dependent and the p-value is only approximate.
    """
    dec = screening.decided(battles).filter(pl.col("model_a") != pl.col("model_b"))

    def outcomes_of(model: str) -> np.ndarray:
        rows = dec.filter((pl.col("model_a") == model) | (pl.col("model_b") == model))
        won = ((rows["model_a"] == model) & (rows["winner"] == "model_a")) | (
            (rows["model_b"] == model) & (rows["winner"] == "model_b")
        )
        return won.to_numpy().astype(float)

    x1, x2 = outcomes_of(model_1), outcomes_of(model_2)
    if min(x1.size, x2.size) == 0:  # a model the data does not have: no rates, no test (see ``reason``)
        nan = float("nan")
        rate_1, rate_2 = (float(x.mean()) if x.size else nan for x in (x1, x2))
        return WinRateComparison(model_1, model_2, rate_1, rate_2, x1.size, x2.size, nan, nan)
    res = stats.ttest_ind(x1, x2, alternative="greater")
    return WinRateComparison(
        model_1, model_2, float(x1.mean()), float(x2.mean()), x1.size, x2.size, float(res.statistic), float(res.pvalue)
    )


# --------------------------------------------------------------------------------------------------------------
# per-response summaries (SA-F4, SA-F5, SA-D6)
# --------------------------------------------------------------------------------------------------------------


def responses(battles: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """One row per response: ``model``, ``primary_intent`` and the per-side ``columns`` (base names)."""
    keep = [c for c in ("primary_intent",) if c in battles.columns]

    def side(s: str) -> pl.DataFrame:
        return battles.select(
            pl.col(f"model_{s}").alias("model"), *keep, *(pl.col(f"{c}_{s}").alias(c) for c in columns)
        )

    return pl.concat([side("a"), side("b")])


def mean_ci(
    battles: pl.DataFrame,
    column: str,
    by: str = "model",
    *,
    nonzero: bool = False,
    skip: Sequence[str] = (),
    level: float = 0.95,
) -> pl.DataFrame:
    """Mean of per-response ``column`` per ``by`` (``model`` or ``primary_intent``) with a t-interval.

    Columns ``<by>, mean, sd, n, ci`` (half-width ``t_{0.975, n−1} · sd / √n``). ``nonzero`` keeps responses
    with a non-zero value (the citation panel of Fig 4); ``skip`` drops values of ``by`` (e.g. ``"Other"``).
    """
    resp = responses(battles, [column]).filter(pl.col(column).is_not_null())
    if nonzero:
        resp = resp.filter(pl.col(column) != 0)
    if skip:
        resp = resp.filter(~pl.col(by).is_in(list(skip)))
    out = resp.group_by(by).agg(
        pl.col(column).mean().alias("mean"), pl.col(column).std().alias("sd"), pl.len().alias("n")
    )
    tq = stats.t.ppf(0.5 + level / 2, np.maximum(out["n"].to_numpy() - 1, 1))
    half = tq * out["sd"].to_numpy() / np.sqrt(out["n"].to_numpy())
    return out.with_columns(pl.Series("ci", half)).sort("mean", descending=True)


@dataclass(frozen=True)
class LineFit:
    """OLS ``y = intercept + slope · x`` with a 95% confidence band for the mean on ``grid``."""

    slope: float
    intercept: float
    r2: float
    p_value: float
    grid: np.ndarray
    fit: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @property
    def band(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(grid, fit, lower, upper)`` for :func:`analysis_lib.plotting.scatter_fit`."""
        return self.grid, self.fit, self.lower, self.upper


def ols_band(x: np.ndarray, y: np.ndarray, level: float = 0.95, n_grid: int = 100) -> LineFit:
    """statsmodels OLS of ``y`` on ``x`` with intercept; confidence band of the mean (Fig 4)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    res = sm.OLS(y, sm.add_constant(x)).fit()
    grid = np.linspace(x.min(), x.max(), n_grid)
    pred = res.get_prediction(sm.add_constant(grid)).summary_frame(alpha=1 - level)
    return LineFit(
        slope=float(res.params[1]),
        intercept=float(res.params[0]),
        r2=float(res.rsquared),
        p_value=float(res.pvalues[1]),
        grid=grid,
        fit=pred["mean"].to_numpy(),
        lower=pred["mean_ci_lower"].to_numpy(),
        upper=pred["mean_ci_upper"].to_numpy(),
    )


#: The two panels of Fig 4: per-model mean response length, and citations over the responses that cite.
FIG4_COLUMNS: tuple[str, ...] = ("response_length", "citation_count")


class FeatureFit(NamedTuple):
    """One panel of Fig 4: the per-model points (``model, score, ci_lower, ci_upper, mean, ci``) and the OLS line of
    score on mean."""

    points: pl.DataFrame
    line: LineFit


def score_vs_features(
    battles: bt.Frame,
    columns: Sequence[str] = FIG4_COLUMNS,
    *,
    rounds: int = 100,
    seed: int = 0,
    exclude: Sequence[str] = FIG4_EXCLUDED,
) -> dict[str, FeatureFit]:
    """Fig 4: per-model BT score (bootstrap mean) against the per-model mean of each of ``columns``, and their OLS
    line; one leaderboard fit for all columns.

    As the authors' notebook (``preference_analysis.ipynb``) does: the BT fit drops every battle involving a model
    in ``exclude`` (they fit Fig 4 without ``gpt-4o-search-high-loc``), while the per-model means are over every
    side of all screened battles (:func:`.screening.screened`: voted, without the non-leaderboard models), those
    against an excluded model included; an excluded model has a mean but no score, so it is not a point.
    ``citation_count`` is averaged over responses that cite, as in the paper. Per column: a :class:`FeatureFit`, the
    merged frame and the OLS fit of score on mean (:func:`ols_band`).
    """
    screened = screening.screened(battles, non_leaderboard_models())
    kept = screening.screened(screened, exclude)
    lb = bt.leaderboard(kept, rounds=rounds, seed=seed).to_frame().select(
        "model", pl.col("rating").alias("score"), "ci_lower", "ci_upper"
    )
    out = {}
    for column in columns:
        summary = mean_ci(screened.frame, column, nonzero=column == "citation_count")
        merged = lb.join(summary.select("model", "mean", "ci"), on="model", how="inner").sort("mean")
        out[column] = FeatureFit(merged, ols_band(merged["mean"].to_numpy(), merged["score"].to_numpy()))
    return out


# --------------------------------------------------------------------------------------------------------------
# citation sources (SA-E2, SA-E3)
# --------------------------------------------------------------------------------------------------------------


def _citing_responses(battles: pl.DataFrame, exclude: Sequence[str], models: Sequence[str] | None) -> pl.DataFrame:
    groups = [g for g in DOMAIN_GROUPS if g != "other"]
    resp = responses(battles, [f"cites_{g}" for g in groups]).filter(~pl.col("model").is_in(list(exclude)))
    if models is not None:
        resp = resp.filter(pl.col("model").is_in(list(models)))
    return resp.filter(pl.sum_horizontal([pl.col(f"cites_{g}").fill_null(0) for g in groups]) > 0)


def source_shares(
    battles: pl.DataFrame,
    by: str = "family",
    *,
    models: Sequence[str] | None = None,
    exclude: Sequence[str] = FIG4_EXCLUDED,
    level: float = 0.95,
) -> pl.DataFrame:
    """Share of responses citing each source group, per model family (``by="family"``) or ``by="model"``.

    Long frame ``<by>, group, share, n, ci_lower, ci_upper`` (fractions): among responses (both sides of the
    given battles) that cite at least one group other than ``other``, the share with ``cites_<group> = 1``, and
    its Wilson interval (``statsmodels`` ``proportion_confint(method="wilson")``; sensible at 0 and 1, where a
    Wald interval has zero width). ``other`` is not reported (as in Fig E.2). Family = provider of
    ``resources/model_names.csv`` (:func:`analysis_lib.search_arena.models.provider_of`). ``models`` restricts the
    responses (Fig E.3: ``["sonar-pro-high", "sonar-reasoning-pro-high"]``).
    """
    groups = [g for g in DOMAIN_GROUPS if g != "other"]
    resp = _citing_responses(battles, exclude, models)
    if by == "family":
        resp = resp.with_columns(provider_of(pl.col("model")).alias("family"))
    long = resp.unpivot(index=[by], on=[f"cites_{g}" for g in groups], variable_name="group", value_name="cited")
    out = (
        long.with_columns(pl.col("group").str.strip_prefix("cites_"))
        .group_by(by, "group")
        .agg(pl.col("cited").fill_null(0).cast(pl.Float64).sum().alias("_k"), pl.len().alias("n"))
    )
    lo, hi = proportion_confint(out["_k"].to_numpy(), out["n"].to_numpy(), alpha=1 - level, method="wilson")
    order = {g: i for i, g in enumerate(groups)}
    return (
        out.with_columns(
            (pl.col("_k") / pl.col("n")).alias("share"),
            pl.Series("ci_lower", np.atleast_1d(lo), dtype=pl.Float64),
            pl.Series("ci_upper", np.atleast_1d(hi), dtype=pl.Float64),
            pl.col("group").replace_strict(order, return_dtype=pl.Int64).alias("_o"),
        )
        .sort("_o", by)
        .select(by, "group", "share", pl.col("n").cast(pl.Int64), "ci_lower", "ci_upper")
    )


def source_share_difference(
    battles: pl.DataFrame,
    model: str,
    baseline: str,
    *,
    level: float = 0.95,
) -> pl.DataFrame:
    """Fig E.3 in one number per group: share of ``model``'s citing responses that cite the group minus
    ``baseline``'s (fractions; e.g. reasoning ``sonar-reasoning-pro-high`` vs ``sonar-pro-high``).

    Columns ``group, share, share_baseline, difference, ci_lower, ci_upper, n, n_baseline``; the interval is
    Newcombe's hybrid score interval for a difference of independent proportions (``statsmodels``
    ``confint_proportions_2indep(method="newcomb")``). Responses as in :func:`source_shares`.
    """
    shares = source_shares(battles, by="model", models=[model, baseline], exclude=[], level=level)
    one = shares.filter(pl.col("model") == model).select("group", "share", "n")
    base = shares.filter(pl.col("model") == baseline).select(
        "group", pl.col("share").alias("share_baseline"), pl.col("n").alias("n_baseline")
    )
    both = one.join(base, on="group", how="inner", maintain_order="left")
    rows = []
    for r in both.iter_rows(named=True):
        lo, hi = confint_proportions_2indep(
            round(r["share"] * r["n"]), r["n"], round(r["share_baseline"] * r["n_baseline"]), r["n_baseline"],
            method="newcomb", compare="diff", alpha=1 - level,
        )
        rows.append((float(lo), float(hi)))
    ci = np.array(rows, dtype=float).reshape(-1, 2)
    return both.select(
        "group", "share", "share_baseline", (pl.col("share") - pl.col("share_baseline")).alias("difference"),
        pl.Series("ci_lower", ci[:, 0], dtype=pl.Float64), pl.Series("ci_upper", ci[:, 1], dtype=pl.Float64),
        "n", "n_baseline",
    )

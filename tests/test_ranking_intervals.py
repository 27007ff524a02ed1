"""Intervals and the result type: sandwich intervals against arena-rank (its conventions, same data) and against
statsmodels' HC0 robust covariance, bootstrap percentiles, the Ranking frames, and interval coverage over
replicates with planted ratings."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm

from analysis_lib import ranking
from analysis_lib.ranking import _newton as newton
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import features

MODELS = ["p", "q", "r", "s", "t", "u"]
STRENGTH = np.array([0.25, 0.1, 0.0, -0.05, -0.15, -0.3])


def bt_fits(data: pairs.PairData, w: np.ndarray) -> np.ndarray:
    """Exact BT fits (``Σ r = 0``) of ``data`` for every row of weights ``w`` (the sparse Newton)."""
    stats = newton.PairStats.from_rows(data.pairs, data.outcomes, len(data.models))
    n, s = stats.totals(np.atleast_2d(w))
    theta, report = newton.fit_pairs(stats, n, s)
    assert report.converged.all()
    return theta - theta.mean(axis=1, keepdims=True)


def battles(n: int = 6000, seed: int = 0, beta: float = 0.0, tie_rate: float = 0.15) -> pl.DataFrame:
    """Battles with planted strengths (log10), ties, one style feature ``len`` with planted effect ``beta``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    la, lb = rng.gamma(3.0, 100.0, n), rng.gamma(3.0, 100.0, n)
    d = (la - lb) / (la + lb + 1)
    eta = math.log(10) * (STRENGTH[a] - STRENGTH[b]) + beta * (d - d.mean()) / d.std()
    u, t = rng.random(n), rng.random(n)
    winner = np.where(t < tie_rate, "tie", np.where(u < 1 / (1 + np.exp(-eta)), "model_a", "model_b"))
    names = np.array(MODELS)
    return pl.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner, "len_a": la, "len_b": lb})


def _half_width(lo, hi) -> np.ndarray:
    return (np.asarray(hi) - np.asarray(lo)) / 2


# ----------------------------------------------------------------------------------------------- arena-rank


def test_plain_sandwich_matches_arena_rank():
    pytest.importorskip("arena_rank")
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    frame = battles()
    ds = PairDataset.from_pandas(frame.to_pandas())
    theirs = BradleyTerry(n_competitors=len(ds.competitors)).compute_ratings_and_cis(ds, ci_method="sandwich")
    t_half = dict(zip(ds.competitors, _half_width(theirs["rating_lower"], theirs["rating_upper"]), strict=True))
    t_rating = dict(zip(ds.competitors, np.asarray(theirs["ratings"]), strict=True))
    same = ranking.leaderboard(frame, ci="sandwich", hessian_reg=1e-5)  # arena-rank's Hessian ridge
    exact = ranking.leaderboard(frame, ci="sandwich")  # the exact Σ r = 0 constraint
    for res, tol in ((same, 1e-6), (exact, 1e-3)):
        half = dict(zip(res.models, _half_width(res.ci_lower, res.ci_upper), strict=True))
        for m in MODELS:
            assert half[m] == pytest.approx(t_half[m], rel=tol)
            assert dict(zip(res.models, res.rating, strict=True))[m] == pytest.approx(t_rating[m], abs=1e-4)
    assert same.ci_method == exact.ci_method == "sandwich" and same.rounds is None


def test_contextual_sandwich_matches_arena_rank_without_a_penalty():
    pytest.importorskip("arena_rank")
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset

    frame = battles(beta=0.3, seed=1)
    z, _ = features.style_features(frame, ["len"], "float")
    pdf = frame.with_columns(pl.Series("z", z[:, 0])).to_pandas()
    ds = ContextualPairDataset.from_pandas(pdf, feature_cols=["z"], reweighted=False, normalize_features=False)
    model = ContextualBradleyTerry(n_competitors=len(ds.competitors), n_features=1, reg=0.0)
    theirs = model.compute_ratings_and_cis(ds, ci_method="sandwich")
    t_half = dict(zip(ds.competitors, _half_width(theirs["rating_lower"], theirs["rating_upper"]), strict=True))
    ours = ranking.leaderboard(frame, features=["len"], ci="sandwich", hessian_reg=1e-5)
    half = dict(zip(ours.models, _half_width(ours.ci_lower, ours.ci_upper), strict=True))
    for m in MODELS:
        assert half[m] == pytest.approx(t_half[m], rel=1e-5)
    assert ours.coef_ml[0] == pytest.approx(float(theirs["coeffs"][0]), abs=1e-5)


# ---------------------------------------------------------------------------------------- statsmodels HC0


def _hc0(frame: pl.DataFrame, anchor: str, z: np.ndarray | None = None):
    """Unpenalised logistic GLM on battle rows, anchor left out (natural-log units), HC0 robust covariance."""
    others = [m for m in MODELS if m != anchor]
    a, b = frame["model_a"].to_numpy(), frame["model_b"].to_numpy()
    x = np.column_stack([(a == m).astype(float) - (b == m).astype(float) for m in others])
    if z is not None:
        x = np.hstack([x, z])
    y = frame["winner"].replace_strict(ranking.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()
    fit = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-12, cov_type="HC0")
    return others, fit


@pytest.mark.parametrize("with_style", [False, True])
def test_sandwich_equals_statsmodels_hc0(with_style):
    frame = battles(beta=0.3, seed=2)
    z = features.style_features(frame, ["len"], "float")[0] if with_style else None
    others, fit = _hc0(frame, "r", z)
    res = ranking.leaderboard(frame, ci="sandwich", anchor="r", features=["len"] if with_style else ())
    rel = res.relative_to_anchor()  # intervals of the differences to the anchor: the GLM's parameters
    zq = 1.959963984540054
    for j, m in enumerate(others):
        row = rel.filter(pl.col("model") == m).row(0, named=True)
        scale = 400 / math.log(10)
        assert row["rating"] == pytest.approx(1000 + scale * fit.params[j], abs=1e-6)
        assert row["ci_upper"] - row["ci_lower"] == pytest.approx(2 * zq * scale * fit.bse[j], rel=1e-6)
    if with_style:
        assert res.coef_ml[0] == pytest.approx(fit.params[-1], abs=1e-8)
        assert res.coef_upper[0] - res.coef_lower[0] == pytest.approx(2 * zq * fit.bse[-1], rel=1e-6)


# ----------------------------------------------------------------------------------- bootstrap and frames


def test_bootstrap_intervals_are_percentiles_of_the_rounds_and_ranks_follow_the_rule():
    frame = battles(seed=3)
    res = ranking.leaderboard(frame, rounds=50, seed=4, anchor="r", level=0.9, point="bootstrap_mean")
    assert res.rounds is not None and res.rounds.shape == (50, 6) and res.ci_method == "bootstrap"
    elo = 400 * res.rounds + res.offset
    np.testing.assert_allclose(res.ci_lower, np.percentile(elo, 5, axis=0))
    np.testing.assert_allclose(res.ci_upper, np.percentile(elo, 95, axis=0))
    np.testing.assert_allclose(res.rating, elo.mean(axis=0))
    # the rounds are fits of the documented draws, one by one
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame).fit_frame())
    w = ranking.bootstrap_counts(data.n_battles, 50, 4, p=data.counts / data.counts.sum())
    np.testing.assert_allclose(res.rounds, bt_fits(data, w), atol=1e-9)
    board = res.to_frame()
    assert board.columns == ["model", "rating", "ci_lower", "ci_upper", "rank", "num_battles", "rating_ml"]
    assert board["rating"].is_sorted(descending=True)
    assert board["rank"].to_list() == ranking.result.rank_from_intervals(board["ci_lower"].to_numpy(),
                                                                  board["ci_upper"].to_numpy()).tolist()
    rel = res.relative_to_anchor()
    anchor_row = rel.filter(pl.col("model") == "r").row(0, named=True)
    assert anchor_row["ci_lower"] == anchor_row["ci_upper"] == pytest.approx(1000.0)
    assert res.coefficients().height == 0 and res.features == ()


def test_one_result_type_for_plain_and_contextual_fits():
    frame = battles(beta=0.3, seed=5)
    plain = ranking.leaderboard(frame, rounds=20)
    styled = ranking.leaderboard(frame, rounds=20, features=["len"], reg=0.5)
    assert type(plain) is type(styled) is ranking.Ranking
    coef = styled.coefficients()
    assert coef["feature"].to_list() == ["len"] and coef["ci_lower"][0] < coef["estimate"][0] < coef["ci_upper"][0]
    assert styled.convergence.round_iterations > 0 and plain.convergence.iterations > 0
    assert "1 style features" in styled.summary() and "20 bootstrap rounds" in plain.summary()


# ------------------------------------------------------------------------------------------------ coverage


def test_sandwich_and_bootstrap_intervals_cover_planted_ratings():
    """Without ties the planted strengths are the BT parameters (ties at a fixed rate would pull them together)."""
    truth = dict(zip(MODELS, 1000 + 400 * (STRENGTH - STRENGTH[2]), strict=True))
    replicates = [(battles(n=3000, seed=100 + k, tie_rate=0.0), truth, {}) for k in range(40)]
    rows = []
    for ci in ("sandwich", "bootstrap"):
        rows.append(ranking.ranking_coverage(
            replicates, lambda b, k, ci=ci: ranking.leaderboard(b, ci=ci, rounds=40, seed=k, anchor="r"), "r"))
    summary = ranking.coverage_summary(pl.concat(rows))
    assert summary.columns == ["method", "kind", "coverage", "intervals", "ci_lower", "ci_upper"]
    per = {(r["method"], r["kind"]): r for r in summary.iter_rows(named=True)}
    for method in ("sandwich", "bootstrap"):
        row = per[(method, "rating, anchored per round")]  # 95% intervals of the differences to the anchor
        assert row["intervals"] == 40 * 5 and 0.9 <= row["coverage"] <= 0.99


CHAIN = ("a", "b", "c", "d")
CHAIN_GAP = 0.12  # log10-odds between neighbours


def _chain(n_per_edge: int, seed: int) -> pl.DataFrame:
    """Battles only between neighbours of the chain a - b - c - d (a tree: the BT fit is saturated, each edge's
    fitted win probability is its observed share), no ties: a beats b with σ(ln10 · 0.12), and so on."""
    rng = np.random.default_rng(seed)
    p = 1 / (1 + 10 ** -CHAIN_GAP)
    rows = []
    for x, y in zip(CHAIN[:-1], CHAIN[1:], strict=True):
        wins = rng.random(n_per_edge) < p
        rows += [(x, y, "model_a" if w else "model_b") for w in wins]
    return pl.DataFrame(rows, schema=["model_a", "model_b", "winner"], orient="row")


def test_sandwich_coverage_known_answer_on_a_saturated_design():
    """On a tree of comparisons with binary outcomes the MLE fits every edge exactly (p̂ = the observed share), so
    Σ (y − p̂)² = n p̂ (1 − p̂) per edge: the sandwich H⁻¹GH⁻¹ equals the model-based H⁻¹, and the variance of
    r_j − r_a is the sum over the path of 1 / (ln10² n p̂ (1 − p̂)) (independent edges). The coverage rows are the
    intervals est ± 1.96 · 400 · that SD; over replicates they cover the planted differences about 95% of the
    time (binomial band)."""
    from scipy import stats

    n = 400
    truth = {m: 1000 + 400 * CHAIN_GAP * (CHAIN.index("a") - i) for i, m in enumerate(CHAIN)}
    frame = _chain(n, seed=0)
    fit = ranking.leaderboard(frame, ci="sandwich", anchor="a")
    share = [frame.filter((pl.col("model_a") == x) & (pl.col("model_b") == y))["winner"].eq("model_a").mean()
             for x, y in zip(CHAIN[:-1], CHAIN[1:], strict=True)]
    edge_var = np.array([1 / (math.log(10) ** 2 * n * p * (1 - p)) for p in share])
    rows = ranking.result_coverage(fit, truth, {}, "a").filter(pl.col("kind") == "rating, anchored per round")
    for r in rows.iter_rows(named=True):
        j = CHAIN.index(r["name"])
        sd = 400 * math.sqrt(edge_var[:j].sum())
        gap = 400 * sum(math.log10(p / (1 - p)) for p in share[:j])  # the MLE: each edge's observed log-odds
        assert r["estimate"] == pytest.approx(1000 - gap, abs=1e-6)
        assert r["ci_upper"] - r["estimate"] == pytest.approx(1.959963984540054 * sd, rel=1e-6)
        assert r["covered"] == (r["ci_lower"] <= r["truth"] <= r["ci_upper"])
    n_rep = 150
    reps = [(_chain(n, seed=10 + k), truth, {}) for k in range(n_rep)]
    cov = ranking.ranking_coverage(reps, lambda b, k: ranking.leaderboard(b, ci="sandwich", anchor="a"), "a")
    anchored = cov.filter(pl.col("kind") == "rating, anchored per round")
    k = int(anchored["covered"].sum())
    assert anchored.height == 3 * n_rep and stats.binom.cdf(k, anchored.height, 0.95) > 0.001
    assert stats.binom.sf(k - 1, anchored.height, 0.95) > 0.001  # nor too many

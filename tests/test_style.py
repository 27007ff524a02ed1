"""Contextual (style-controlled) Bradley–Terry: SA-32L, SA-32C, SA-F6L, SA-F6R, SA-E4.

Checked against an independent unpenalised fit (statsmodels GLM), the penalised gradient by finite
differences, the batched bootstrap against one exact fit per round, and planted coefficients.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy.optimize import check_grad

from analysis_lib import ranking
from analysis_lib.ranking import _contextual as cs
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import coverage
from analysis_lib.ranking import reference as solver
from analysis_lib.search_arena import bt, schema
from analysis_lib.search_arena.domains import DOMAIN_GROUPS

MODELS = ["gpt-4o-search", "sonar", "sonar-pro", "gemini-2.0-flash-grounding", "gpt-4o-mini-search", "sonar-pro-high"]
STRENGTH = np.array([0.0, 0.10, 0.05, -0.03, -0.10, 0.15])
BETA = {"response_length": 0.30, "citation_count": 0.20}


def synthetic_style_battles(n: int = 6000, seed: int = 0, tie_rate: float = 0.1) -> pl.DataFrame:
    """Battles with planted strengths and planted effects of z-scored normalised length / citation differences."""
    rng = np.random.default_rng(seed)
    m = len(MODELS)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    cols: dict[str, object] = {"model_a": [MODELS[i] for i in a], "model_b": [MODELS[i] for i in b]}
    eta = math.log(10.0) * (STRENGTH[a] - STRENGTH[b])
    feats = {
        "response_length": (rng.gamma(4.0, 60.0, n), rng.gamma(4.0, 60.0, n)),
        "citation_count": (rng.poisson(6.0, n) + rng.random(n), rng.poisson(6.0, n) + rng.random(n)),
    }
    for name, (xa, xb) in feats.items():
        d = (xa - xb) / (xa + xb + 1.0)
        eta = eta + BETA[name] * (d - d.mean()) / d.std()
        cols[f"{name}_a"], cols[f"{name}_b"] = xa, xb
    for g in DOMAIN_GROUPS:
        cols[f"cites_{g}_a"] = rng.integers(0, 2, n)
        cols[f"cites_{g}_b"] = rng.integers(0, 2, n)
    p = 1.0 / (1.0 + np.exp(-eta))
    winner = np.where(rng.random(n) < p, "model_a", "model_b").astype(object)
    winner[rng.random(n) < tie_rate] = "tie"
    cols["winner"] = winner
    cols["primary_intent"] = rng.choice(["Factual Lookup", "Analysis", "Other"], n)
    return pl.DataFrame(cols)


@pytest.fixture(scope="module")
def battles() -> pl.DataFrame:
    return synthetic_style_battles()


def _design(frame: pl.DataFrame, features, convention="float"):
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    a, b = np.array(frame["model_a"].to_list()), np.array(frame["model_b"].to_list())
    inc = np.column_stack([(a == m).astype(float) - (b == m).astype(float) for m in models])
    z, _ = ranking.style_features(frame, features, convention)
    y = frame["winner"].replace_strict(schema.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()
    return models, inc, z, y


def test_unpenalised_contextual_matches_statsmodels(battles):
    features = ["response_length", "citation_count"]
    fit = bt.style_control(battles, features, rounds=0, convention="float", reg=0.0)
    ratings, coefs = fit.to_frame(), fit.coefficients()
    models, inc, z, y = _design(battles, features)
    keep = [j for j, m in enumerate(models) if m != "gpt-4o-search"]
    x = np.hstack([inc[:, keep], z])
    res = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-12)
    np.testing.assert_allclose(coefs["estimate_ml"].to_numpy(), res.params[len(keep) :], atol=1e-7)
    ours = dict(ratings.select("model", "rating_ml").iter_rows())
    for j, beta in zip(keep, res.params[: len(keep)], strict=True):
        assert ours[models[j]] == pytest.approx(1000.0 + 400.0 * beta / math.log(10.0), abs=1e-5)


def test_penalised_gradient_and_optimum(battles):
    models, inc, z, y = _design(battles, bt.SOURCES)
    x = np.hstack([ranking.ALPHA * inc, z])
    w = np.random.default_rng(0).poisson(1.0, len(y)).astype(float)
    theta = np.random.default_rng(1).normal(scale=0.1, size=x.shape[1])
    f = lambda t: solver.logistic_loss_and_grad(t, x, y, w, 0.5)[0]  # noqa: E731
    g = lambda t: solver.logistic_loss_and_grad(t, x, y, w, 0.5)[1]  # noqa: E731
    assert check_grad(f, g, theta) / np.linalg.norm(g(theta)) < 1e-5
    sides = pairs.pair_indices(battles, models)
    fit, report = cs.newton(cs.ContextualDesign.build(sides, z, y, len(models)), w, 0.5)
    assert report.converged[0] and np.abs(g(fit)).max() < 1e-7
    ref = solver.fit_logistic_lbfgs(x, y, w[None, :], reg=0.5, gtol=1e-10, ftol=1e-15, max_iter=5000)[0]
    np.testing.assert_allclose(fit, ref, atol=1e-6)
    assert abs(fit[: len(models)].sum()) < 1e-9  # the penalty centres the ratings


def test_penalised_matches_authors_loss_scale(battles):
    """reg/2 ||theta||^2 over ratings and coefficients with a summed (not averaged) likelihood: check by hand."""
    models, inc, z, y = _design(battles, ["response_length"])
    x = np.hstack([ranking.ALPHA * inc, z])
    theta = np.linspace(-0.1, 0.1, x.shape[1])
    eta = x @ theta
    manual = (-np.sum(y * np.log(1 / (1 + np.exp(-eta))) + (1 - y) * np.log(1 / (1 + np.exp(eta))))
              + 0.25 * theta @ theta)
    assert solver.logistic_loss_and_grad(theta, x, y, np.ones(len(y)), 0.5)[0] == pytest.approx(manual, rel=1e-12)


@pytest.mark.parametrize("n", [6000, 300])
def test_batched_bootstrap_equals_one_exact_fit_per_round(n):
    frame = synthetic_style_battles(n=n, seed=2)
    fit = bt.style_control(frame, bt.SOURCES, rounds=12, seed=4, convention="paper")
    models, inc, z, y = _design(frame, bt.SOURCES, "paper")
    x = np.hstack([ranking.ALPHA * inc, z])
    w = ranking.bootstrap_counts(len(y), 12, 4)
    assert fit.rounds is not None
    for k in (0, 5, 11):  # the reference: scipy L-BFGS on the dense design, converged far below the default
        exact = solver.fit_logistic_lbfgs(x, y, w[k][None, :], reg=0.5, gtol=1e-9, ftol=0.0, max_iter=20_000)[0]
        np.testing.assert_allclose(fit.rounds[k], exact, atol=2e-6)
    assert np.abs(solver.logistic_loss_and_grad(fit.rounds[3], x, y, w[3], 0.5)[1]).max() < 1e-6


def test_bootstrap_determinism_per_seed(battles):
    f1, f2, f3 = (bt.style_control(battles, ["response_length"], rounds=10, seed=s) for s in (3, 3, 4))
    r1, c1, r2, c2, c3 = f1.to_frame(), f1.coefficients(), f2.to_frame(), f2.coefficients(), f3.coefficients()
    assert r1.equals(r2) and c1.equals(c2)
    assert c1["estimate"][0] != c3["estimate"][0]
    assert c1.columns == ["feature", "estimate", "ci_lower", "ci_upper", "estimate_ml"]


def test_planted_coefficients_recovered():
    frame = synthetic_style_battles(n=30000, seed=0, tie_rate=0.0)
    fit = bt.style_control(frame, ["response_length", "citation_count"], rounds=20, convention="float")
    ratings, coefs = fit.to_frame(), fit.coefficients()
    est = dict(coefs.select("feature", "estimate").iter_rows())
    lo = dict(coefs.select("feature", "ci_lower").iter_rows())
    hi = dict(coefs.select("feature", "ci_upper").iter_rows())
    for name, beta in BETA.items():
        assert est[name] == pytest.approx(beta, abs=0.04)
        assert lo[name] - 0.02 < beta < hi[name] + 0.02
    elo = dict(ratings.select("model", "rating_ml").iter_rows())
    for m, s in zip(MODELS, STRENGTH, strict=True):
        assert elo[m] == pytest.approx(1000 + 400 * s, abs=15.0)  # about 3 standard errors


def test_paper_convention_truncates_to_int32():
    frame = pl.DataFrame({"f_a": [2.9, 0.5, 10.0], "f_b": [1.2, 0.4, 3.7]})
    _, d_paper = ranking.style_features(frame, ["f"], "paper")
    _, d_float = ranking.style_features(frame, ["f"], "float")
    np.testing.assert_allclose(d_paper[:, 0], [(2 - 1) / 4, 0.0, (10 - 3) / 14])
    np.testing.assert_allclose(d_float[:, 0], [(2.9 - 1.2) / 5.1, 0.1 / 1.9, 6.3 / 14.7])
    z, _ = ranking.style_features(frame, ["f"], "float")
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0)


def test_constant_feature_reported_as_nan(battles):
    frame = battles.with_columns(pl.lit(0).alias("cites_retail_a"), pl.lit(0).alias("cites_retail_b"))
    coefs = bt.style_control(frame, bt.SOURCES, rounds=3).coefficients()
    row = coefs.filter(pl.col("feature") == "cites_retail").row(0, named=True)
    assert math.isnan(row["estimate"]) and math.isnan(row["estimate_ml"])
    assert coefs.filter(pl.col("feature") != "cites_retail")["estimate"].is_nan().sum() == 0


def test_convention_shift_and_subsets(battles):
    shift = bt.convention_shift(battles, ["response_length", "citation_count"])
    assert shift.columns == ["feature", "paper", "float", "shift"]
    np.testing.assert_allclose(shift["shift"].to_numpy(), (shift["float"] - shift["paper"]).to_numpy())
    sub = bt.style_by_subset(battles, ["response_length"], rounds=5)
    assert sorted(sub["subset"].to_list()) == ["Analysis", "Factual Lookup"]
    assert (sub["n"] > 0).all()


def test_anchor_each_round_and_interval_coverage(battles):
    fit = bt.style_control(battles, ["response_length"], rounds=10, seed=0)
    per_round = fit.relative_to_anchor().filter(pl.col("model") == "gpt-4o-search").row(0, named=True)
    assert per_round["ci_lower"] == pytest.approx(1000.0) and per_round["ci_upper"] == pytest.approx(1000.0)
    paper = fit.to_frame().filter(pl.col("model") == "gpt-4o-search").row(0, named=True)
    assert paper["ci_upper"] - paper["ci_lower"] > 1.0
    truth_r = {m: 1000 + 400 * (s - STRENGTH[0]) for m, s in zip(MODELS, STRENGTH, strict=True)}
    cov = ranking.result_coverage(fit, truth_r, {"response_length": BETA["response_length"]}, "gpt-4o-search")
    assert set(cov["kind"]) == set(coverage.KINDS)
    assert cov.filter(pl.col("kind") == "rating").height == len(MODELS) - 1
    assert cov.filter(pl.col("kind") == "rating, anchor-free (centred)").height == len(MODELS)
    assert cov.filter(pl.col("kind") == "coefficient")["name"].to_list() == ["response_length"]
    assert set(cov["method"]) == {"bootstrap"}


# ---- interval coverage with a known answer ------------------------------------------------------------------


def _logistic_replicate(n: int, seed: int, beta: float = 0.3, tie_scale: float = 0.3):
    """Battles from a contextual BT model with known ratings and beta; ties drawn so that E[half-win score] = p.

    The truth is planted on the z-scored feature of this very frame (what the fit estimates), so the only error
    is sampling error.
    """
    rng = np.random.default_rng(seed)
    models, strength = MODELS[:4], STRENGTH[:4]
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    frame = pl.DataFrame(
        {
            "model_a": [models[i] for i in a],
            "model_b": [models[i] for i in b],
            "response_length_a": rng.gamma(4.0, 60.0, n).round(),
            "response_length_b": rng.gamma(4.0, 60.0, n).round(),
        }
    )
    z, _ = ranking.style_features(frame, ["response_length"], "paper")
    p = 1.0 / (1.0 + np.exp(-(math.log(10.0) * (strength[a] - strength[b]) + beta * z[:, 0])))
    tie = tie_scale * 4.0 * p * (1.0 - p)
    u = rng.random(n)
    winner = np.where(u < tie, "tie", np.where(u < tie + p - tie / 2, "model_a", "model_b"))
    ratings = {m: 1000.0 + 400.0 * (s - strength[0]) for m, s in zip(models, strength, strict=True)}
    return frame.with_columns(pl.Series("winner", winner)), ratings, {"response_length": beta}


def _coverage(n_rep: int, ci: str) -> pl.DataFrame:
    def fit(battles: pl.DataFrame, k: int) -> ranking.Ranking:
        return bt.style_control(battles, ["response_length"], rounds=60, seed=k, ci=ci, exclude=[])

    return ranking.ranking_coverage((_logistic_replicate(1500, 500 + k) for k in range(n_rep)), fit, "gpt-4o-search")


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich"])
def test_interval_coverage_known_answer(ci):
    """95% intervals (bootstrap, and sandwich) on data from a known logistic model: coverage within a binomial
    band of 0.95."""
    from scipy import stats

    n_rep = 60
    cov = _coverage(n_rep, ci)
    summary = {r["kind"]: r for r in ranking.coverage_summary(cov).iter_rows(named=True)}
    coef = summary["coefficient"]
    assert coef["intervals"] == n_rep and set(cov["method"]) == {ci}
    # one coefficient per replicate: independent; P(k or fewer covered | p = 0.95) must not be tiny
    assert stats.binom.cdf(round(coef["coverage"] * n_rep), n_rep, 0.95) > 0.001, coef
    anchored = summary["rating, anchored per round"]
    assert anchored["intervals"] == 3 * n_rep
    assert stats.binom.cdf(round(anchored["coverage"] * 3 * n_rep), 3 * n_rep, 0.95) > 0.001, anchored
    # the paper's convention (one full-data anchor offset) leaves the anchor's uncertainty out: narrower
    assert summary["rating"]["coverage"] < anchored["coverage"]
    # estimates are unbiased up to noise: the mean error of beta is within 3 standard errors of 0
    err = cov.filter(pl.col("kind") == "coefficient").select(pl.col("estimate") - pl.col("truth"))[:, 0].to_numpy()
    assert abs(err.mean()) < 3 * err.std(ddof=1) / math.sqrt(n_rep)


def test_coverage_summary_hand_made():
    cov = pl.DataFrame(
        {
            "kind": ["coefficient"] * 4 + ["rating"] * 2,
            "covered": [True, True, False, True, False, False],
        }
    )
    out = ranking.coverage_summary(cov)
    assert out["kind"].to_list() == ["coefficient", "rating"]
    assert out["coverage"].to_list() == [0.75, 0.0]
    assert out["intervals"].to_list() == [4, 2]
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(3, 4, method="wilson")
    assert out["ci_lower"][0] == pytest.approx(lo) and out["ci_upper"][0] == pytest.approx(hi)
    # the coverage rule itself: closed intervals
    assert coverage.coverage_row(0, "bootstrap", "k", "x", 1.0, 1.0, 1.0, 2.0)["covered"]
    assert not coverage.coverage_row(0, "bootstrap", "k", "x", 2.5, 1.0, 1.0, 2.0)["covered"]


# ---- SA-E4: ratings before and after control on the same battles ---------------------------------------------


def _style_confounded(n: int = 6000, seed: int = 0) -> pl.DataFrame:
    """Equal true ratings; the models differ only in verbosity, and length wins votes: plain BT spreads them."""
    rng = np.random.default_rng(seed)
    m = len(MODELS)
    verbosity = np.linspace(100.0, 400.0, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    frame = pl.DataFrame(
        {
            "model_a": [MODELS[i] for i in a],
            "model_b": [MODELS[i] for i in b],
            "response_length_a": rng.gamma(8.0, verbosity[a] / 8.0),
            "response_length_b": rng.gamma(8.0, verbosity[b] / 8.0),
        }
    )
    z, _ = ranking.style_features(frame, ["response_length"], "float")
    p = 1.0 / (1.0 + np.exp(-0.5 * z[:, 0]))
    return frame.with_columns(pl.Series("winner", np.where(rng.random(n) < p, "model_a", "model_b")))


def test_rating_spread():
    x = np.array([1000.0, 1050.0, 980.0, 1010.0])
    assert bt.rating_spread(x) == pytest.approx(np.std(x, ddof=1))
    assert bt.rating_spread(x + 123.0) == pytest.approx(bt.rating_spread(x))  # anchor-free
    np.testing.assert_allclose(bt.rating_spread(np.vstack([x, 2 * x])), [np.std(x, ddof=1), 2 * np.std(x, ddof=1)])


def test_control_effect_same_battles_and_convergence():
    frame = _style_confounded()
    eff = bt.control_effect(frame, ["response_length"], rounds=30, seed=1, convention="float")
    assert eff.n_battles == bt.prepare_battles(frame).frame.height
    # "before" is the unpenalised BT of the same frame (the authors' compute_bt), as the plain leaderboard
    plain = bt.leaderboard(frame, rounds=0).to_frame()
    assert dict(eff.ratings.select("model", "before").iter_rows()) == pytest.approx(
        dict(plain.select("model", "rating_ml").iter_rows()))
    assert eff.sd_before == pytest.approx(bt.rating_spread(eff.ratings["before"].to_numpy()))
    assert eff.sd_before > 20 and eff.sd_after < 10  # truth: all ratings equal
    assert eff.converge and eff.converge_significant and eff.change_ci[0] <= eff.change <= eff.change_ci[1]
    # without features and under the same penalty nothing changes
    none = bt.control_effect(frame, (), rounds=5, before_reg=bt.REG)
    assert none.change == pytest.approx(0.0, abs=1e-9) and not none.converge


# ---- battle filters and subset fits -------------------------------------------------------------------------


def test_attribution_battles():
    frame = pl.DataFrame(
        {
            "model_a": ["sonar"] * 4,
            "model_b": ["gpt-4o-search"] * 4,
            "winner": ["model_a", "tie", "model_b", "model_a"],
            "citation_count_a": [2.0, 3.0, 1.0, 0.0],
            "citation_count_b": [1.0, 1.0, 0.5, 2.0],
        }
    )
    assert bt.attribution_battles(frame) is None  # no attribution columns
    nulls = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias(f"{c}_{s}")
                               for c in schema.ATTRIBUTION_COUNTS for s in "ab")
    assert bt.attribution_battles(nulls) is None
    labelled = frame.with_columns(
        pl.Series(f"{c}_{s}", [1.0, 1.0, 1.0, 1.0] if c != "support_count" or s != "b" else [1.0, 1.0, None, 1.0])
        for c in schema.ATTRIBUTION_COUNTS for s in "ab"
    )
    out = bt.attribution_battles(labelled)
    # row 1 is a tie, row 2 lacks a count, row 3: side A does not cite
    assert out is not None and out.height == 1 and out["winner"].to_list() == ["model_a"]


def test_style_by_subset_passes_options_and_survives_missing_anchor(battles):
    no_anchor = battles.filter(
        (pl.col("primary_intent") != "Analysis")
        | ((pl.col("model_a") != "gpt-4o-search") & (pl.col("model_b") != "gpt-4o-search"))
    )
    sub = bt.style_by_subset(no_anchor, ["response_length"], rounds=0, reg=0.0, convention="float")
    analysis = no_anchor.filter(pl.col("primary_intent") == "Analysis")
    ref = bt.style_control(analysis, ["response_length"], rounds=0, reg=0.0, convention="float",
                           anchor=None).coefficients()
    got = sub.filter(pl.col("subset") == "Analysis")["estimate_ml"][0]
    assert got == pytest.approx(ref["estimate_ml"][0], abs=1e-9)
    penalised = bt.style_control(analysis, ["response_length"], rounds=0, convention="float",
                                 anchor=None).coefficients()
    assert got != pytest.approx(penalised["estimate_ml"][0], abs=1e-9)  # reg reached the fit
    dropped = bt.style_by_subset(battles, ["response_length"], rounds=0, exclude=["gpt-4o-search", "sonar"])
    n_ref = bt.prepare_battles(battles.filter(pl.col("primary_intent") == "Analysis"),
                               exclude=["gpt-4o-search", "sonar"]).frame.height
    assert dropped.filter(pl.col("subset") == "Analysis")["n"][0] == n_ref

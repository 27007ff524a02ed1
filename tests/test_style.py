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

from analysis_lib import bt
from analysis_lib.domains import DOMAIN_GROUPS

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
    z, _ = bt.style_features(frame, features, convention)
    y = frame["winner"].replace_strict(bt.OUTCOME_OF_WINNER, return_dtype=pl.Float64).to_numpy()
    return models, inc, z, y


def test_unpenalised_contextual_matches_statsmodels(battles):
    features = ["response_length", "citation_count"]
    ratings, coefs = bt.style_control(battles, features, n_bootstrap=0, convention="float", reg=0.0)
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
    x = np.hstack([bt.ALPHA * inc, z])
    w = np.random.default_rng(0).poisson(1.0, len(y)).astype(float)
    theta = np.random.default_rng(1).normal(scale=0.1, size=x.shape[1])
    f = lambda t: bt.logistic_loss_and_grad(t, x, y, w, 0.5)[0]  # noqa: E731
    g = lambda t: bt.logistic_loss_and_grad(t, x, y, w, 0.5)[1]  # noqa: E731
    assert check_grad(f, g, theta) / np.linalg.norm(g(theta)) < 1e-5
    fit = bt.fit_logistic_batch(x, y, w[None, :], reg=0.5)[0]
    assert np.abs(g(fit)).max() < 1e-7
    ref = bt.fit_logistic_lbfgs(x, y, w[None, :], reg=0.5, gtol=1e-10, ftol=1e-15, max_iter=5000)[0]
    np.testing.assert_allclose(fit, ref, atol=1e-6)
    assert abs(fit[: len(models)].sum()) < 1e-9  # the penalty centres the ratings


def test_penalised_matches_authors_loss_scale(battles):
    """reg/2 ||theta||^2 over ratings and coefficients with a summed (not averaged) likelihood: check by hand."""
    models, inc, z, y = _design(battles, ["response_length"])
    x = np.hstack([bt.ALPHA * inc, z])
    theta = np.linspace(-0.1, 0.1, x.shape[1])
    eta = x @ theta
    manual = -np.sum(y * np.log(1 / (1 + np.exp(-eta))) + (1 - y) * np.log(1 / (1 + np.exp(eta)))) + 0.25 * theta @ theta
    assert bt.logistic_loss_and_grad(theta, x, y, np.ones(len(y)), 0.5)[0] == pytest.approx(manual, rel=1e-12)


@pytest.mark.parametrize("n", [6000, 300])
def test_batched_bootstrap_equals_one_exact_fit_per_round(n):
    frame = synthetic_style_battles(n=n, seed=2)
    fit = bt.fit_style(frame, bt.SOURCES, n_bootstrap=12, seed=4, convention="paper")
    models, inc, z, y = _design(frame, bt.SOURCES, "paper")
    x = np.hstack([bt.ALPHA * inc, z])
    w = bt.bootstrap_counts(len(y), 12, 4)
    for k in (0, 5, 11):
        exact = bt.fit_logistic_batch(x, y, w[k][None, :], reg=0.5, tol=1e-12)[0]
        np.testing.assert_allclose(fit.rounds[k], exact, atol=1e-8)
    assert np.abs(bt.logistic_loss_and_grad(fit.rounds[3], x, y, w[3], 0.5)[1]).max() < 1e-6


def test_bootstrap_determinism_per_seed(battles):
    r1, c1 = bt.style_control(battles, ["response_length"], n_bootstrap=10, seed=3)
    r2, c2 = bt.style_control(battles, ["response_length"], n_bootstrap=10, seed=3)
    _, c3 = bt.style_control(battles, ["response_length"], n_bootstrap=10, seed=4)
    assert r1.equals(r2) and c1.equals(c2)
    assert c1["estimate"][0] != c3["estimate"][0]
    assert c1.columns == ["feature", "estimate", "ci_lower", "ci_upper", "estimate_ml"]


def test_planted_coefficients_recovered():
    frame = synthetic_style_battles(n=30000, seed=0, tie_rate=0.0)
    ratings, coefs = bt.style_control(frame, ["response_length", "citation_count"], n_bootstrap=20, convention="float")
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
    _, d_paper = bt.style_features(frame, ["f"], "paper")
    _, d_float = bt.style_features(frame, ["f"], "float")
    np.testing.assert_allclose(d_paper[:, 0], [(2 - 1) / 4, 0.0, (10 - 3) / 14])
    np.testing.assert_allclose(d_float[:, 0], [(2.9 - 1.2) / 5.1, 0.1 / 1.9, 6.3 / 14.7])
    z, _ = bt.style_features(frame, ["f"], "float")
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0)


def test_constant_feature_reported_as_nan(battles):
    frame = battles.with_columns(pl.lit(0).alias("cites_retail_a"), pl.lit(0).alias("cites_retail_b"))
    _, coefs = bt.style_control(frame, bt.SOURCES, n_bootstrap=3)
    row = coefs.filter(pl.col("feature") == "cites_retail").row(0, named=True)
    assert math.isnan(row["estimate"]) and math.isnan(row["estimate_ml"])
    assert coefs.filter(pl.col("feature") != "cites_retail")["estimate"].is_nan().sum() == 0


def test_convention_shift_and_subsets(battles):
    shift = bt.convention_shift(battles, ["response_length", "citation_count"])
    assert shift.columns == ["feature", "paper", "float", "shift"]
    np.testing.assert_allclose(shift["shift"].to_numpy(), (shift["float"] - shift["paper"]).to_numpy())
    sub = bt.style_by_subset(battles, ["response_length"], n_bootstrap=5)
    assert sorted(sub["subset"].to_list()) == ["Analysis", "Factual Lookup"]
    assert (sub["n"] > 0).all()


def test_anchor_each_round_and_interval_coverage(battles):
    fit = bt.fit_style(battles, ["response_length"], n_bootstrap=10, seed=0)
    per_round = fit.ratings(anchor_each_round=True).filter(pl.col("model") == "gpt-4o-search").row(0, named=True)
    assert per_round["ci_lower"] == pytest.approx(1000.0) and per_round["ci_upper"] == pytest.approx(1000.0)
    paper = fit.ratings().filter(pl.col("model") == "gpt-4o-search").row(0, named=True)
    assert paper["ci_upper"] - paper["ci_lower"] > 1.0
    truth_r = {m: 1000 + 400 * (s - STRENGTH[0]) for m, s in zip(MODELS, STRENGTH, strict=True)}
    cov = bt.interval_coverage([(battles, truth_r, {"response_length": BETA["response_length"]})], ["response_length", "citation_count"], n_bootstrap=10)
    assert set(cov["kind"]) == {"rating", "rating, anchored per round", "coefficient"}
    assert cov.filter(pl.col("kind") == "rating").height == len(MODELS) - 1
    assert cov.filter(pl.col("kind") == "coefficient")["name"].to_list() == ["response_length"]

"""SA-A2C, citation style and preferences: the contextual-BT style coefficient and the model × style ratings
against statsmodels' logistic regression with HC0 (sandwich) covariance on the same design, the exclusions, and
the rows recorded when the release cannot identify the coefficient."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy import stats

from analysis_lib.search_arena import citation_style as cs
from analysis_lib.search_arena.models import ANCHOR

MODELS = [ANCHOR, "sonar", "sonar-pro", "gemini-2.0-flash-grounding"]
STRENGTH = {ANCHOR: 0.0, "sonar": 0.4, "sonar-pro": 0.2, "gemini-2.0-flash-grounding": -0.3}


def simulated_battles(n: int, beta: float, seed: int, mixed: bool = True) -> pl.DataFrame:
    """Decisive battles (no ties) between four models, each side's style at random, logit = strength gap +
    beta * (s_a - s_b): a tidy-frame slice with the columns citation_style reads."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    s_a = rng.integers(0, 2, n)
    s_b = rng.integers(0, 2, n) if mixed else s_a
    gap = np.array([STRENGTH[MODELS[i]] - STRENGTH[MODELS[j]] for i, j in zip(a, b, strict=True)])
    y = rng.random(n) < 1 / (1 + np.exp(-(gap + beta * (s_a - s_b))))
    style = np.array(["original", "standardized"])
    return pl.DataFrame({
        "model_a": [MODELS[i] for i in a], "model_b": [MODELS[j] for j in b],
        "winner": np.where(y, "model_a", "model_b"),
        "citation_format_a": style[s_a], "citation_format_b": style[s_b],
    })


def design(frame: pl.DataFrame, names: list[str], a: str, b: str) -> np.ndarray:
    """±1 indicator columns of the competitors (the first name dropped as the reference)."""
    x = np.zeros((frame.height, len(names)))
    index = {n: k for k, n in enumerate(names)}
    for row, (u, v) in enumerate(zip(frame[a], frame[b], strict=True)):
        x[row, index[u]] += 1
        x[row, index[v]] -= 1
    return x[:, 1:]


def test_style_coefficient_matches_statsmodels_hc0_logit():
    frame, left_out = cs.style_battles(simulated_battles(4000, beta=0.3, seed=1))
    assert left_out == dict.fromkeys(left_out, 0)
    ours = cs.style_coefficient(frame)
    s_a, s_b = frame["standardized_a"].to_numpy(), frame["standardized_b"].to_numpy()
    d = (s_a - s_b) / (s_a + s_b + 1.0)
    z = (d - d.mean()) / d.std()
    x = np.column_stack([design(frame, MODELS, "model_a", "model_b"), z])
    y = (frame["winner"] == "model_a").to_numpy().astype(float)
    ref = sm.Logit(y, x).fit(disp=0, cov_type="HC0")
    assert ours.beta == pytest.approx(ref.params[-1], rel=1e-6)
    assert ours.se == pytest.approx(ref.bse[-1], rel=1e-5)
    assert ours.p_value == pytest.approx(ref.pvalues[-1], rel=1e-4)
    assert ours.n_mixed == int((frame["style_a"] != frame["style_b"]).sum()) and ours.beta > 0


def test_style_ratings_match_statsmodels_contrasts_and_wald_test():
    frame, _ = cs.style_battles(simulated_battles(6000, beta=0.0, seed=2))
    ours = cs.style_ratings(frame)
    split = cs.split_by_style(frame)
    names = sorted(set(split["model_a"]) | set(split["model_b"]))
    x = design(split, names, "model_a", "model_b")
    y = (split["winner"] == "model_a").to_numpy().astype(float)
    ref = sm.Logit(y, x).fit(disp=0, cov_type="HC0")
    coef = np.concatenate([[0.0], ref.params])  # the reference competitor at 0
    cov = np.zeros((len(names), len(names)))
    cov[1:, 1:] = ref.cov_params()
    elo = 400 / math.log(10)
    contrasts = []
    for model in ours.table["model"]:
        i, j = names.index(f"{model} (standardized)"), names.index(f"{model} (original)")
        row = ours.table.filter(pl.col("model") == model).row(0, named=True)
        assert row["difference"] == pytest.approx(elo * (coef[i] - coef[j]), abs=1e-6)
        c = np.zeros(len(names))
        c[i], c[j] = 1.0, -1.0
        half = stats.norm.ppf(0.975) * elo * math.sqrt(c @ cov @ c)
        assert row["ci_upper"] - row["difference"] == pytest.approx(half, rel=1e-5)
        contrasts.append(c[1:])
    wald = ref.wald_test(np.array(contrasts), scalar=True)
    assert ours.wald == pytest.approx(float(wald.statistic), rel=1e-5)
    assert ours.p_value == pytest.approx(float(wald.pvalue), rel=1e-4)
    assert ours.df == len(MODELS)
    tau = stats.kendalltau(ours.table["standardized"], ours.table["original"]).statistic
    assert ours.kendall_tau == pytest.approx(tau)


def test_same_style_on_both_sides_leaves_the_coefficient_unidentified():
    frame, _ = cs.style_battles(simulated_battles(800, beta=0.0, seed=3, mixed=False))
    coefficient = cs.style_coefficient(frame)
    assert math.isnan(coefficient.beta) and coefficient.n_mixed == 0
    assert "share one citation style" in coefficient.reason
    ratings = cs.style_ratings(frame)
    assert ratings.df > 0 and not math.isnan(ratings.p_value)  # the split ratings still compare styles


def test_style_battles_counts_every_battle_left_out():
    frame = simulated_battles(10, beta=0.0, seed=4).with_columns(
        pl.Series("winner", [None, *["model_a"] * 9]),
        pl.Series("citation_format_b", ["original", None, *["original"] * 8]),
        pl.Series("model_b", [MODELS[1], MODELS[1], "gemini-2.5-pro", "sonar", *[MODELS[1]] * 6]),
        pl.Series("model_a", [MODELS[0], MODELS[0], MODELS[0], "sonar", *[MODELS[0]] * 6]),
    )
    kept, left_out = cs.style_battles(frame)
    assert left_out == {"no vote": 1, "citation style unknown on a side": 1,
                        "non-search model (left out of every leaderboard)": 1, "self-battle": 1}
    assert kept.height == 6 and set(kept["standardized_a"].to_list()) <= {0, 1}

"""The paper-agnostic ranking package: pair data, the reference solvers, Bradley–Terry, contextual BT.

Known answers come from scikit-learn (penalised logistic regression), closed forms (two competitors) and
exact refits; nothing here uses the Search Arena layer (:mod:`analysis_lib.search_arena.bt`).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from sklearn.linear_model import LogisticRegression

from analysis_lib import ranking
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import reference as solver


def _logistic_data(n: int = 600, p: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p))
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ np.linspace(-1, 1, p)))).astype(float)
    w = rng.integers(1, 4, n).astype(float)
    return x, y, w


def _sklearn(x: np.ndarray, y: np.ndarray, w: np.ndarray, reg: float) -> np.ndarray:
    """sklearn minimises ½‖θ‖² + C Σ w·loss; ours Σ w·loss + reg/2 ‖θ‖², so C = 1/reg. Fractional y (ties) become
    a y = 1 and a y = 0 row with weights w·y and w·(1 − y)."""
    xx = np.vstack([x, x])
    yy = np.concatenate([np.ones(len(y)), np.zeros(len(y))])
    ww = np.concatenate([w * y, w * (1 - y)])
    keep = ww > 0
    model = LogisticRegression(C=1 / reg, fit_intercept=False, tol=1e-12, max_iter=10_000)
    model.fit(xx[keep], yy[keep], sample_weight=ww[keep])
    return model.coef_[0]


# ------------------------------------------------------------------------------------------------ solver


@pytest.mark.parametrize("reg", [0.5, 5.0])
def test_lbfgs_reference_matches_sklearn_penalised_logistic_regression(reg):
    x, y, w = _logistic_data()
    ours = solver.fit_logistic_lbfgs(x, y, w, reg=reg, gtol=1e-10, ftol=0.0, max_iter=10_000)[0]
    assert ours == pytest.approx(_sklearn(x, y, w, reg), abs=1e-6)
    _, grad = solver.logistic_loss_and_grad(ours, x, y, w, reg=reg)
    assert np.max(np.abs(grad)) < 1e-5  # summed loss over ~1,200 weighted rows


def test_bootstrap_counts():
    counts = ranking.bootstrap_counts(50, 4, seed=0)
    assert counts.shape == (4, 50) and (counts.sum(axis=1) == 50).all()
    assert (ranking.bootstrap_counts(50, 4, seed=0) == counts).all()
    p = np.array([0.2, 0.8])
    assert (ranking.bootstrap_counts(10, 3, seed=1, p=p).sum(axis=1) == 10).all()


# -------------------------------------------------------------------------------------------------- pairs


def _battles(rows: list[tuple[str, str, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["model_a", "model_b", "winner"], orient="row")


def test_pair_data_counts_unique_matchups():
    frame = _battles([("x", "y", "model_a"), ("x", "y", "model_a"), ("y", "x", "tie"), ("x", "z", "tie (bothbad)")])
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame).fit_frame())
    assert data.models == ("x", "y", "z") == pairs.competitors(frame)
    rows = {(int(a), int(b), float(o)): int(c) for (a, b), o, c in zip(data.pairs, data.outcomes, data.counts)}
    assert rows == {(0, 1, 1.0): 2, (1, 0, 0.5): 1, (0, 2, 0.5): 1}
    assert data.n_battles == 4 and data.battles_per_model().tolist() == [4.0, 3.0, 1.0]
    assert ranking.Battles.from_frame(frame).fit_frame()["y"].to_list() == [1.0, 1.0, 0.5, 0.5]


def test_pair_indices_and_unknown_names():
    frame = _battles([("b", "a", "model_a"), ("c", "b", "model_b")])
    assert pairs.pair_indices(frame, ["a", "b", "c"]).tolist() == [[1, 0], [2, 1]]
    with pytest.raises(ValueError, match=r"\['c'\]"):
        pairs.pair_indices(frame, ["a", "b"])


# ------------------------------------------------------------------------------------------ Bradley-Terry


def test_two_competitors_closed_form():
    """x beats y w times and loses l times: r_x − r_y = log10(w / l); with y as anchor x = 1000 + 400 log10(w/l)."""
    w, losses = 30, 10
    frame = _battles([("x", "y", "model_a")] * w + [("x", "y", "model_b")] * losses)
    board = ranking.leaderboard(frame, anchor="y", ci="none").to_frame()
    got = dict(zip(board["model"], board["rating_ml"], strict=True))
    assert got["y"] == pytest.approx(1000.0, abs=1e-9)
    assert got["x"] == pytest.approx(1000.0 + 400.0 * math.log10(w / losses), abs=1e-7)
    assert board["ci_lower"].is_nan().all() and board["rating"].to_list() == board["rating_ml"].to_list()
    result = ranking.leaderboard(frame, rounds=5, seed=1)
    assert result.rating_ml.mean() == pytest.approx(1000.0) and result.rounds is not None
    assert result.rounds.shape == (5, 2)
    assert result.rounds.sum(axis=1) == pytest.approx(np.zeros(5), abs=1e-12)  # every round centred
    with pytest.raises(ValueError, match="anchor 'q' has no battles"):
        ranking.leaderboard(frame, anchor="q", ci="none")


# --------------------------------------------------------------------------------------------- contextual


def test_contextual_fit_matches_sklearn_on_its_design():
    rng = np.random.default_rng(8)
    n, names = 1500, ["p", "q", "r", "s"]
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    la, lb = rng.integers(1, 500, n), rng.integers(1, 500, n)
    d = (la - lb) / (la + lb + 1)
    logit = 0.3 * (a - b) + 0.8 * (d - d.mean()) / d.std()
    u = rng.random(n)
    p = 1 / (1 + np.exp(-logit))
    winner = np.where(u < 0.1, "tie", np.where(u < 0.1 + 0.9 * p, "model_a", "model_b"))
    frame = pl.DataFrame({"model_a": [names[i] for i in a], "model_b": [names[i] for i in b], "winner": winner,
                          "len_a": la, "len_b": lb})
    fit = ranking.leaderboard(frame, features=["len"], reg=0.5, convention="paper", ci="none")
    z, _ = ranking.style_features(frame, ["len"], "paper")
    x = np.hstack([pairs.ALPHA * pairs.incidence(pairs.pair_indices(frame, fit.models), 4), z])
    ref = _sklearn(x, ranking.Battles.from_frame(frame).fit_frame()["y"].to_numpy(), np.ones(n), reg=0.5)
    assert fit.theta == pytest.approx(ref, abs=1e-6)
    coef = fit.coefficients().row(0, named=True)
    assert coef["feature"] == "len" and coef["estimate"] == pytest.approx(ref[-1], abs=1e-6)

"""The book's Search Arena numbers do not move with the new solvers: SA-D5 (plain BT leaderboard) and the style
control fits, on the default simulated release, against a frozen copy of the dense Newton solver the book used
before (``tests/reference_bt.py``, with the same multinomial draws), within 0.01 Elo; and the Search Arena layer
(:mod:`analysis_lib.search_arena.bt`) gives exactly the numbers of the generic leaderboard
(:func:`analysis_lib.ranking.leaderboard`) called with the paper's filter, anchor, penalty and convention."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from reference_bt import frozen_newton

from analysis_lib import ranking
from analysis_lib.search_arena import bt, loader
from analysis_lib.search_arena.models import ANCHOR

ELO_TOL = 0.01


@pytest.fixture(scope="module")
def voted() -> pl.DataFrame:
    return bt.prepare_battles(loader.load_battles("sample")).frame


def _board(models, elo_ml, rounds, counts) -> dict[str, tuple[float, ...]]:
    mean, lo, hi = rounds.mean(0), np.percentile(rounds, 2.5, 0), np.percentile(rounds, 97.5, 0)
    return {m: (mean[i], lo[i], hi[i], elo_ml[i], counts[i]) for i, m in enumerate(models)}


def test_sa_d5_leaderboard_is_unchanged(voted):
    pd_ = ranking.PairData.from_frame(voted)
    x, m = pd_.design(), len(pd_.models)
    r = frozen_newton(x, pd_.outcomes, pd_.counts[None, :], 0.0, m)[0]
    offset = 1000 - 400 * r[pd_.models.index(ANCHOR)]
    w = np.random.default_rng(0).multinomial(pd_.n_battles, pd_.counts / pd_.counts.sum(), size=100).astype(float)
    rounds = frozen_newton(x, pd_.outcomes, w, 0.0, m)
    before = _board(pd_.models, 400 * r + offset, 400 * (rounds - rounds.mean(1, keepdims=True)) + offset,
                    pd_.battles_per_model())
    for board in (bt.leaderboard(voted, n_bootstrap=100, seed=0).to_frame(),
                  ranking.leaderboard(voted, anchor=ANCHOR, rounds=100, seed=0).to_frame()):
        assert board.height == len(before)
        for row in board.iter_rows(named=True):
            old = before[row["model"]]
            assert np.abs(np.array([row["rating"], row["ci_lower"], row["ci_upper"], row["rating_ml"]])
                          - np.array(old[:4])).max() < ELO_TOL
            assert row["num_battles"] == old[4]


def test_style_control_is_unchanged(voted):
    subset = bt.decided(bt.both_cite(voted))
    models = ranking.competitors(subset)
    pr = ranking.pair_indices(subset, models)
    z, _ = ranking.style_features(subset, bt.ALL_CONTROLS, "paper")
    x = np.hstack([ranking.ALPHA * ranking.incidence(pr, len(models)), z])
    y = ranking.clean_battles(subset).frame["y"].to_numpy()
    n = len(y)
    theta = frozen_newton(x, y, np.ones((1, n)), bt.REG, len(models))[0]
    w = np.random.default_rng(0).multinomial(n, np.full(n, 1.0 / n), size=60).astype(float)
    rounds = frozen_newton(x, y, w, bt.REG, len(models))
    fit = bt.style_control(subset, bt.ALL_CONTROLS, n_bootstrap=60, seed=0)
    ratings, coefs = fit.to_frame(), fit.coefficients()
    k = len(models)
    np.testing.assert_allclose(coefs["estimate_ml"].to_numpy(), theta[k:], atol=1e-7)
    np.testing.assert_allclose(coefs["estimate"].to_numpy(), rounds[:, k:].mean(0), atol=1e-7)
    np.testing.assert_allclose(coefs["ci_lower"].to_numpy(), np.percentile(rounds[:, k:], 2.5, 0), atol=1e-7)
    offset = 1000 - 400 * theta[models.index(ANCHOR)]
    got = dict(ratings.select("model", "rating").iter_rows())
    want = (400 * rounds[:, :k] + offset).mean(0)
    assert max(abs(got[mm] - want[i]) for i, mm in enumerate(models)) < ELO_TOL
    generic = ranking.leaderboard(subset, features=bt.ALL_CONTROLS, reg=bt.REG, convention="paper", rounds=60,
                                  anchor=ANCHOR)
    np.testing.assert_allclose(generic.coef_estimate, rounds[:, k:].mean(0), atol=1e-7)
    assert np.abs(generic.rating - want).max() < ELO_TOL


def test_the_search_arena_layer_is_the_generic_leaderboard_with_the_papers_settings():
    """Same numbers, bit for bit: bt.leaderboard / bt.style_control = ranking.leaderboard on the battles kept by
    the paper's filter (voted, the non-search model and self-battles out) with its anchor, penalty, convention."""
    raw = loader.load_battles("sample:3000", seed=4)
    kept = raw.filter(pl.col("winner").is_not_null() & (pl.col("model_a") != pl.col("model_b"))
                      & ~pl.col("model_a").is_in(["gemini-2.5-pro"]) & ~pl.col("model_b").is_in(["gemini-2.5-pro"]))
    pairs_sa = bt.leaderboard(raw, n_bootstrap=30, seed=3)
    pairs_gen = ranking.leaderboard(kept, anchor=ANCHOR, rounds=30, seed=3)
    assert pairs_sa.to_frame().equals(pairs_gen.to_frame())
    style_sa = bt.style_control(raw, bt.SOURCES, n_bootstrap=20, seed=5)
    style_gen = ranking.leaderboard(kept, anchor=ANCHOR, rounds=20, seed=5, features=bt.SOURCES, reg=0.5,
                                    convention="paper")
    assert style_sa.to_frame().equals(style_gen.to_frame())
    assert style_sa.coefficients().equals(style_gen.coefficients())
    sandwich_sa = bt.style_control(raw, bt.LENGTH, ci="sandwich")
    sandwich_gen = ranking.leaderboard(kept, anchor=ANCHOR, ci="sandwich", features=bt.LENGTH, reg=0.5,
                                       convention="paper")
    assert sandwich_sa.ci_method == "sandwich" and sandwich_sa.to_frame().equals(sandwich_gen.to_frame())

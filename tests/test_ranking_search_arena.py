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
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.search_arena import bt, loader, screening
from analysis_lib.search_arena.models import ANCHOR

ELO_TOL = 0.01


@pytest.fixture(scope="module")
def voted() -> pl.DataFrame:
    return bt.prepare_battles(loader.load_battles("sample")).frame


def _board(models, elo_ml, rounds, counts) -> dict[str, tuple[float, ...]]:
    mean, lo, hi = rounds.mean(0), np.percentile(rounds, 2.5, 0), np.percentile(rounds, 97.5, 0)
    return {m: (mean[i], lo[i], hi[i], elo_ml[i], counts[i]) for i, m in enumerate(models)}


def test_sa_d5_leaderboard_is_unchanged(voted):
    pd_ = pairs.PairData.from_frame(ranking.Battles.from_frame(voted).fit_frame())
    x, m = pd_.design(), len(pd_.models)
    r = frozen_newton(x, pd_.outcomes, pd_.counts[None, :], 0.0, m)[0]
    offset = 1000 - 400 * r[pd_.models.index(ANCHOR)]
    w = np.random.default_rng(0).multinomial(pd_.n_battles, pd_.counts / pd_.counts.sum(), size=100).astype(float)
    rounds = frozen_newton(x, pd_.outcomes, w, 0.0, m)
    before = _board(pd_.models, 400 * r + offset, 400 * (rounds - rounds.mean(1, keepdims=True)) + offset,
                    pd_.battles_per_model())
    for board in (bt.leaderboard(voted, rounds=100, seed=0).to_frame(),
                  ranking.leaderboard(voted, anchor=ANCHOR, rounds=100, seed=0, point="bootstrap_mean").to_frame()):
        assert board.height == len(before)
        for row in board.iter_rows(named=True):
            old = before[row["model"]]
            assert np.abs(np.array([row["rating"], row["ci_lower"], row["ci_upper"], row["rating_ml"]])
                          - np.array(old[:4])).max() < ELO_TOL
            assert row["num_battles"] == old[4]


def test_style_control_is_unchanged(voted):
    subset = screening.decided(screening.both_cite(voted))
    models = pairs.competitors(subset)
    pr = pairs.pair_indices(subset, models)
    z, _ = ranking.style_features(subset, bt.ALL_CONTROLS, "paper")
    x = np.hstack([ranking.ALPHA * pairs.incidence(pr, len(models)), z])
    y = ranking.Battles.from_frame(subset).fit_frame()["y"].to_numpy()
    n = len(y)
    theta = frozen_newton(x, y, np.ones((1, n)), bt.REG, len(models))[0]
    w = np.random.default_rng(0).multinomial(n, np.full(n, 1.0 / n), size=60).astype(float)
    rounds = frozen_newton(x, y, w, bt.REG, len(models))
    fit = bt.style_control(subset, bt.ALL_CONTROLS, rounds=60, seed=0)
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
                                  anchor=ANCHOR, point="bootstrap_mean")
    np.testing.assert_allclose(generic.coef_estimate, rounds[:, k:].mean(0), atol=1e-7)
    assert np.abs(generic.rating - want).max() < ELO_TOL


def test_the_search_arena_layer_is_the_generic_leaderboard_with_the_papers_settings():
    """Same numbers, bit for bit: bt.leaderboard / bt.style_control = ranking.leaderboard on the battles kept by
    the paper's filter (voted, the non-search model and self-battles out) with its anchor, penalty, convention."""
    raw = loader.load_battles("sample:3000", seed=4)
    kept = raw.filter(pl.col("winner").is_not_null() & (pl.col("model_a") != pl.col("model_b"))
                      & ~pl.col("model_a").is_in(["gemini-2.5-pro"]) & ~pl.col("model_b").is_in(["gemini-2.5-pro"]))
    pairs_sa = bt.leaderboard(raw, rounds=30, seed=3)
    pairs_gen = ranking.leaderboard(kept, anchor=ANCHOR, rounds=30, seed=3, point="bootstrap_mean")
    assert pairs_sa.to_frame().equals(pairs_gen.to_frame())
    style_sa = bt.style_control(raw, bt.SOURCES, rounds=20, seed=5)
    style_gen = ranking.leaderboard(kept, anchor=ANCHOR, rounds=20, seed=5, features=bt.SOURCES, reg=0.5,
                                    convention="paper", point="bootstrap_mean")
    assert style_sa.to_frame().equals(style_gen.to_frame())
    assert style_sa.coefficients().equals(style_gen.coefficients())
    sandwich_sa = bt.style_control(raw, bt.LENGTH, ci="sandwich")
    sandwich_gen = ranking.leaderboard(kept, anchor=ANCHOR, ci="sandwich", features=bt.LENGTH, reg=0.5,
                                       convention="paper")
    assert sandwich_sa.ci_method == "sandwich" and sandwich_sa.to_frame().equals(sandwich_gen.to_frame())


def test_battles_are_screened_once_on_the_way_to_a_leaderboard(monkeypatch):
    """A release screened once (``bt.prepare_battles``) is not screened again by any fit of the Search Arena layer
    (neither by bt nor by the ranking core's gate): one call of the screen in all; and each fit gives the
    numbers of the old path, the generic leaderboard screening the frame itself."""
    from analysis_lib.ranking import battles
    from analysis_lib.search_arena import preference

    raw = loader.load_battles("sample:3000", seed=4)
    calls = []
    screen = battles._screen
    monkeypatch.setattr(battles, "_screen", lambda *a, _s=screen, **k: calls.append(1) or _s(*a, **k))
    prep = bt.prepare_battles(raw)
    board = bt.leaderboard(prep, rounds=12, seed=3)
    style = bt.style_control(prep, bt.LENGTH, rounds=12, seed=3)
    d1 = preference.table_d1(prep, rounds=4, seed=1, full=board.to_frame())
    by_intent = bt.style_by_subset(prep, bt.LENGTH, rounds=0)
    effect = bt.control_effect(prep, bt.LENGTH, rounds=0)
    assert len(calls) == 1 and d1.height and by_intent.height and effect.n_battles == prep.frame.height
    monkeypatch.undo()
    old_board = ranking.leaderboard(prep.frame, anchor=ANCHOR, rounds=12, seed=3, point="bootstrap_mean")
    assert board.to_frame().equals(old_board.to_frame())
    old_style = ranking.leaderboard(prep.frame, anchor=ANCHOR, rounds=12, seed=3, features=bt.LENGTH, reg=bt.REG,
                                    convention="paper", point="bootstrap_mean")
    assert style.to_frame().equals(old_style.to_frame()) and style.coefficients().equals(old_style.coefficients())
    assert board.dropped == prep.dropped  # the counts of the one screen travel into the result


def test_screened_battles_check_the_fits_features_and_count_exclusions():
    raw = loader.load_battles("sample:600", seed=2)
    prep = bt.prepare_battles(raw)
    gone = prep.without(["sonar"])
    n_sonar = prep.frame.filter((pl.col("model_a") == "sonar") | (pl.col("model_b") == "sonar")).height
    assert gone.frame.height == prep.frame.height - n_sonar > 0
    assert gone.dropped["excluded model"] == prep.dropped.get("excluded model", 0) + n_sonar
    assert screening.screened(prep) is prep and screening.screened(prep, []) is prep
    holed = bt.prepare_battles(raw.with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(None).otherwise(pl.col("response_length_a"))
        .alias("response_length_a")))
    row = holed.frame.with_row_index().filter(pl.col("response_length_a").is_null())["index"][0]
    with pytest.raises(ranking.InvalidBattlesError, match=rf"response_length_a' \(row {row}\)"):
        bt.style_control(holed, bt.LENGTH, rounds=0)
    with pytest.raises(ranking.InvalidBattlesError):  # the core's own gate refuses the same battles
        ranking.leaderboard(holed.frame, features=bt.LENGTH, ci="none")
    with pytest.raises(ValueError, match="features"):
        bt.convention_shift(prep, bt.CITATIONS, fitted=bt.style_control(prep, bt.LENGTH, rounds=0))
    fitted = bt.style_control(prep, bt.LENGTH, rounds=5, seed=1)
    assert bt.convention_shift(prep, bt.LENGTH, fitted=fitted).equals(bt.convention_shift(prep, bt.LENGTH))

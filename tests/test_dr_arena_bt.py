"""DR-Arena Bradley–Terry ratings through the one leaderboard (:func:`analysis_lib.ranking.leaderboard` with its
ridge option): the MLE decided on the beat graph, the ridge only where the matches (or a bootstrap resample) have
no MLE, the models the ridge sets named, the point rating against an independent fit, and the numbers of the
DR-Arena fit that preceded it (a frozen copy in ``tests/reference_bt.py``: same ridge, same resamples)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from reference_bt import DR_RIDGE, frozen_dr_ratings, strongly_connected_beat_graph
from scipy import optimize

from analysis_lib import ranking
from analysis_lib.dr_arena import simulate as dr_simulate
from analysis_lib.dr_arena import tournament as tn
from analysis_lib.dr_arena.match_log import matches
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import reference as solver

SCHEMA = {"model_a": pl.String, "model_b": pl.String, "winner": pl.String}


def frame(rows):
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


@pytest.mark.parametrize(("rows", "ridge_set"), [
    # A beat B once; B-C split: {A} and {B, C}, Newton stalls at a finite point here without the check
    ([("A", "B", "model_a"), ("B", "C", "model_a"), ("B", "C", "model_b")], ["A"]),
    ([("A", "B", "model_a")] * 30 + [("B", "C", "model_a")] * 15 + [("B", "C", "model_b")] * 15, ["A"]),
    ([("A", "B", "model_a"), ("B", "A", "model_a"), ("B", "C", "tie"), ("C", "A", "model_a"), ("A", "D", "model_a"),
      ("C", "D", "model_a")], ["D"]),  # D never wins
])
def test_separable_data_are_flagged_fitted_with_the_ridge_and_its_models_named(rows, ridge_set):
    board = tn.ratings(frame(rows), rounds=10)
    assert not board["mle"].any() and (board["ridge"] == ranking.RIDGE).all() and ranking.RIDGE == DR_RIDGE
    assert board.filter(pl.col("ridge_set"))["model"].to_list() == ridge_set
    assert (board["ridge_resamples"] == 10).all()  # a resample never has more edges than the data
    assert np.isfinite(board["rating"].to_numpy()).all()
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(rows)).fit_frame())
    # the reported rating is the ridge optimum: its gradient vanishes
    elo = dict(zip(board["model"], board["rating"], strict=True))
    theta = (np.array([elo[m] for m in data.models]) - 1000.0) / 400.0
    _, grad = solver.logistic_loss_and_grad(theta, data.design(), data.outcomes, data.counts, reg=ranking.RIDGE)
    assert np.abs(grad).max() < 1e-6


def _independent_bt(rows):
    """BT by scipy BFGS on the hand-written likelihood, first model anchored at 0, then centred (Elo)."""
    models = sorted({m for r in rows for m in r[:2]})
    idx = {m: i for i, m in enumerate(models)}
    a = np.array([idx[r[0]] for r in rows])
    b = np.array([idx[r[1]] for r in rows])
    y = np.array([{"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[r[2]] for r in rows])

    def nll(free):
        r = np.concatenate([[0.0], free])
        eta = math.log(10) * (r[a] - r[b])
        return float(np.sum(np.logaddexp(0, eta) - y * eta))

    res = optimize.minimize(nll, np.zeros(len(models) - 1), method="BFGS", options={"gtol": 1e-10})
    r = np.concatenate([[0.0], res.x])
    return dict(zip(models, 400 * (r - r.mean()) + 1000, strict=True))


def test_point_rating_equals_an_independent_logistic_fit():
    rng = np.random.default_rng(3)
    skill = {"p": 0.6, "q": 0.2, "r": 0.0, "s": -0.3, "t": -0.5}
    rows = []
    for a in skill:
        for b in skill:
            if a < b:
                for _ in range(12):
                    u = rng.random()
                    pa = 1 / (1 + 10 ** (skill[b] - skill[a]))
                    rows.append((a, b, "tie" if u > 0.9 else ("model_a" if u < 0.9 * pa else "model_b")))
    board = tn.ratings(frame(rows), rounds=0)
    assert board["mle"].all() and (board["ridge"] == 0).all() and not board["ridge_set"].any()
    ref = _independent_bt(rows)
    for m, r in zip(board["model"], board["rating"], strict=True):
        assert r == pytest.approx(ref[m], abs=1e-3)


# The reviewer's example: A beats B 9-1 and C 9-1, B-C 5-5. The MLE exists (A - B = A - C = log10 9), but a
# resample that misses both of A's losses has none.
REVIEW_ROWS = ([("A", "B", "model_a")] * 9 + [("A", "B", "model_b")] + [("B", "C", "model_a")] * 5
               + [("B", "C", "model_b")] * 5 + [("C", "A", "model_a")] + [("C", "A", "model_b")] * 9)


def test_the_ridge_is_used_only_on_resamples_without_an_mle():
    board = tn.ratings(frame(REVIEW_ROWS), rounds=200, seed=0)
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(REVIEW_ROWS)).fit_frame())
    w = ranking.bootstrap_counts(data.n_battles, 200, 0, p=data.counts / data.counts.sum())
    no_mle = sum(not strongly_connected_beat_graph(data.models, data.pairs, data.outcomes, wk) for wk in w)
    assert board["ridge_resamples"][0] == no_mle and 0 < no_mle < 200  # networkx, resample by resample


def test_bootstrap_no_longer_inflates_the_reported_rating():
    board = tn.ratings(frame(REVIEW_ROWS), rounds=200, seed=0)
    a = board.row(0, named=True)
    point = 1000 + 400 * (2 / 3) * math.log10(9)  # closed form, Σ r = 0
    assert a["model"] == "A" and a["mle"] and a["ridge"] == 0 and not board["ridge_set"].any()
    assert a["rating"] == pytest.approx(point, abs=1e-6)  # was the bootstrap mean, 1354.7
    assert 0 < a["ridge_resamples"] < 200
    for row in board.iter_rows(named=True):
        assert row["ci_lower"] <= row["rating"] <= row["ci_upper"]
    assert tn.ratings(frame(REVIEW_ROWS), rounds=0)["rating"][0] == pytest.approx(point, abs=1e-6)


def _swiss_matches(n_rounds: int) -> pl.DataFrame:
    """A simulated Swiss tournament of 8 agents on 3 trees: after round 1 its comparison graph is in pieces."""
    tree = {"children": [{"children": [{"children": []}] * 3}] * 3}
    agents = dr_simulate.make_agents(8, seed=4)
    return matches(dr_simulate.simulate_tournament(agents, {f"t{i}": tree for i in range(3)}, n_rounds=n_rounds,
                                                   seed=5).rounds)


@pytest.mark.parametrize("case", ["review", "separable", "swiss, round 1", "swiss, 4 rounds"])
def test_ratings_equal_the_dr_arena_fit_they_replace(case):
    """Same ridge (1e-3), same resamples, same ratings and intervals as the DR-Arena module's own fit (frozen in
    ``tests/reference_bt.py``), within 1e-6 Elo: on the reviewer's example (some resamples need the ridge), on data
    without an MLE, and on a simulated Swiss tournament."""
    if case == "review":
        battles = frame(REVIEW_ROWS)
    elif case == "separable":
        battles = frame([("A", "B", "model_a")] * 3 + [("B", "C", "model_a"), ("C", "B", "tie"), ("C", "D", "model_b")])
    else:
        battles = tn.battles(_swiss_matches(1 if "round 1" in case else 4))
    board = tn.ratings(battles, rounds=60, seed=2)
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(tn.battles(battles)).fit_frame())
    elo, lo, hi, mle, n_ridge = frozen_dr_ratings(data.models, data.pairs, data.outcomes, data.counts, 60, 2)
    got = {r["model"]: r for r in board.iter_rows(named=True)}
    for i, m in enumerate(data.models):
        assert got[m]["rating"] == pytest.approx(elo[i], abs=1e-6)
        assert got[m]["ci_lower"] == pytest.approx(lo[i], abs=1e-6)
        assert got[m]["ci_upper"] == pytest.approx(hi[i], abs=1e-6)
    assert bool(board["mle"][0]) == mle and board["ridge_resamples"][0] == n_ridge
    assert board["ridge"][0] == (0.0 if mle else DR_RIDGE)

"""When the Bradley–Terry MLE exists (beat graph, Zermelo / Ford), the diagnosis of a failure, and the ridge only
where the data or a bootstrap resample need it. The cases are DR-Arena's (``tests/test_dr_arena_bt.py``, Swiss
tournaments), here on the generic :mod:`analysis_lib.ranking` API; references are networkx, scipy and an
independent BFGS fit of the hand-written likelihood."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import polars as pl
import pytest
from reference_bt import strongly_connected_beat_graph
from scipy import optimize

from analysis_lib import ranking
from analysis_lib.ranking import _newton as newton
from analysis_lib.ranking import _pairs as pairs
from analysis_lib.ranking import graph
from analysis_lib.ranking import reference as solver

SCHEMA = {"model_a": pl.String, "model_b": pl.String, "winner": pl.String}


def frame(rows):
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def test_mle_exists_agrees_with_networkx_on_random_arenas_and_resamples():
    """The strong-components pass over many weight vectors at once against networkx, one graph at a time."""
    rng = np.random.default_rng(1)
    n_true = n_all = 0
    for k, n_rows in ((3, 8), (5, 20), (7, 60), (12, 60)):
        rows = [(f"m{a}", f"m{b}", rng.choice(["model_a", "model_b", "tie"], p=[0.45, 0.45, 0.1]))
                for a, b in rng.integers(0, k, (n_rows, 2)) if a != b]
        data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(rows)).fit_frame())
        w = ranking.bootstrap_counts(data.n_battles, 100, 2, p=data.counts / data.counts.sum())
        fast = graph.mle_exists(data.pairs, data.outcomes, len(data.models), w)
        assert fast.tolist() == [strongly_connected_beat_graph(data.models, data.pairs, data.outcomes, wk)
                                 for wk in w]
        n_true, n_all = n_true + int(fast.sum()), n_all + w.shape[0]
    assert 0 < n_true < n_all  # both outcomes exercised


def test_beat_graph_ties_count_both_ways_and_zero_weights_draw_no_edge():
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(
        frame([("a", "b", "model_a"), ("b", "c", "tie"), ("c", "a", "model_a")])).fit_frame())
    _, src, dst = graph.beat_edges(data.pairs, data.outcomes)
    edges = {(data.models[i], data.models[j]) for i, j in zip(src, dst, strict=True)}
    assert edges == {("a", "b"), ("b", "c"), ("c", "b"), ("c", "a")}
    assert graph.mle_exists(data.pairs, data.outcomes, 3, data.counts)[0]  # a -> b -> c -> a, c <-> b
    w = np.where(data.outcomes == 0.5, 0.0, data.counts)  # drop the tie: b reaches nothing
    assert not graph.mle_exists(data.pairs, data.outcomes, 3, w)[0]


def test_diagnosis_names_every_model_outside_the_largest_group_and_why():
    rows = ([("a", "b", "model_a"), ("b", "c", "model_a"), ("c", "a", "model_a")]  # the main cycle
            + [("d", "a", "model_b"), ("d", "b", "model_b")]  # d never won
            + [("e", "a", "model_a")]  # e never lost
            + [("x", "y", "tie")])  # no chain to the main group
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(rows)).fit_frame())
    d = graph.diagnose(data.models, data.pairs, data.outcomes, data.counts)
    assert not d.identifiable and set(d.main) == {"a", "b", "c"}
    assert (d.never_won, d.never_lost, d.unconnected) == (("d",), ("e",), ("x", "y"))
    assert set(d.outside) == {"d", "e", "x", "y"}
    # a middle group: beats d' and loses to the main group, every result one way along the chain
    chain = rows[:3] + [("m", "a", "model_b"), ("m", "n", "model_a"), ("n", "m", "model_a"), ("m", "d", "model_a"),
                        ("d", "n", "model_b")]
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(chain)).fit_frame())
    d = graph.diagnose(data.models, data.pairs, data.outcomes, data.counts)
    assert d.one_way == ("m", "n") and d.never_won == ("d",)
    assert "every result against the largest group goes one way: ['m', 'n']" in d.message()


@pytest.mark.parametrize("rows", [
    [("A", "B", "model_a"), ("B", "C", "model_a"), ("B", "C", "model_b")],  # Newton stalls at a finite point here
    [("A", "B", "model_a")] * 30 + [("B", "C", "model_a")] * 15 + [("B", "C", "model_b")] * 15,
    [("A", "B", "model_a"), ("B", "A", "model_a"), ("B", "C", "tie"), ("C", "A", "model_a"), ("A", "D", "model_a"),
     ("C", "D", "model_a")],  # D never wins
])
def test_separable_data_are_flagged_and_fitted_with_the_ridge(rows):
    with pytest.raises(ranking.NotIdentifiableError):
        ranking.leaderboard(frame(rows), rounds=10)
    result = ranking.leaderboard(frame(rows), rounds=10, on_separation="ridge", point="ml")
    assert not result.mle_exists and result.ridge == ranking.RIDGE and result.ridge_resamples == 10
    assert np.isfinite(result.rating).all() and np.isfinite(result.ci_lower).all()
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(rows)).fit_frame())
    elo = dict(zip(result.models, result.rating, strict=True))
    theta = (np.array([elo[m] for m in data.models]) - 1000.0) / 400.0
    # the reported rating is the ridge optimum: the gradient of the penalised loss (dense reference) vanishes
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
    result = ranking.leaderboard(frame(rows), ci="none")
    assert result.mle_exists and result.convergence.grad_norm < 1e-6
    ref = _independent_bt(rows)
    for m, r in zip(result.models, result.rating, strict=True):
        assert r == pytest.approx(ref[m], abs=1e-3)


# The reviewer's example: A beats B 9-1 and C 9-1, B-C 5-5. The MLE exists (A - B = A - C = log10 9), but a
# resample that misses both of A's losses has none.
REVIEW_ROWS = ([("A", "B", "model_a")] * 9 + [("A", "B", "model_b")] + [("B", "C", "model_a")] * 5
               + [("B", "C", "model_b")] * 5 + [("C", "A", "model_a")] + [("C", "A", "model_b")] * 9)


def test_bootstrap_uses_the_ridge_only_on_resamples_without_an_mle():
    data = pairs.PairData.from_frame(ranking.Battles.from_frame(frame(REVIEW_ROWS)).fit_frame())
    result = ranking.leaderboard(frame(REVIEW_ROWS), rounds=200, seed=0, on_separation="ridge")
    w = ranking.bootstrap_counts(data.n_battles, 200, 0, p=data.counts / data.counts.sum())
    expected = []
    for wk in w:  # the beat graph of each resample, built independently with networkx
        g = nx.DiGraph()
        g.add_nodes_from(data.models)
        for (i, j), y, c in zip(data.pairs, data.outcomes, wk, strict=True):
            a, b = data.models[i], data.models[j]
            if c > 0 and y > 0:
                g.add_edge(a, b)
            if c > 0 and y < 1:
                g.add_edge(b, a)
        expected.append(not nx.is_strongly_connected(g))
    ridge = np.array(expected)
    assert result.ridge_resamples == ridge.sum() and 0 < ridge.sum() < 200
    assert result.rounds is not None
    stats0 = newton.PairStats.from_rows(data.pairs, data.outcomes, 3)
    unpenalised, _ = newton.fit_pairs(stats0, *stats0.totals(w[~ridge]))
    unpenalised -= unpenalised.mean(axis=1, keepdims=True)  # the other resamples are plain MLE fits
    np.testing.assert_allclose(result.rounds[~ridge], unpenalised, atol=1e-9)
    stats = newton.PairStats.from_rows(data.pairs, data.outcomes, 3)
    n, s = stats.totals(w[ridge])
    penalised, _ = newton.fit_pairs(stats, n, s, reg=ranking.RIDGE)
    np.testing.assert_allclose(result.rounds[ridge], penalised - penalised.mean(axis=1, keepdims=True), atol=1e-9)


def test_the_point_rating_is_the_fit_not_the_bootstrap_mean_when_asked():
    result = ranking.leaderboard(frame(REVIEW_ROWS), rounds=200, seed=0, on_separation="ridge", point="ml")
    board = result.to_frame()
    a = board.row(0, named=True)
    point = 1000 + 400 * (2 / 3) * math.log10(9)  # closed form, Σ r = 0
    assert a["model"] == "A" and result.mle_exists
    assert a["rating"] == pytest.approx(point, abs=1e-6)
    for row in board.iter_rows(named=True):
        assert row["ci_lower"] <= row["rating"] <= row["ci_upper"]

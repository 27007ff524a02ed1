"""Frozen copies of the Bradley–Terry fits the book used before the sparse solvers, as known answers for the tests
that check the book's numbers did not move: the dense batched Newton (``fit_logistic_batch``) and the DR-Arena
tournament's own ratings (MLE where the beat graph is strongly connected, else a ridge of 1e-3; bootstrap over the
unique rows with the same multinomial draws). Written out here, independent of ``analysis_lib.ranking``'s solvers."""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.special import expit

DR_RIDGE = 1e-3  # the DR-Arena module's RIDGE_FALLBACK


def frozen_newton(x: np.ndarray, y: np.ndarray, w: np.ndarray, reg: float, n_ratings: int) -> np.ndarray:
    """Newton on ``Σ w [softplus(xθ) − y xθ] + reg/2 ‖θ‖²`` for every row of ``w``, step halving, ``𝟙𝟙ᵀ/n`` on the
    rating block without a penalty, until the step is below 1e-10."""
    p = x.shape[1]
    theta = np.zeros((w.shape[0], p))
    outer = (x[:, :, None] * x[:, None, :]).reshape(x.shape[0], p * p)
    fix = np.zeros((p, p))
    if reg == 0:
        fix[:n_ratings, :n_ratings] = 1.0 / n_ratings

    def loss(t, ww):
        eta = t @ x.T
        return np.sum(ww * (np.logaddexp(0, eta) - y * eta), axis=1) + 0.5 * reg * np.sum(t * t, axis=1)

    for _ in range(100):
        prob = expit(theta @ x.T)
        grad = (w * (prob - y)) @ x + reg * theta
        hess = ((w * prob * (1 - prob)) @ outer).reshape(-1, p, p) + reg * np.eye(p) + fix
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        t = np.ones(w.shape[0])
        new = theta - step
        for _ in range(40):
            bad = loss(new, w) > loss(theta, w) + 1e-12 * np.abs(loss(theta, w))
            if not bad.any():
                break
            t[bad] /= 2
            new[bad] = theta[bad] - t[bad, None] * step[bad]
        theta = new
        if np.max(np.abs(t[:, None] * step)) < 1e-10:
            break
    return theta


def strongly_connected_beat_graph(models, pairs, outcomes, w) -> bool:
    """The beat graph of one weight vector (an edge a → b when a beat or tied b in a row of positive weight) is
    strongly connected (networkx)."""
    g = nx.DiGraph()
    g.add_nodes_from(range(len(models)))
    for (i, j), y, c in zip(pairs, outcomes, w, strict=True):
        if c > 0 and y > 0:
            g.add_edge(i, j)
        if c > 0 and y < 1:
            g.add_edge(j, i)
    return nx.is_strongly_connected(g)


def frozen_dr_ratings(models, pairs, outcomes, counts, n_bootstrap: int, seed: int):
    """The DR-Arena ratings before they moved to the one leaderboard: ``(elo, lower, upper, mle, ridge_resamples)``.

    Every weight vector (the counts, then ``n_bootstrap`` multinomial resamples of the battles over the unique
    rows, ``numpy.random.default_rng(seed)``) is fitted by the MLE when its beat graph is strongly connected, else
    with the ridge; Elo ``400 (θ − mean θ) + 1000``; the interval is the 2.5/97.5 percentiles of the resamples."""
    x = np.log(10.0) * (np.eye(len(models))[pairs[:, 0]] - np.eye(len(models))[pairs[:, 1]])

    def fit(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ridge = np.array([not strongly_connected_beat_graph(models, pairs, outcomes, wk) for wk in w])
        theta = np.empty((w.shape[0], len(models)))
        for reg, rows in ((0.0, ~ridge), (DR_RIDGE, ridge)):
            if rows.any():
                theta[rows] = frozen_newton(x, outcomes, w[rows], reg, len(models))
        return 400.0 * (theta - theta.mean(axis=1, keepdims=True)) + 1000.0, ridge

    elo, ridge_obs = fit(counts[None, :])
    if n_bootstrap == 0:
        nan = np.full(len(models), np.nan)
        return elo[0], nan, nan, not ridge_obs[0], 0
    w = np.random.default_rng(seed).multinomial(int(counts.sum()), counts / counts.sum(), size=n_bootstrap)
    samples, ridge = fit(w.astype(float))
    lo, hi = np.percentile(samples, 2.5, axis=0), np.percentile(samples, 97.5, axis=0)
    return elo[0], lo, hi, not ridge_obs[0], int(ridge.sum())

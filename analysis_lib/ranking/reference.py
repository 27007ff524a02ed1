"""Reference logistic fits on a dense design: what the tests and benchmarks compare the sparse solvers with.

The rating fits themselves use the sparse solvers of :mod:`analysis_lib.ranking._newton` (plain BT on unique
matchups) and :mod:`analysis_lib.ranking._contextual` (contextual BT), which never form a design matrix.
This module keeps what the tests and benchmarks compare them with. For a design ``X`` (rows = battles or unique
matchups), targets ``y ∈ [0, 1]`` and one row of non-negative weights ``w_b`` per fit ``b``, each fit minimises

    L_b(θ) = Σ_i w_bi [ softplus(x_i θ) − y_i x_i θ ] + (reg / 2) ‖θ‖²,

which is the weighted negative log-likelihood ``−Σ w [y log σ(η) + (1 − y) log σ(−η)]`` (``η = Xθ``) plus a
ridge penalty. Bradley–Terry is the case ``X = ln 10 · (e_a − e_b)``; contextual BT appends feature columns.

- :func:`logistic_loss_and_grad`: one fit's loss and gradient (the reference objective);
- :func:`fit_logistic_lbfgs`: one scipy L-BFGS-B per fit from zero (the kind of fit the Search Arena authors
  run: their serial loop), for comparison (``benchmarks/``, tests; tighter ``gtol`` / ``ftol`` give a converged
  reference);

The bootstrap draws of every leaderboard are :func:`analysis_lib.ranking.bootstrap_counts`.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def logistic_loss_and_grad(
    theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray, reg: float = 0.0
) -> tuple[float, np.ndarray]:
    """One fit's loss ``Σ w [softplus(η) − y η] + reg/2 ‖θ‖²`` (η = Xθ) and its gradient.

    ``softplus(η) − y η = −[y log σ(η) + (1 − y) log σ(−η)]``, so this is the BT / contextual-BT loss of the
    module docstring with ``X`` the design (``ln 10 · (e_a − e_b)`` then ``z``).
    """
    eta = x @ theta
    loss = float(np.sum(w * (_softplus(eta) - y * eta)) + 0.5 * reg * theta @ theta)
    grad = x.T @ (w * (expit(eta) - y)) + reg * theta
    return loss, grad


def fit_logistic_lbfgs(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    *,
    reg: float = 0.0,
    gtol: float = 1e-6,
    max_iter: int = 100,
    ftol: float = 2.220446049250313e-09,
) -> np.ndarray:
    """The authors' kind of fit: one scipy L-BFGS-B per row of ``w``, from zero (a serial loop).

    Defaults are theirs (``gtol=1e-6``, ``maxiter=100``, scipy's ``ftol``); pass tighter ones to compare
    solutions to a given accuracy.
    """
    w = np.atleast_2d(np.asarray(w, dtype=float))
    out = np.empty((w.shape[0], x.shape[1]))
    for b in range(w.shape[0]):
        res = minimize(
            logistic_loss_and_grad,
            np.zeros(x.shape[1]),
            args=(x, y, w[b], reg),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter, "gtol": gtol, "ftol": ftol},
        )
        out[b] = res.x
    return out

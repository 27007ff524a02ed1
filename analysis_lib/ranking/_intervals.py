r"""Interval estimates of BT and contextual-BT parameters: bootstrap percentiles and sandwich (robust) intervals.

Bootstrap (the papers' method, the default). Rounds resample the battles with replacement (multinomial counts),
each round is refitted, and an interval is the ``(1 − level)/2`` and ``(1 + level)/2`` percentiles of the rounds;
:func:`percentiles` summarises ``(rounds, k)`` samples.

Sandwich (robust). At the optimum ``θ̂`` of a loss ``L(θ) = Σ_j ℓ_j(θ) + (reg/2) ‖θ‖²`` summed over battles
``j = 1 … N`` (each battle's score ``s_j = ∇ℓ_j(θ̂) = (p_j − y_j) x_j``), the estimator's covariance is

    Cov(θ̂) ≈ H⁻¹ G H⁻¹,   H = ∇²L(θ̂) = Σ_j p_j (1 − p_j) x_j x_jᵀ + reg I,
                            G = Σ_j (s_j − s̄)(s_j − s̄)ᵀ = Σ_j (y_j − p_j)² x_j x_jᵀ − N s̄ s̄ᵀ,

with ``s̄ = −reg θ̂ / N`` the mean score (zero without a penalty, since ``∇L(θ̂) = 0``). The interval is
``θ̂ ± z σ``, ``σ² = diag(H⁻¹ G H⁻¹)``, ``z`` the normal quantile of ``(1 + level)/2``. No distributional
assumption on the outcomes enters (ties, over-dispersion); it relies on ``N`` being large. For plain BT on
unique rows with counts ``c_i`` the same sums are taken per unique row, ``G = α² Σ_i c_i (y_i − p_i)² L_i``
(``L_i`` the row's Laplacian ``(e_a − e_b)(e_a − e_b)ᵀ``): the counts enter once, not squared, because the
``c_i`` battles of a row are separate observations with the same score.

Conventions shared with ``arena-rank`` (``BradleyTerry`` / ``ContextualBradleyTerry.compute_ratings_and_cis``
with ``ci_method="sandwich"``): the gradient covariance from the unique rows and counts as above, normal
quantiles, and ``Σ r = 0``: the data part of ``H`` and all of ``G`` have the constant vector ``𝟙`` (over the
ratings) in their null space, so the covariance is that of the centred ratings. How that null direction is
removed differs. arena-rank adds ``hessian_reg · I`` to its mean-scale Hessian (default ``1e-5``; on our summed,
log10 scale ``hessian_reg · N · diag(α², …, α², 1, …, 1)``), which also shrinks every other direction: harmless
when every model has thousands of battles, but at arena scale (``N`` in the millions) ``1e-5 · N`` is larger than
the Hessian diagonal ``≈ α² c / 4`` of a model with a few dozen battles, whose variance it then understates.
Here the default ``hessian_reg = 0`` removes exactly the ``𝟙`` direction (``H + h 𝟙𝟙ᵀ/m``, whose inverse acts as
the pseudo-inverse on ``G``'s range); ``hessian_reg=1e-5`` reproduces arena-rank. For a penalised contextual fit
arena-rank also leaves ``reg`` out of ``H`` and subtracts ``(reg²/N) ββᵀ`` (mean scale) from ``G`` where the
centred scores give ``reg² ββᵀ``; without a penalty the two agree.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtri  # ndtri: the standard normal quantile (scipy.stats.norm.ppf)

from analysis_lib.ranking._blas import one_blas_thread
from analysis_lib.ranking._newton import PairStats
from analysis_lib.ranking._pairs import ALPHA

LEVEL = 0.95


def percentiles(samples: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of ``(rounds, k)`` samples: mean and the ``(1 ∓ level)/2`` percentiles (NaN without rounds)."""
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1], np.nan)
        return nan, nan, nan
    tail = 100.0 * (1.0 - level) / 2.0
    return samples.mean(axis=0), np.percentile(samples, tail, axis=0), np.percentile(samples, 100.0 - tail, axis=0)


def normal_quantile(level: float = LEVEL) -> float:
    """``z`` with ``P(|Z| ≤ z) = level`` for a standard normal ``Z`` (1.95996… for 0.95)."""
    return float(ndtri(0.5 + level / 2.0))


def invert(h: np.ndarray, n_ratings: int, ridge_free: bool) -> np.ndarray:
    if ridge_free and n_ratings:
        h = h.copy()
        scale = np.trace(h[:n_ratings, :n_ratings]) / n_ratings
        h[:n_ratings, :n_ratings] += (scale if scale > 0 else 1.0) / n_ratings
    return np.linalg.inv(h)


def sandwich_bt(
    stats: PairStats, counts: np.ndarray, theta: np.ndarray, *, reg: float = 0.0, hessian_reg: float = 0.0
) -> np.ndarray:
    """``H⁻¹ G H⁻¹`` (module docstring) of plain BT ratings ``theta`` (log10-odds) fitted to the unique rows of
    ``stats`` with ``counts``: an ``(m, m)`` covariance in log10-odds². ``reg``: the penalty the fit used."""
    with one_blas_thread():  # small m × m products: one BLAS thread
        return _sandwich_bt(stats, counts, theta, reg, hessian_reg)


def _sandwich_bt(stats: PairStats, counts: np.ndarray, theta: np.ndarray, reg: float, hessian_reg: float) -> np.ndarray:
    n, s = stats.totals(counts)
    q = stats.squares(counts)
    p = expit(stats.eta(theta[None, :]))
    m = stats.n_models
    total = float(counts.sum())
    h = ALPHA**2 * stats.laplacian(n * p * (1.0 - p))[0] + (reg + hessian_reg * total * ALPHA**2) * np.eye(m)
    g = ALPHA**2 * stats.laplacian(q - 2.0 * p * s + p * p * n)[0]
    if reg:
        g -= np.outer(reg * theta, reg * theta) / total
    h_inv = invert(h, m, ridge_free=not (reg or hessian_reg))
    return h_inv @ g @ h_inv


def normal_interval(estimate: np.ndarray, cov: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """``estimate ∓ z σ`` with ``σ = √diag(cov)``."""
    half = normal_quantile(level) * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return estimate - half, estimate + half

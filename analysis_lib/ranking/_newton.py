r"""Exact Newton for Bradley–Terry on unique matchups, batched over fits, never forming a design matrix.

Model. Ratings ``r ∈ ℝ^m`` in log10-odds units, ``P(a beats b) = σ(α (r_a − r_b))`` with ``α = ln 10``. The
unique rows ``i = (a_i, b_i, y_i)`` of :class:`~analysis_lib.ranking._pairs.PairData`, with weights ``w_i`` (the
counts, or one bootstrap round's resampled counts), are folded into unordered pairs ``k = {lo_k < hi_k}``:
``n_k = Σ_{i∈k} w_i`` battles and ``s_k = Σ_{i∈k} w_i y_i^{lo}`` points of ``lo`` (``y^{lo} = y`` when
``a_i = lo``, else ``1 − y``). With ``η_k = α (r_lo − r_hi)`` and ``p_k = σ(η_k)`` the loss is

    L(r) = Σ_k [ n_k softplus(η_k) − s_k η_k ] + (reg/2) ‖r‖²,

the count-weighted negative log-likelihood of the rows (ties half a win) — identical to the row-wise
``Σ_i w_i [softplus(η_i) − y_i η_i]`` because ``softplus(−η) + η = softplus(η)``. With ``D`` the
(pairs × models) incidence matrix (+1 at ``lo``, −1 at ``hi``):

    ∇L  = α Dᵀ (n ∘ p − s) + reg · r,
    ∇²L = α² Dᵀ diag(n ∘ p ∘ (1 − p)) D + reg · I        (a weighted graph Laplacian, models × models),

assembled with sparse products (two entries per pair for the gradient, four for the Hessian), so one Newton
iteration costs ``O(pairs)`` plus one ``m × m`` solve per fit, never ``O(battles × models)``.

Identification. Without a penalty ``L`` is invariant under ``r → r + c 𝟙``: the Laplacian has ``𝟙`` in its null
space and ``∇L ⟂ 𝟙``. The Newton system is solved with ``∇²L + h 𝟙𝟙ᵀ/m`` (``h`` = mean diagonal), whose
solution for a right-hand side ``⟂ 𝟙`` is the step ``⟂ 𝟙``: ``Σ r`` keeps its start value (0). Whether a finite
optimum exists at all is decided beforehand on the beat graph (:mod:`analysis_lib.ranking.graph`).

Iteration. ``r ← r − t Δ``, ``Δ = (∇²L)⁻¹ ∇L``, with step halving (``t = 1, ½, …``) until the loss does not rise.
A fit has converged when the full Newton step and the gradient are both small,
``max |Δ| ≤ xtol`` (log10-odds; ``1e-10`` ≈ 4·10⁻⁸ Elo) and ``‖∇L‖∞ ≤ gtol · max(1, Σ n)``, and the final step is
then taken; NaN or infinite values never count as converged. All fits of a batch (bootstrap rounds, warm-started
from the full-data optimum) iterate together until each has converged or ``max_iter`` is reached.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit

from analysis_lib.ranking._blas import one_blas_thread
from analysis_lib.ranking._pairs import ALPHA

XTOL = 1e-10
GTOL = 1e-9
MAX_ITER = 100


class ConvergenceError(RuntimeError):
    """A fit did not converge (gradient and step tolerances not met, or non-finite values)."""


@dataclass(frozen=True)
class NewtonReport:
    """Per fit of a batch: iterations taken, final ``‖∇L‖∞`` and ``max |Δ|`` (before the last step), converged."""

    iterations: np.ndarray
    grad_norm: np.ndarray
    step: np.ndarray
    converged: np.ndarray

    @classmethod
    def concat(cls, reports: list[NewtonReport]) -> NewtonReport:
        """One report for several batches, in order."""
        if not reports:
            empty = np.zeros(0)
            return cls(empty.astype(np.int64), empty, empty, empty.astype(bool))
        return cls(*(np.concatenate([getattr(r, f) for r in reports]) for f in ("iterations", "grad_norm", "step",
                                                                                 "converged")))


def check_converged(report: NewtonReport, what: str) -> None:
    """Raise :class:`ConvergenceError` naming how many fits of ``report`` did not converge."""
    if not report.converged.all():
        bad = np.flatnonzero(~report.converged)
        raise ConvergenceError(
            f"{what}: Newton did not converge for {bad.size} of {report.converged.size} fits (first: fit {bad[0]}, "
            f"|grad| {report.grad_norm[bad[0]]:.3g}, step {report.step[bad[0]]:.3g} after "
            f"{report.iterations[bad[0]]} iterations)"
        )


@dataclass(frozen=True)
class PairStats:
    """The unique rows folded into unordered pairs (module docstring); built once per data set.

    ``fold`` is the sparse ``(pairs, rows)`` 0/1 map, ``y_lo`` the outcome of each row for its pair's ``lo``
    model; self-battle rows (``a = b``) belong to no pair (they carry no information about any difference).
    """

    n_models: int
    lo: np.ndarray
    hi: np.ndarray
    fold: sparse.csr_matrix
    y_lo: np.ndarray
    d_t: sparse.csr_matrix  # (models, pairs): Dᵀ
    lap_t: sparse.csr_matrix  # (models², pairs): column k = vec((e_lo − e_hi)(e_lo − e_hi)ᵀ)

    @classmethod
    def from_rows(cls, pairs: np.ndarray, outcomes: np.ndarray, n_models: int) -> PairStats:
        a, b = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        valid = np.flatnonzero(a != b)
        keys, inv = np.unique(lo[valid] * n_models + hi[valid], return_inverse=True)
        n_pairs, m = keys.size, n_models
        fold = sparse.csr_matrix((np.ones(valid.size), (inv, valid)), shape=(n_pairs, len(a)))
        plo, phi = keys // m, keys % m
        k = np.arange(n_pairs)
        d_t = sparse.csr_matrix(
            (np.concatenate([np.ones(n_pairs), -np.ones(n_pairs)]), (np.concatenate([plo, phi]), np.tile(k, 2))),
            shape=(m, n_pairs),
        )
        rows = np.concatenate([plo * m + plo, phi * m + phi, plo * m + phi, phi * m + plo])
        vals = np.concatenate([np.ones(2 * n_pairs), -np.ones(2 * n_pairs)])
        lap_t = sparse.csr_matrix((vals, (rows, np.tile(k, 4))), shape=(m * m, n_pairs))
        y_lo = np.where(a == lo, outcomes, 1.0 - outcomes)
        return cls(m, plo, phi, fold, y_lo, d_t, lap_t)

    def totals(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(n, s)``, each ``(B, pairs)``: battles and points of ``lo`` per pair for every row of ``w``."""
        w = np.atleast_2d(w)
        n = np.asarray(self.fold @ w.T).T
        s = np.asarray(self.fold @ (w * self.y_lo).T).T
        return np.ascontiguousarray(n), np.ascontiguousarray(s)

    def squares(self, w: np.ndarray) -> np.ndarray:
        """``Σ_{i∈k} w_i (y_i^{lo})²`` per pair, ``(B, pairs)`` (for the gradient covariance of a sandwich)."""
        return np.ascontiguousarray(np.asarray(self.fold @ (np.atleast_2d(w) * self.y_lo**2).T).T)

    def eta(self, theta: np.ndarray) -> np.ndarray:
        return ALPHA * (theta[:, self.lo] - theta[:, self.hi])

    def loss(self, theta: np.ndarray, n: np.ndarray, s: np.ndarray, reg: float) -> np.ndarray:
        """``L`` of the module docstring for every row of ``theta`` (with its own ``n``, ``s``)."""
        eta = self.eta(theta)
        return np.sum(n * np.logaddexp(0.0, eta) - s * eta, axis=1) + 0.5 * reg * np.sum(theta * theta, axis=1)

    def gradient(self, theta: np.ndarray, n: np.ndarray, s: np.ndarray, reg: float) -> np.ndarray:
        """``∇L`` for every row of ``theta``, ``(B, models)``."""
        p = expit(self.eta(theta))
        return ALPHA * np.asarray(self.d_t @ (n * p - s).T).T + reg * theta

    def laplacian(self, v: np.ndarray) -> np.ndarray:
        """``Dᵀ diag(v_b) D`` for every row ``v_b`` of ``v`` (``(B, pairs)``), ``(B, m, m)`` (C-contiguous)."""
        m = self.n_models
        flat = np.asarray(self.lap_t @ np.atleast_2d(v).T)  # (m², B)
        return np.ascontiguousarray(flat.T).reshape(-1, m, m)

    def hessian(self, theta: np.ndarray, n: np.ndarray, reg: float) -> np.ndarray:
        """``∇²L`` for every row of ``theta``, ``(B, m, m)``."""
        p = expit(self.eta(theta))
        p *= 1.0 - p
        p *= n
        p *= ALPHA**2
        h = self.laplacian(p)
        if reg:
            np.einsum("bii->bi", h)[...] += reg
        return h


def newton_steps(h: np.ndarray, g: np.ndarray, reg: float) -> np.ndarray:
    """``Δ = H⁻¹ g`` per fit; without a penalty ``H + h 𝟙𝟙ᵀ/m`` (module docstring; ``h`` is updated in place).
    Singular systems give NaN."""
    m = h.shape[-1]
    if not reg and m:
        scale = np.trace(h, axis1=1, axis2=2) / m
        h += (np.where(scale > 0, scale, 1.0) / m)[:, None, None]
    try:
        return np.linalg.solve(h, g[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        out = np.full_like(g, np.nan)
        for j in range(g.shape[0]):
            try:
                out[j] = np.linalg.solve(h[j], g[j])
            except np.linalg.LinAlgError:
                continue
        return out


def fit_pairs(
    stats: PairStats,
    n: np.ndarray,
    s: np.ndarray,
    *,
    reg: float = 0.0,
    theta0: np.ndarray | None = None,
    xtol: float = XTOL,
    gtol: float = GTOL,
    max_iter: int = MAX_ITER,
) -> tuple[np.ndarray, NewtonReport]:
    """Minimise ``L`` (module docstring) for every row of ``n``, ``s`` (``(B, pairs)``): ``(θ (B, m), report)``.

    Starts from ``theta0`` (broadcast; default 0). A fit that has not converged keeps its last finite iterate
    and ``converged = False``; the caller decides (the leaderboard raises). BLAS is held to one thread: the
    ``m × m`` systems are small, and a multi-threaded BLAS mostly waits on its own threads there.
    """
    with one_blas_thread():
        return _fit_pairs(stats, n, s, reg, theta0, xtol, gtol, max_iter)


def _fit_pairs(
    stats: PairStats, n: np.ndarray, s: np.ndarray, reg: float, theta0: np.ndarray | None, xtol: float, gtol: float,
    max_iter: int,
) -> tuple[np.ndarray, NewtonReport]:
    n, s = np.atleast_2d(n), np.atleast_2d(s)
    n_fits, m = n.shape[0], stats.n_models
    theta = np.zeros((n_fits, m)) if theta0 is None else np.array(np.broadcast_to(theta0, (n_fits, m)), dtype=float)
    iters = np.zeros(n_fits, dtype=np.int64)
    gnorm = np.full(n_fits, np.inf)
    stepn = np.full(n_fits, np.inf)
    done = np.zeros(n_fits, dtype=bool)
    gscale = gtol * np.maximum(1.0, n.sum(axis=1))
    active = np.arange(n_fits)
    for _ in range(max_iter):
        if active.size == 0:
            break
        th, nn, ss = theta[active], n[active], s[active]
        g = stats.gradient(th, nn, ss, reg)
        delta = newton_steps(stats.hessian(th, nn, reg), g, reg)
        gn, dn = np.max(np.abs(g), axis=1, initial=0.0), np.max(np.abs(delta), axis=1, initial=0.0)
        finite = np.isfinite(gn) & np.isfinite(dn)
        conv = finite & (dn <= xtol) & (gn <= gscale[active])
        new = th - delta
        search = finite & ~conv
        if search.any():
            loss0 = stats.loss(th[search], nn[search], ss[search], reg)
            sub_new, t = new[search], np.ones(int(search.sum()))
            loss1 = stats.loss(sub_new, nn[search], ss[search], reg)
            for _ in range(40):
                bad = ~(loss1 <= loss0 + 1e-12 * np.abs(loss0))
                if not bad.any():
                    break
                t[bad] *= 0.5
                sub_new[bad] = th[search][bad] - t[bad, None] * delta[search][bad]
                loss1[bad] = stats.loss(sub_new[bad], nn[search][bad], ss[search][bad], reg)
            new[search] = sub_new
        theta[active[finite]] = new[finite]
        iters[active] += 1
        gnorm[active], stepn[active] = gn, dn
        done[active[conv]] = True
        active = active[search]
    return theta, NewtonReport(iters, gnorm, stepn, done)

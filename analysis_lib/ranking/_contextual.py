r"""Newton for contextual Bradley–Terry on battle rows, sparse in the ratings, batched over bootstrap rounds.

Model. Parameters ``θ = (r, β)``: ratings ``r ∈ ℝ^m`` (log10-odds) and coefficients ``β ∈ ℝ^k`` on battle-level
features ``z_i`` (e.g. z-scored style differences). For battle ``i`` between ``a_i`` and ``b_i`` with outcome
``y_i`` for ``a_i`` and weight ``w_i`` (1, or a bootstrap round's multinomial count),

    η_i = α (r_{a_i} − r_{b_i}) + z_iᵀ β,          x_i = (α (e_{a_i} − e_{b_i}), z_i),   α = ln 10,
    L(θ) = Σ_i w_i [ softplus(η_i) − y_i η_i ] + (reg/2) ‖θ‖²,
    ∇L   = Σ_i w_i (p_i − y_i) x_i + reg θ,            p_i = σ(η_i),
    ∇²L  = Σ_i v_i x_i x_iᵀ + reg I,                   v_i = w_i p_i (1 − p_i).

The Hessian is assembled block by block without the dense design: the rating block ``α² Dᵀ diag(v) D`` is a
graph Laplacian over the models (the ``v_i`` summed per unordered pair, then four entries per pair), the cross
block ``α Dᵀ (v ∘ Z)`` takes two entries per battle, the feature block is ``Zᵀ (v ∘ Z)``; ``D`` (battles × models,
+1 at ``a``, −1 at ``b``) is a sparse matrix with two entries per row. Without a penalty the rating block has
``𝟙`` in its null space (the cross block too: ``𝟙ᵀ Dᵀ = 0``); the Newton system then gets ``h 𝟙_r𝟙_rᵀ/m`` on the
rating block, so every step keeps ``Σ r`` fixed (0 from the default start).

Full-data fit: Newton with step halving from 0. Bootstrap rounds: started at the full-data optimum ``θ̂`` and
iterated with the one full-data Hessian ``H₀ = ∇²L(θ̂)`` (a chord / frozen-Hessian Newton iteration,
``θ ← θ − H₀⁻¹ ∇L_b(θ)``): each iteration costs one gradient for a whole chunk of rounds, and the fixed point is
each round's exact optimum because the gradient is exact; resampling moves the Hessian little, so the contraction
is fast. A round has converged when ``max |Δ| ≤ xtol`` and ``‖∇L_b‖∞ ≤ gtol · max(1, Σ w)``; a round that has
not after ``chord_iter`` iterations (or that turned non-finite) is refitted by exact Newton from its best
finite iterate. NaN or inf never counts as converged.

**How ``reg`` differs from arena-rank's.** ``arena-rank``'s ``ContextualBradleyTerry`` minimises the *mean*
weighted negative log-likelihood plus ``reg/2 ‖β‖²`` (default ``reg = 1.0``) and penalises the feature
coefficients only. Here, as in the Search Arena authors' code, the loss is the *sum* over battles and the penalty
``reg/2 ‖θ‖²`` covers the ratings and the coefficients alike (the Search Arena layer uses ``reg = 0.5``).
Since ``Σ_i = n · mean_i``, our loss is ``n`` times arena-rank's objective with ``reg_ar = reg / n`` applied to
``θ = (r, β)``: one unit of our ``reg`` weighs ``n`` times less against the data than one unit of arena-rank's
(``n`` = battles in the fit), and it also shrinks the ratings (in log10-odds units) toward 0, which arena-rank's
does not. With a penalty the ratings of the optimum sum to zero (the data part of the gradient is ``⟂ 𝟙``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import sparse
from scipy.special import expit

from analysis_lib.ranking import _sorted as sb
from analysis_lib.ranking._blas import THREADS, one_blas_thread
from analysis_lib.ranking._bootstrap import (
    CONTEXTUAL_CHUNK_CELLS,
    ChunkResult,
    _chunk_size,
    _no_mle_error,
    _run,
    _threads,
    count_chunks,
    draw_round,
    ridge_outside,
    round_draws,
)
from analysis_lib.ranking._intervals import invert
from analysis_lib.ranking._newton import GTOL, MAX_ITER, XTOL, NewtonReport, PairStats, check_converged
from analysis_lib.ranking._pairs import ALPHA
from analysis_lib.ranking.features import Convention, style_features
from analysis_lib.ranking.graph import mle_exists

CHORD_ITER = 30


@dataclass(frozen=True)
class ContextualDesign:
    """Battle rows of a contextual fit: side indices ``a``, ``b``, features ``z`` (``(n, k)``), outcomes ``y``.

    Arrays over battles and fits are battle-major, ``(battles, B)``: one column per fit (bootstrap round), so that
    ``Dθ_r`` and ``Zβ`` are one sparse product and one matrix product for all fits at once.
    """

    n_models: int
    a: np.ndarray
    b: np.ndarray
    z: np.ndarray
    y: np.ndarray
    inc: sparse.csr_matrix  # (battles, models): D, +1 at a, −1 at b
    inc_t: sparse.csr_matrix  # (models, battles): Dᵀ
    pairs: PairStats  # unordered pairs, for the Laplacian of the rating block

    @classmethod
    def build(cls, pairs: np.ndarray, z: np.ndarray, y: np.ndarray, n_models: int) -> ContextualDesign:
        a, b = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)
        n = len(a)
        inc = sparse.csr_matrix(
            (np.concatenate([np.ones(n), -np.ones(n)]), (np.tile(np.arange(n), 2), np.concatenate([a, b]))),
            shape=(n, n_models),
        )
        z = np.ascontiguousarray(np.asarray(z, dtype=float).reshape(n, -1))
        y = np.asarray(y, dtype=float)
        stats = PairStats.from_rows(np.column_stack([a, b]), y, n_models)
        return cls(n_models, a, b, z, y, inc, inc.T.tocsr(), stats)

    @property
    def n_params(self) -> int:
        return self.n_models + self.z.shape[1]

    def eta(self, theta: np.ndarray) -> np.ndarray:
        """``(battles, B)`` linear predictors ``α D r + Z β`` for every row of ``theta`` (``(B, m + k)``)."""
        m = self.n_models
        out = self.z @ theta[:, m:].T
        out += ALPHA * np.asarray(self.inc @ np.ascontiguousarray(theta[:, :m].T))
        return out

    def loss(self, theta: np.ndarray, w: np.ndarray, reg: float) -> np.ndarray:
        """``L`` for every row of ``theta``; ``w`` is ``(battles, B)``."""
        eta = self.eta(theta)
        return np.sum(w * (np.logaddexp(0.0, eta) - self.y[:, None] * eta), axis=0) + 0.5 * reg * np.sum(
            theta**2, axis=1
        )

    def score_sum(self, res: np.ndarray) -> np.ndarray:
        """``Σ_i res_ib x_i`` for every column of ``res`` (``(battles, B)``): ``(B, m + k)``."""
        return np.hstack([ALPHA * np.asarray(self.inc_t @ res).T, (self.z.T @ res).T])

    def gradient(self, theta: np.ndarray, w: np.ndarray, reg: float) -> np.ndarray:
        """``∇L`` for every row of ``theta`` with the matching column of ``w`` (``(battles, B)``)."""
        return self.score_sum(w * (expit(self.eta(theta)) - self.y[:, None])) + reg * theta

    def rating_blocks(self, v: np.ndarray) -> np.ndarray:
        """``α² Dᵀ diag(v_b) D`` for every column of ``v`` (``(battles, B)``): ``(B, m, m)``."""
        return ALPHA**2 * self.pairs.laplacian(np.asarray(self.pairs.fold @ v).T)

    def outer_sum(self, v: np.ndarray) -> np.ndarray:
        """``Σ_i v_i x_i x_iᵀ`` for one weight vector ``v`` (``(battles,)``): the ``(m + k)²`` block matrix."""
        m, k = self.n_models, self.z.shape[1]
        out = np.empty((m + k, m + k))
        out[:m, :m] = self.rating_blocks(v[:, None])[0]
        vz = v[:, None] * self.z
        cross = ALPHA * np.asarray(self.inc_t @ vz)
        out[:m, m:] = cross
        out[m:, :m] = cross.T
        out[m:, m:] = self.z.T @ vz
        return out

    def hessian(self, theta: np.ndarray, w: np.ndarray, reg: float) -> np.ndarray:
        """``∇²L`` at one ``theta`` (``(m + k,)``) with weights ``w`` (``(battles,)``)."""
        p = expit(self.eta(theta[None, :]))[:, 0]
        h = self.outer_sum(w * p * (1.0 - p))
        if reg:
            h[np.diag_indices_from(h)] += reg
        return h

    def solvable(self, h: np.ndarray, reg: float) -> np.ndarray:
        """``h`` (``(…, m + k, m + k)``) with ``h̄ 𝟙_r𝟙_rᵀ/m`` added to the rating block when there is no penalty
        (module docstring)."""
        if reg or self.n_models == 0:
            return h
        m = self.n_models
        h = h.copy()
        scale = np.trace(h[..., :m, :m], axis1=-2, axis2=-1) / m
        h[..., :m, :m] += (np.where(scale > 0, scale, 1.0) / m)[..., None, None]
        return h


def newton(
    design: ContextualDesign,
    w: np.ndarray,
    reg: float,
    theta0: np.ndarray | None = None,
    *,
    xtol: float = XTOL,
    gtol: float = GTOL,
    max_iter: int = MAX_ITER,
) -> tuple[np.ndarray, NewtonReport]:
    """Exact Newton with step halving for one weight vector ``w``: ``(θ, report)`` (report of one fit).

    BLAS is held to one thread: the products here are skinny (battles × features), where a multi-threaded BLAS
    mostly waits on its own threads."""
    with one_blas_thread():
        return _newton(design, w, reg, theta0, xtol=xtol, gtol=gtol, max_iter=max_iter)


def _newton(
    design: ContextualDesign, w: np.ndarray, reg: float, theta0: np.ndarray | None, *, xtol: float, gtol: float,
    max_iter: int,
) -> tuple[np.ndarray, NewtonReport]:
    theta = np.zeros(design.n_params) if theta0 is None else np.array(theta0, dtype=float)
    w2 = w[:, None]
    gscale = gtol * max(1.0, float(w.sum()))
    gn = dn = np.inf
    it = 0
    converged = False
    # η at the current θ is kept from the line search that accepted it: one pass over the battles for η per
    # iteration (the values are those of design.gradient / design.hessian / design.loss, computed once)
    eta = design.eta(theta[None, :])[:, 0]
    loss0 = _loss_at(design, eta, theta, w, reg)
    for it in range(1, max_iter + 1):
        prob = expit(eta)
        g = design.score_sum((w * (prob - design.y))[:, None])[0] + reg * theta
        h = design.outer_sum(w * prob * (1.0 - prob))
        if reg:
            h[np.diag_indices_from(h)] += reg
        try:
            delta = np.linalg.solve(design.solvable(h, reg), g)
        except np.linalg.LinAlgError:
            delta = np.full_like(g, np.nan)
        gn, dn = float(np.max(np.abs(g), initial=0.0)), float(np.max(np.abs(delta), initial=0.0))
        if not (np.isfinite(gn) and np.isfinite(dn)):
            break
        if dn <= xtol and gn <= gscale:
            theta = theta - delta
            converged = True
            break
        t = 1.0
        for _ in range(40):
            new = theta - t * delta
            eta = design.eta(new[None, :])[:, 0]
            loss1 = _loss_at(design, eta, new, w, reg)
            if loss1 <= loss0 + 1e-12 * abs(loss0):
                break
            t *= 0.5
        theta, loss0 = new, loss1
    del w2
    report = NewtonReport(np.array([it]), np.array([gn]), np.array([dn]), np.array([converged]))
    return theta, report


def _loss_at(design: ContextualDesign, eta: np.ndarray, theta: np.ndarray, w: np.ndarray, reg: float) -> float:
    """``L`` of :meth:`ContextualDesign.loss` from the linear predictors ``eta`` of ``theta``."""
    return float(np.sum(w * (np.logaddexp(0.0, eta) - design.y * eta)) + 0.5 * reg * np.sum(theta**2))


def chord_rounds(
    design: ContextualDesign,
    w: np.ndarray,
    theta_hat: np.ndarray,
    h0: np.ndarray,
    reg: float,
    *,
    xtol: float = XTOL,
    gtol: float = GTOL,
    chord_iter: int = CHORD_ITER,
) -> tuple[np.ndarray, NewtonReport]:
    """Bootstrap rounds (rows of ``w``, ``(B, battles)``) from ``θ̂``, exact Newton for stragglers (module
    docstring): ``(θ (B, m + k), report)``.

    Each iteration uses ``h0`` (the full-data Hessian, with the penalty) with its rating block replaced by the
    round's own at the current iterate, ``α² Dᵀ diag(w ∘ p ∘ (1 − p)) D + reg I`` (a Laplacian over the pairs,
    cheap to assemble from the same ``p`` as the gradient): resampling moves that block most (rare pairs), while
    the cross and feature blocks are averages over all battles and barely move.
    """
    n_rounds, p, m = w.shape[0], design.n_params, design.n_models
    w_cols = np.ascontiguousarray(w.T)
    theta = np.array(np.broadcast_to(theta_hat, (n_rounds, p)))
    iters = np.zeros(n_rounds, dtype=np.int64)
    gnorm, stepn = np.full(n_rounds, np.inf), np.full(n_rounds, np.inf)
    done = np.zeros(n_rounds, dtype=bool)
    gscale = gtol * np.maximum(1.0, w.sum(axis=1))
    active = np.arange(n_rounds)
    y = design.y[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(chord_iter):
            if active.size == 0:
                break
            wa = w_cols if active.size == n_rounds else w_cols[:, active]
            prob = design.eta(theta[active])
            expit(prob, out=prob)
            res = prob - y
            res *= wa
            g = design.score_sum(res) + reg * theta[active]
            res[:] = prob
            prob -= 1.0
            prob *= res
            prob *= -wa  # v = w p (1 − p)
            h = np.array(np.broadcast_to(h0, (active.size, p, p)))
            h[:, :m, :m] = design.rating_blocks(prob) + reg * np.eye(m)
            try:
                delta = np.linalg.solve(design.solvable(h, reg), g[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                delta = np.full_like(g, np.nan)
            gn, dn = np.max(np.abs(g), axis=1), np.max(np.abs(delta), axis=1)
            finite = np.isfinite(gn) & np.isfinite(dn)
            conv = finite & (dn <= xtol) & (gn <= gscale[active])
            theta[active[finite]] -= delta[finite]
            iters[active] += 1
            gnorm[active], stepn[active] = gn, dn
            done[active[conv]] = True
            active = active[finite & ~conv]
    for j in np.flatnonzero(~done):
        start = theta[j] if np.isfinite(theta[j]).all() else theta_hat
        theta[j], rep = newton(design, w[j], reg, start, xtol=xtol, gtol=gtol)
        iters[j] += rep.iterations[0]
        gnorm[j], stepn[j], done[j] = rep.grad_norm[0], rep.step[0], rep.converged[0]
    return theta, NewtonReport(iters, gnorm, stepn, done)


def bootstrap_battles(
    design: ContextualDesign,
    models: tuple[str, ...],
    theta_hat: np.ndarray,
    rounds: int,
    seed: int,
    *,
    reg: float,
    ridge: float | None = None,
    progress: bool | None = None,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, NewtonReport]:
    """``(θ per round (rounds, m + k), models set by the ridge per round (rounds, m), report)`` for contextual BT:
    battles resampled, rounds from ``theta_hat`` by the block-updated chord iteration (:func:`chord_rounds`)."""
    n = len(design.y)
    threads = _threads(threads, rounds, n)
    sides = np.column_stack([design.a, design.b])
    h0 = design.hessian(theta_hat, np.ones(n), reg)

    def fit_chunk(start: int, w: np.ndarray) -> ChunkResult:
        theta = np.empty((w.shape[0], design.n_params))
        exists = np.ones(w.shape[0], dtype=bool) if reg else mle_exists(sides, design.y, len(models), w)
        if not exists.all():
            if ridge is None:
                raise _no_mle_error(models, sides, design.y, w, exists, start, rounds)
            for j in np.flatnonzero(~exists):
                theta[j], rep_r = newton(design, w[j], ridge, theta_hat)
                check_converged(rep_r, "bootstrap (ridge)")
        theta[exists], rep = chord_rounds(design, w[exists], theta_hat, h0, reg)
        check_converged(rep, "bootstrap")
        return theta, ridge_outside(models, sides, design.y, w, exists), rep

    chunk = _chunk_size(rounds, n, threads, CONTEXTUAL_CHUNK_CELLS, design.n_params)
    weights = count_chunks(n, rounds, seed, None, chunk)
    return _run(weights, fit_chunk, rounds, design.n_params, len(models), progress, threads)




def bootstrap_sorted(
    battles: sb.SortedBattles,
    models: tuple[str, ...],
    theta_hat: np.ndarray,
    rounds: int,
    seed: int,
    *,
    reg: float,
    ridge: float | None = None,
    progress: bool | None = None,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, NewtonReport]:
    """As :func:`bootstrap_battles`, at arena scale (module docstring): each round drawn, by the thread that fits
    it, as uniform indices over the sorted battles from its own generator (:func:`round_draws`: the rounds do not
    depend on ``threads``), and fitted on the battles it drew
    (:func:`~analysis_lib.ranking._sorted.fit_round`) from ``theta_hat``; one round per task, ``threads``
    rounds at once."""
    n = len(battles.y)
    threads = THREADS if threads is None else threads
    full = battles.full()
    with one_blas_thread():
        p_hat, h0 = sb.hessian_at(full, theta_hat, threads)
    h0[np.diag_indices_from(h0)] += reg
    sides = battles.sides() if not reg else np.zeros((0, 2), dtype=np.int64)  # for the MLE checks only

    def fit_one(start: int, seq: np.random.SeedSequence) -> ChunkResult:
        w = draw_round(n, seq)[None, :]
        exists = np.ones(1, dtype=bool) if reg else mle_exists(sides, battles.y, len(models), w)
        if not exists[0] and ridge is None:
            raise _no_mle_error(models, sides, battles.y, w, exists, start, rounds)
        if exists[0]:
            theta, rep = sb.fit_round(battles, w[0], theta_hat, h0, p_hat, reg)
        else:
            assert ridge is not None
            theta, rep = sb.fit(battles.block(w[0]), ridge, theta_hat)
        check_converged(rep, "bootstrap (ridge)" if not exists[0] else "bootstrap")
        return theta[None, :], ridge_outside(models, sides, battles.y, w, exists), rep

    seeds = iter(enumerate(round_draws(rounds, seed)))
    return _run(seeds, fit_one, rounds, battles.n_params, len(models), progress, threads)


def sandwich_contextual(
    design: ContextualDesign | sb.Block, theta: np.ndarray, *, reg: float = 0.0, hessian_reg: float = 0.0
) -> np.ndarray:
    """``H⁻¹ G H⁻¹`` (module docstring) of a contextual fit ``theta = (r, β)`` on the battles of ``design`` (each
    weight 1): an ``(m + k, m + k)`` covariance (ratings in log10-odds, coefficients per unit of ``z``). At arena
    scale ``design`` is the full :class:`~analysis_lib.ranking._sorted.Block` of the fit (the battles
    sorted by pair and oriented: the same sums, one pass each for ``H`` and ``G``)."""
    with one_blas_thread():  # skinny battles × features products
        return _sandwich_contextual(design, theta, reg, hessian_reg)


def _sandwich_contextual(design: ContextualDesign | sb.Block, theta: np.ndarray, reg: float,
                         hessian_reg: float) -> np.ndarray:
    m, total = design.n_models, float(len(design.y))
    scale = np.concatenate([np.full(m, ALPHA**2), np.ones(design.n_params - m)])
    if isinstance(design, ContextualDesign):
        p = expit(design.eta(theta[None, :])[:, 0])
        h = design.outer_sum(p * (1.0 - p))
        g = design.outer_sum((design.y - p) ** 2)
    else:  # arena scale: both sums in one pass over the battles, split over the threads
        h, g = sb.sandwich_sums(design, theta, THREADS)
    h[np.diag_indices_from(h)] += reg + hessian_reg * total * scale
    if reg:
        g -= np.outer(reg * theta, reg * theta) / total
    h_inv = invert(h, m, ridge_free=not (reg or hessian_reg))
    return h_inv @ g @ h_inv


#: Contextual fits with at least this many battles take the arena-scale path (:mod:`~analysis_lib.ranking._sorted`).
LARGE_BATTLES = 200_000


class ContextualProblem:
    """Contextual BT on checked battles (``model_a``, ``model_b``, ``y``, ``<f>_a``, ``<f>_b``), laid out once:
    the one interface of both solvers, with the size switch here. Below :data:`LARGE_BATTLES` battles the
    features are the ``(n, k)`` z-scores of :func:`~analysis_lib.ranking.features.style_features` on a
    :class:`ContextualDesign` (Newton, then chord rounds over chunks of bootstrap draws); from that size on the
    battles are sorted by pair and oriented (:class:`~analysis_lib.ranking._sorted.SortedBattles`; split passes
    on :data:`~analysis_lib.ranking._blas.THREADS` threads, one bootstrap round per task, its own seed per round).

    ``constant``: the features with zero spread (``z = 0``); without a penalty they are left out of the fit (their
    coefficients are not identified), with one they stay in (``keep``)."""

    def __init__(self, frame: pl.DataFrame, features: Sequence[str], convention: Convention,
                 models: tuple[str, ...], pairs: np.ndarray, y: np.ndarray, reg: float):
        self.models, self.pairs, self.y = models, pairs, y
        self.large = frame.height >= LARGE_BATTLES
        m = len(models)
        if self.large:
            battles, sd = sb.SortedBattles.from_frame(frame, pairs, y, features, convention, m, THREADS)
            self.constant = ~(sd > 0)
        else:
            z, _ = style_features(frame, features, convention)
            self.constant = ~(z != 0).any(axis=0)  # zero spread: style_features sets z = 0
        self.keep = ~self.constant if not reg else np.ones(len(features), dtype=bool)
        if self.large:
            self._battles = battles.keep_features(self.keep)
            self._full = self._battles.full()
        else:
            self._design = ContextualDesign.build(pairs, z[:, self.keep], y, m)

    def fit(self, penalty: float) -> tuple[np.ndarray, NewtonReport]:
        """The full-data fit with ``penalty/2 ‖θ‖²`` (θ over the kept features)."""
        if self.large:
            with one_blas_thread():  # the passes run on THREADS threads, each with one BLAS thread
                return sb.fit(self._full, penalty, threads=THREADS)
        return newton(self._design, np.ones(len(self.y)), penalty)

    def bootstrap(self, theta: np.ndarray, rounds: int, seed: int, *, reg: float, ridge: float,
                  progress: bool | None) -> tuple[np.ndarray, np.ndarray, NewtonReport]:
        """``(θ per round, models set by the ridge per round, report)`` (:func:`bootstrap_battles`,
        :func:`bootstrap_sorted`)."""
        if self.large:
            return bootstrap_sorted(self._battles, self.models, theta, rounds, seed, reg=reg, ridge=ridge,
                                    progress=progress)
        return bootstrap_battles(self._design, self.models, theta, rounds, seed, reg=reg, ridge=ridge,
                                 progress=progress)

    def sandwich(self, theta: np.ndarray, penalty: float, hessian_reg: float) -> np.ndarray:
        """The sandwich covariance of the full-data fit (:func:`sandwich_contextual`)."""
        return sandwich_contextual(self._full if self.large else self._design, theta, reg=penalty,
                                   hessian_reg=hessian_reg)

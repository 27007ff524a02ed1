r"""Contextual Bradley–Terry at arena scale: battles sorted by pair, oriented ``lo → hi``, fitted on compact blocks.

The model and loss are those of :mod:`~analysis_lib.ranking._contextual` (``η_i = α (r_{a_i} − r_{b_i}) +
z_iᵀβ``, ``L = Σ_i w_i [softplus(η_i) − y_i η_i] + (reg/2) ‖θ‖²``). For millions of battles the work is laid
out once so that every pass over the battles is a contiguous array operation:

- **Orientation.** A battle with ``a > b`` is written from the other side: ``(a, b, z, y) → (b, a, −z, 1 − y)``,
  which leaves ``softplus(η) − y η`` unchanged (``softplus(−η) − (1 − y)(−η) = softplus(η) − y η``). Every
  battle then has ``a = lo < b = hi`` and ``x_i = (α (e_lo − e_hi), z_i)``: no per-battle sign.
- **Order.** Battles are sorted by pair (stable, so a pair keeps its battles' order), so a pair's battles form
  one segment: the rating part of ``η`` is ``α (r_lo − r_hi)`` repeated over the segment, and every per-pair
  sum (gradient, Laplacian, cross block) is one ``np.add.reduceat`` over the segments.
- **Blocks.** A fit sees a :class:`Block`: the battles with positive weight, gathered once (a bootstrap round
  draws about 63% of them), with their weights, features (feature-major ``(k, n)``: both products
  ``Zβ`` and ``Zᵀres`` then read contiguous rows), outcomes and segments.
- **Threads.** The layout is computed once from the sides (:class:`Layout`) and the style features are built
  directly in it, one feature per task (:meth:`SortedBattles.from_frame`). The passes over all battles (the
  full-data fit, the bootstrap's start Hessian, the sandwich's two sums) split the battles at pair boundaries
  into :data:`PARTS` parts run on threads (:class:`Passes`: numpy releases the GIL in the array work), each sum
  the sum of the parts' sums, in order: the results do not depend on the number of threads. Bootstrap rounds
  run one per thread (:func:`~analysis_lib.ranking._contextual.bootstrap_sorted`).

On a block, for weights ``w`` and ``p = σ(η)``:

    ∇L  = (α (Σ_lo R − Σ_hi R), Zᵀ (w ∘ (p − y))) + reg θ,   R_k = Σ_{i∈k} w_i (p_i − y_i)  (per pair k),
    ∇²L = [[α² Σ_k V_k (e_lo − e_hi)(e_lo − e_hi)ᵀ, α Σ_k (e_lo − e_hi) C_kᵀ], [·ᵀ, Zᵀ diag(v) Z]] + reg I,
          v_i = w_i p_i (1 − p_i),  V_k = Σ_{i∈k} v_i,  C_k = Σ_{i∈k} v_i z_i.

Without a penalty the rating block has ``𝟙`` in its null space; the Newton system then gets ``h̄ 𝟙𝟙ᵀ/m`` on the
rating block (as in :mod:`~analysis_lib.ranking._contextual`), so steps keep ``Σ r`` fixed.

Full-data fit (:func:`fit`): Newton with step halving from 0 (or a given start), the exact Hessian every
iteration until a step is below :data:`KEEP_HESSIAN` (then that Hessian is kept), stopped when
``max |Δ| ≤ xtol`` and ``‖∇L‖∞ ≤ gtol · max(1, Σ w)`` (the tolerances of :mod:`~analysis_lib.ranking._newton`).
Bootstrap round (:func:`fit_round`): from the full-data optimum ``θ̂``, where ``p = p̂`` needs no ``η``; the
first step uses the full-data Hessian ``H₀`` with the round's own rating block, the second the round's exact
Hessian, later ones keep that Hessian (a chord iteration started next to the optimum, where the Hessian has
stopped moving). A round stops when ``‖∇L_b‖∞ ≤ gtol · max(1, Σ w)`` and the
step met ``xtol`` or, from the third iteration on, when the error left after the step, estimated from the
steps' contraction ``ρ = ‖Δ_k‖/‖Δ_{k−1}‖ < 1/2`` as ``ρ ‖Δ_k‖/(1 − ρ)``, is at most ``xtol`` (at 1.6M
battles, 130 models and 8 features: three iterations, the last step ~1e-7 and the error left ~1e-11, where
the step rule alone needs a fourth pass to see a step below ``xtol``). Each iteration is two passes over the
features and a few over the battles. A round that has not converged after ``chord_iter`` iterations is
finished by :func:`fit` from its last finite iterate. NaN never counts as converged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np
import polars as pl
from scipy.special import expit

from analysis_lib.ranking._newton import GTOL, MAX_ITER, XTOL, NewtonReport
from analysis_lib.ranking._pairs import ALPHA
from analysis_lib.ranking.features import Convention, sorted_style_features

CHORD_ITER = 30
#: :func:`fit` keeps its Hessian once a step is below this (log10-odds): the iterate is then so close to the optimum
#: that the Hessian no longer moves, and each further step gains as many digits as a new Hessian would.
KEEP_HESSIAN = 1e-3
#: Parts the passes over all battles (full-data fit, start Hessian, sandwich) are split into, whatever the threads.
PARTS = 2
_SCRATCH = threading.local()


def scratch(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A C-contiguous float array of ``shape``, kept per thread and ``name`` and reused (its contents undefined):
    a fresh array of tens of MB costs a page fault per 4 KB on every round."""
    size = int(np.prod(shape))
    buf = getattr(_SCRATCH, name, None)
    if buf is None or buf.size < size:
        raw = np.empty(size + 8)  # aligned to 64 bytes: BLAS sums then do not depend on where the buffer lies
        start = (-raw.ctypes.data % 64) // 8
        buf = raw[start:start + size]
        setattr(_SCRATCH, name, buf)
    return buf[:size].reshape(shape)


@dataclass(frozen=True)
class Layout:
    """The orientation and order of the battles (module docstring), computed once from their sides: ``order``
    (input row at each sorted position), ``sign`` (−1 where the battle was flipped, per sorted position), the
    sorted pair keys ``lo · m + hi`` and each battle's pair."""

    n_models: int
    order: np.ndarray
    sign: np.ndarray
    key: np.ndarray
    pair: np.ndarray

    @classmethod
    def of(cls, pairs: np.ndarray, n_models: int) -> Layout:
        """From input sides ``pairs`` (``(n, 2)``); self-battles are refused (no information on the ratings)."""
        a, b = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)
        if (a == b).any():
            raise ValueError(f"{int((a == b).sum())} self-battles (a = b) in a contextual design")
        flip = a > b
        key = np.where(flip, b, a) * n_models + np.where(flip, a, b)
        # a stable sort of 16-bit keys is a radix sort in numpy (130 models: 16,900 keys)
        order = np.argsort(key.astype(np.uint16) if n_models**2 <= 65536 else key, kind="stable")
        key_s = key[order]
        new = key_s[1:] != key_s[:-1]
        pair = np.zeros(key_s.size, dtype=np.int64)
        np.cumsum(new, out=pair[1:])
        return cls(n_models, order, np.where(flip[order], -1.0, 1.0), key_s, pair)

    def battles(self, zt: np.ndarray, y: np.ndarray) -> SortedBattles:
        """:class:`SortedBattles` from features already in this layout (``(k, n)``, sorted and oriented) and the
        input outcomes ``y``."""
        m, key = self.n_models, self.key
        first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if key.size else np.zeros(0, int)
        ys = np.asarray(y, dtype=float)[self.order]
        yo = np.where(self.sign > 0, ys, 1.0 - ys)
        return SortedBattles(m, self.order, key[first] // m, key[first] % m, self.pair,
                             np.concatenate([first, [key.size]]).astype(np.int64), zt, yo)


@dataclass(frozen=True)
class SortedBattles:
    """All battles of a contextual fit, oriented ``lo → hi`` and sorted by pair (module docstring).

    ``order[i]``: the input row at sorted position ``i``; ``pair[i]``: its pair (index into ``lo``, ``hi``);
    ``zt``/``y``: oriented features (``(k, n)``) and outcomes."""

    n_models: int
    order: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    pair: np.ndarray
    starts: np.ndarray  # (pairs + 1,): segment of pair k is starts[k]:starts[k + 1]
    zt: np.ndarray
    y: np.ndarray

    @classmethod
    def build(cls, pairs: np.ndarray, z: np.ndarray, y: np.ndarray, n_models: int) -> SortedBattles:
        """From input sides ``pairs`` (``(n, 2)``), features ``z`` (``(n, k)``) and outcomes ``y`` for ``a``.
        Self-battles are refused (they carry no information on the ratings)."""
        lay = Layout.of(pairs, n_models)
        z = np.asarray(z, dtype=float).reshape(len(lay.order), -1)
        zt = np.empty((z.shape[1], len(lay.order)))  # (k, n), C-contiguous
        for j in range(z.shape[1]):
            np.take(z[:, j], lay.order, out=zt[j], mode="clip")
            zt[j] *= lay.sign
        return lay.battles(zt, y)

    @classmethod
    def from_frame(cls, frame: pl.DataFrame, pairs: np.ndarray, y: np.ndarray, features: Sequence[str],
                   convention: Convention, n_models: int, threads: int = 1) -> tuple[SortedBattles, np.ndarray]:
        """``(battles, SD of each feature's d)`` from checked battles with the columns ``<f>_a``, ``<f>_b``: the
        style features of :func:`~analysis_lib.ranking.features.style_features` built directly in this layout
        (:func:`~analysis_lib.ranking.features.sorted_style_features`, one feature per task on ``threads``)."""
        lay = Layout.of(pairs, n_models)
        zt, sd = sorted_style_features(frame, features, convention, lay.order, lay.sign, threads)
        return lay.battles(zt, y), sd

    def keep_features(self, keep: np.ndarray) -> SortedBattles:
        """The same battles with the features where ``keep`` is true (a copy of those rows when one is dropped)."""
        return self if keep.all() else replace(self, zt=np.ascontiguousarray(self.zt[keep]))

    @property
    def n_params(self) -> int:
        return self.n_models + self.zt.shape[0]

    def sides(self) -> np.ndarray:
        """``(n, 2)``: ``(lo, hi)`` of every sorted battle; with :attr:`y` the same beat graph as the input's sides
        and outcomes (for the MLE checks of :mod:`~analysis_lib.ranking.graph`)."""
        return np.column_stack([self.lo[self.pair], self.hi[self.pair]])

    def full(self) -> Block:
        """Every battle with weight 1 (no copy of the features)."""
        q = self.lo.size
        return Block(self.n_models, self.lo, self.hi, self.starts[:-1], np.diff(self.starts), np.ones(len(self.y)),
                     self.y, self.zt, np.arange(q), np.arange(len(self.y)))

    def block(self, w: np.ndarray) -> Block:
        """The battles with ``w > 0`` (``w`` over sorted positions), gathered (the features into this thread's
        :func:`scratch` array: the block is valid until the thread's next block)."""
        idx = np.flatnonzero(w)
        cut = np.searchsorted(idx, self.starts)  # segment of pair k in the block: cut[k]:cut[k + 1]
        lens = np.diff(cut)
        keep = np.flatnonzero(lens)
        # mode="clip" (idx is in range): with out= and numpy's default mode="raise", take buffers its output
        zt = np.take(self.zt, idx, axis=1, out=scratch("block", (self.zt.shape[0], idx.size)), mode="clip")
        return Block(self.n_models, self.lo[keep], self.hi[keep], cut[:-1][keep], lens[keep],
                     w[idx].astype(float, copy=False), self.y[idx], zt, keep, idx)


@dataclass(frozen=True)
class Block:
    """Battles of one fit (module docstring): segments ``starts``/``lens`` of the pairs ``lo``/``hi`` present,
    weights ``w``, outcomes ``y``, features ``zt`` (``(k, n)``); ``pairs``/``idx``: the pairs and sorted positions
    of :class:`SortedBattles` they came from."""

    n_models: int
    lo: np.ndarray
    hi: np.ndarray
    starts: np.ndarray
    lens: np.ndarray
    w: np.ndarray
    y: np.ndarray
    zt: np.ndarray
    pairs: np.ndarray
    idx: np.ndarray

    @property
    def n_params(self) -> int:
        return self.n_models + self.zt.shape[0]

    def split(self, parts: int) -> list[Block]:
        """The block cut at pair boundaries into at most ``parts`` consecutive blocks of about equal battles
        (views, no copies): every sum over battles is the sum of the parts' sums."""
        q, n = self.lo.size, self.w.size
        if parts <= 1 or q < 2:
            return [self]
        cuts = np.unique(np.searchsorted(self.starts, np.arange(1, parts) * (n / parts)).clip(1, q - 1))
        out = []
        for s, e in zip([0, *cuts], [*cuts, q], strict=True):
            b0, b1 = int(self.starts[s]), int(self.starts[e]) if e < q else n
            out.append(Block(self.n_models, self.lo[s:e], self.hi[s:e], self.starts[s:e] - b0, self.lens[s:e],
                             self.w[b0:b1], self.y[b0:b1], self.zt[:, b0:b1], self.pairs[s:e], self.idx[b0:b1]))
        return out

    def eta(self, theta: np.ndarray) -> np.ndarray:
        """``α (r_lo − r_hi) + zᵀβ`` per battle."""
        m = self.n_models
        out = theta[m:] @ self.zt
        out += np.repeat(ALPHA * (theta[self.lo] - theta[self.hi]), self.lens)
        return out

    def pair_sum(self, x: np.ndarray) -> np.ndarray:
        """Per present pair, the sum of ``x`` (``(n,)`` or ``(k, n)``) over its battles (last axis)."""
        if not self.starts.size:
            return np.zeros(x.shape[:-1] + (0,))
        return np.add.reduceat(x, self.starts, axis=-1)

    def scatter(self, per_pair: np.ndarray) -> np.ndarray:
        """``Σ_k (e_lo − e_hi) per_pair_k`` over the models (``(m,)``)."""
        m = self.n_models
        return np.bincount(self.lo, per_pair, m) - np.bincount(self.hi, per_pair, m)

    def gradient(self, prob: np.ndarray, theta: np.ndarray, reg: float) -> np.ndarray:
        """``∇L`` from ``p = σ(η)`` at ``theta``."""
        res = prob - self.y
        res *= self.w
        g = np.concatenate([ALPHA * self.scatter(self.pair_sum(res)), self.zt @ res])
        if reg:
            g += reg * theta
        return g

    def laplacian(self, per_pair: np.ndarray) -> np.ndarray:
        """``Σ_k per_pair_k (e_lo − e_hi)(e_lo − e_hi)ᵀ`` (``(m, m)``)."""
        m = self.n_models
        d = np.bincount(self.lo, per_pair, m) + np.bincount(self.hi, per_pair, m)
        off = np.bincount(self.lo * m + self.hi, per_pair, m * m).reshape(m, m)
        out = -(off + off.T)
        out[np.diag_indices(m)] += d
        return out

    def outer_sum(self, v: np.ndarray, rating: np.ndarray | None = None) -> np.ndarray:
        """``Σ_i v_i x_i x_iᵀ`` (``(m + k)²``; module docstring); ``rating``: its rating block, if already known."""
        m, k = self.n_models, self.zt.shape[0]
        out = np.empty((m + k, m + k))
        out[:m, :m] = ALPHA**2 * self.laplacian(self.pair_sum(v)) if rating is None else rating
        vz = np.multiply(self.zt, v, out=scratch("vz", self.zt.shape))
        c = self.pair_sum(vz)
        cross = ALPHA * np.column_stack([self.scatter(c[j]) for j in range(k)]) if k else np.zeros((m, 0))
        out[:m, m:] = cross
        out[m:, :m] = cross.T
        out[m:, m:] = vz @ self.zt.T
        return out

    def loss(self, eta: np.ndarray, prob: np.ndarray, theta: np.ndarray, reg: float) -> float:
        """``L`` from ``η`` and ``p = σ(η)``: ``softplus(η) = max(η, 0) − log max(p, 1 − p)`` (one logarithm per
        battle, accurate on both tails)."""
        sp = np.maximum(prob, 1.0 - prob)
        np.log(sp, out=sp)
        sp -= np.maximum(eta, 0.0)
        sp += self.y * eta
        return float(-(self.w @ sp) + 0.5 * reg * (theta @ theta))


def solvable(h: np.ndarray, m: int, reg: float) -> np.ndarray:
    """``h`` with ``h̄ 𝟙𝟙ᵀ/m`` on the rating block when there is no penalty (module docstring); in place."""
    if not reg and m:
        scale = np.trace(h[:m, :m]) / m
        h[:m, :m] += (scale if scale > 0 else 1.0) / m
    return h


def _solve(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(h, g)
    except np.linalg.LinAlgError:
        return np.full_like(g, np.nan)


class Passes:
    """The passes of a fit over ``block`` split into :data:`PARTS` parts (:meth:`Block.split`), run on ``threads``
    threads: per-battle arrays (``η``, ``p``) are kept per part, sums over battles (gradient, Hessian, loss) are
    added over the parts in order. The parts do not depend on ``threads``, so neither do the sums, bit for bit.
    A context manager (it owns the thread pool)."""

    def __init__(self, block: Block, threads: int = 1):
        self.parts = block.split(PARTS)
        self.n_models = block.n_models
        workers = min(threads, len(self.parts))
        self._pool = ThreadPoolExecutor(workers) if workers > 1 else None

    def __enter__(self) -> Passes:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown()

    def map(self, fn: Callable[..., T], *per_part: Sequence[object]) -> list[T]:
        """``fn(part, *args of that part)`` for every part, on the pool's threads."""
        if self._pool is None:
            return [fn(b, *args) for b, *args in zip(self.parts, *per_part, strict=True)]
        return list(self._pool.map(fn, self.parts, *per_part))

    def _reg(self, reg: float) -> float:
        return reg if len(self.parts) == 1 else 0.0  # several parts: the penalty is added once, to the sum

    def state(self, theta: np.ndarray, reg: float) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
        """``(η, p = σ(η))`` per part and ``∇L`` at ``theta``."""
        out = self.map(_state, [theta] * len(self.parts), [self._reg(reg)] * len(self.parts))
        g = _total([o[2] for o in out], reg * theta if reg and len(out) > 1 else None)
        return [o[0] for o in out], [o[1] for o in out], g

    def probabilities(self, theta: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """``(η, p)`` per part at ``theta``."""
        out = self.map(_eta_prob, [theta] * len(self.parts))
        return [o[0] for o in out], [o[1] for o in out]

    def gradient(self, prob: list[np.ndarray], theta: np.ndarray, reg: float) -> np.ndarray:
        out = self.map(lambda b, p: b.gradient(p, theta, self._reg(reg)), prob)
        return _total(out, reg * theta if reg and len(out) > 1 else None)

    def hessian(self, prob: list[np.ndarray]) -> np.ndarray:
        """``Σ_i w_i p_i (1 − p_i) x_i x_iᵀ`` (no penalty)."""
        return _total(self.map(_hessian, prob))

    def loss(self, eta: list[np.ndarray], prob: list[np.ndarray], theta: np.ndarray, reg: float) -> float:
        out = self.map(lambda b, e, p: b.loss(e, p, theta, self._reg(reg)), eta, prob)
        return out[0] if len(out) == 1 else float(sum(out) + 0.5 * reg * (theta @ theta))


T = TypeVar("T")


def _total(parts: list[np.ndarray], extra: np.ndarray | None = None) -> np.ndarray:
    out = parts[0] if len(parts) == 1 else np.sum(parts, axis=0)
    if extra is not None:
        out += extra
    return out


def _eta_prob(b: Block, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore", invalid="ignore"):  # numpy's error state is per thread
        eta = b.eta(theta)
        return eta, expit(eta)


def _state(b: Block, theta: np.ndarray, reg: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    eta, prob = _eta_prob(b, theta)
    with np.errstate(over="ignore", invalid="ignore"):
        return eta, prob, b.gradient(prob, theta, reg)


def _hessian(b: Block, prob: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        v = prob * (1.0 - prob)
        v *= b.w
        return b.outer_sum(v)


def _sandwich(b: Block, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = expit(b.eta(theta))
    return b.outer_sum(p * (1.0 - p)), b.outer_sum((b.y - p) ** 2)


def sandwich_sums(block: Block, theta: np.ndarray, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(Σ_i p_i (1 − p_i) x_i x_iᵀ, Σ_i (y_i − p_i)² x_i x_iᵀ)`` at ``theta`` over the battles of ``block``
    (each weight 1; no penalty), its parts on ``threads`` threads (:class:`Passes`): the sandwich's bread and meat."""
    with Passes(block, threads) as ps:
        out = ps.map(_sandwich, [theta] * len(ps.parts))
    return _total([o[0] for o in out]), _total([o[1] for o in out])


def hessian_at(block: Block, theta: np.ndarray, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(p = σ(η) per battle of block, Σ_i w_i p_i (1 − p_i) x_i x_iᵀ)`` at ``theta`` (no penalty), its parts on
    ``threads`` threads (:class:`Passes`)."""
    with Passes(block, threads) as ps:
        _, prob = ps.probabilities(theta)
        h = ps.hessian(prob)
    return (prob[0] if len(prob) == 1 else np.concatenate(prob)), h


def fit(block: Block, reg: float, theta0: np.ndarray | None = None, *, xtol: float = XTOL, gtol: float = GTOL,
        max_iter: int = MAX_ITER, threads: int = 1) -> tuple[np.ndarray, NewtonReport]:
    """Exact Newton with step halving on ``block`` (module docstring): ``(θ, report of one fit)``. A full step is
    taken without evaluating the loss when the gradient at its end still points along it (the loss is convex).
    ``threads``: the threads the passes over the battles' parts run on (:class:`Passes`; the result does not
    depend on them)."""
    m = block.n_models
    theta = np.zeros(block.n_params) if theta0 is None else np.array(theta0, dtype=float)
    gscale = gtol * max(1.0, float(block.w.sum()))
    gn = dn = np.inf
    converged = False
    it = 0
    h: np.ndarray | None = None
    with Passes(block, threads) as ps, np.errstate(over="ignore", invalid="ignore"):
        eta, prob, g = ps.state(theta, reg)
        for it in range(1, max_iter + 1):
            if h is None or dn > KEEP_HESSIAN:
                h = ps.hessian(prob)
                h[np.diag_indices_from(h)] += reg
                h = solvable(h, m, reg)
            delta = _solve(h, g)
            gn, dn = float(np.max(np.abs(g), initial=0.0)), float(np.max(np.abs(delta), initial=0.0))
            if not (np.isfinite(gn) and np.isfinite(dn)):
                break
            if dn <= xtol and gn <= gscale:
                theta = theta - delta
                converged = True
                break
            # the full step, accepted without a loss when the loss still falls at its end: L is convex, so
            # φ(t) = L(θ − tΔ) with φ'(1) = −∇L(θ − Δ)ᵀΔ ≤ 0 has φ(1) ≤ φ(0); else step halving on the loss
            new = theta - delta
            eta_new, prob_new, g_new = ps.state(new, reg)
            if not (np.isfinite(g_new).all() and g_new @ delta >= 0.0):
                loss0 = ps.loss(eta, prob, theta, reg)
                t = 0.5
                for _ in range(40):
                    new = theta - t * delta
                    eta_new, prob_new = ps.probabilities(new)
                    if ps.loss(eta_new, prob_new, new, reg) <= loss0 + 1e-12 * abs(loss0):
                        break
                    t *= 0.5
                g_new = ps.gradient(prob_new, new, reg)
            theta, eta, prob, g = new, eta_new, prob_new, g_new
    return theta, NewtonReport(np.array([it]), np.array([gn]), np.array([dn]), np.array([converged]))


def fit_round(battles: SortedBattles, w: np.ndarray, theta_hat: np.ndarray, h0: np.ndarray, p_hat: np.ndarray,
              reg: float, *, xtol: float = XTOL, gtol: float = GTOL,
              chord_iter: int = CHORD_ITER) -> tuple[np.ndarray, NewtonReport]:
    """One bootstrap round, weights ``w`` over the sorted battles, from ``θ̂`` (module docstring): ``(θ, report)``.

    ``h0``: the full-data Hessian at ``θ̂`` (with the penalty); ``p_hat``: ``σ(η̂)`` of the sorted battles."""
    block = battles.block(w)
    m = block.n_models
    theta = np.array(theta_hat, dtype=float)
    gscale = gtol * max(1.0, float(block.w.sum()))
    gn = dn = prev = np.inf
    done = False
    it = 0
    eye = reg * np.eye(m)
    h = None
    with np.errstate(over="ignore", invalid="ignore"):
        for it in range(1, chord_iter + 1):
            prob = p_hat[block.idx] if it == 1 else expit(block.eta(theta))
            g = block.gradient(prob, theta, reg)
            if it <= 2:  # the round's rating block at θ̂, then its whole Hessian once, kept from then on
                v = prob * (1.0 - prob)
                v *= block.w
                rating = ALPHA**2 * block.laplacian(block.pair_sum(v)) + eye
                if it == 1:
                    h = h0.copy()
                    h[:m, :m] = rating
                else:
                    h = block.outer_sum(v, rating)
                    h[m:, m:] += reg * np.eye(h.shape[0] - m)
                h = solvable(h, m, reg)
            assert h is not None
            delta = _solve(h, g)
            gn, dn = float(np.max(np.abs(g))), float(np.max(np.abs(delta)))
            if not (np.isfinite(gn) and np.isfinite(dn)):
                break
            theta -= delta
            rate = dn / prev  # contraction of the steps once the Hessian is kept (iteration 3 on)
            if gn <= gscale and (dn <= xtol or (it >= 3 and rate < 0.5 and dn * rate / (1.0 - rate) <= xtol)):
                done = True
                break
            prev = dn
    if not done:
        start = theta if np.isfinite(theta).all() else theta_hat
        theta, rep = fit(block, reg, start, xtol=xtol, gtol=gtol)
        return theta, NewtonReport(rep.iterations + it, rep.grad_norm, rep.step, rep.converged)
    return theta, NewtonReport(np.array([it]), np.array([gn]), np.array([dn]), np.array([True]))

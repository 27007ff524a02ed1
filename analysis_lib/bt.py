"""Bradley–Terry leaderboards and contextual (style-controlled) Bradley–Terry, as Search Arena computes them.

Everything here follows the authors' analysis code (``lmarena/search-arena``, ``scripts/utils.py`` and
``scripts/preference_analysis.ipynb``); where we choose differently the docstring says so.

Battles
    :func:`prepare_battles` keeps battles with a vote, drops the models outside the leaderboard (the non-search
    ``gemini-2.5-pro``: ``in_leaderboard = false`` in ``resources/model_names.csv``) and self-battles
    (``model_a == model_b``), and reports how many of each it dropped. Outcome for model A: 1 (``model_a``),
    0 (``model_b``), 0.5 (``tie`` and ``tie (bothbad)``).

Bradley–Terry (SA-D5)
    Ratings ``r`` in log10-odds units. For a battle between ``a`` and ``b`` with outcome ``y`` for ``a``,
    ``P(a beats b) = σ(ln 10 · (r_a − r_b))`` and the loss is the weighted negative log-likelihood

        L(r) = − Σ_i c_i [ y_i log σ(η_i) + (1 − y_i) log σ(−η_i) ],   η_i = ln 10 · (r_{a_i} − r_{b_i}),

    summed over the unique (model_a, model_b, outcome) rows ``i`` with counts ``c_i`` (no penalty). ``r`` is
    identified up to a constant; every fit here returns the solution with ``Σ r = 0`` (the one the authors'
    L-BFGS reaches from zero). Elo scale: ``400 · r + 1000``.

Leaderboard convention (the authors' ``get_bt_ratings`` / ``get_leaderboard_table``)
    The full-data fit fixes one offset so that the anchor (``gpt-4o-search``) is 1000; each bootstrap round
    (battles resampled with replacement = multinomial counts over the unique rows) is fitted, centred
    (``Σ r = 0``) and shifted by that same offset, so the anchor keeps an interval. Reported rating = mean over
    rounds, interval = 2.5 / 97.5 percentiles, rank = 1 + number of models whose lower bound exceeds this
    model's upper bound. (Hence the anchor's reported rating is near, not exactly, 1000: 999.2 in Table D.1.)

Contextual Bradley–Terry (SA-32L, SA-32C, SA-F6L, SA-F6R, SA-E4)
    For each feature ``f`` with per-side values ``x_a, x_b`` the battle feature is the normalised difference
    ``d = (x_a − x_b) / (x_a + x_b + 1)``, z-scored over the battles of the fit (population sd, computed once,
    not per bootstrap round). With ``θ = (r, β)``,

        η_i = ln 10 · (r_{a_i} − r_{b_i}) + z_iᵀ β,
        L(θ) = − Σ_i w_i [ y_i log σ(η_i) + (1 − y_i) log σ(−η_i) ] + (reg / 2) ‖θ‖²,   reg = 0.5,

    summed over battles (ties are y = 0.5 rows), the penalty over ratings and coefficients alike. Bootstrap:
    battles resampled with replacement (``w`` = multinomial counts), ``n_bootstrap`` rounds; coefficient
    estimate = mean over rounds, interval = 2.5 / 97.5 percentiles.

    ``convention="paper"`` (default): the authors store every per-side value in an ``int32`` array before
    differencing, so fractional values (mean words per turn, citations per turn, attribution counts per turn)
    are truncated toward zero. ``convention="float"`` uses the exact values; :func:`convention_shift` reports
    how much the coefficients move.

Ratings before and after control (SA-E4)
    :func:`control_effect` fits one battle frame twice, with no features (plain BT under the same penalty) and
    with the controls, on the same bootstrap draws, and compares the spread of the ratings (:func:`rating_spread`:
    SD across models); "converge" = the controlled spread is smaller.

Solvers
    Point fits and BT bootstrap rounds are Newton's method with backtracking on the exact Hessian, vectorised
    over rounds (one batched solve of ``B`` small ``p × p`` systems per iteration, ``p`` ≤ 25). Contextual
    bootstrap rounds use a frozen-Hessian Newton iteration from the full-data optimum, batched over rounds and
    threaded (:func:`fit_logistic_bootstrap`), with exact Newton as fallback. ``solver="lbfgs"`` runs the
    authors' kind of fit (one scipy L-BFGS per round) for comparison; see ``benchmarks/bench_bt.py``.
"""

from __future__ import annotations

import logging
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl
from scipy.optimize import minimize
from scipy.special import expit

from analysis_lib.data import model_table
from analysis_lib.domains import DOMAIN_GROUPS

log = logging.getLogger(__name__)

ANCHOR = "gpt-4o-search"
SCALE = 400.0
BASE = 10.0
INIT_RATING = 1000.0
ALPHA = math.log(BASE)
REG = 0.5

Convention = Literal["paper", "float"]
Solver = Literal["newton", "lbfgs"]

#: Feature sets of the paper (base names; the frame holds ``<name>_a`` and ``<name>_b``).
LENGTH: tuple[str, ...] = ("response_length",)
CITATIONS: tuple[str, ...] = ("citation_count",)
SOURCES: tuple[str, ...] = ("citation_count", *(f"cites_{g}" for g in DOMAIN_GROUPS))
ATTRIBUTION: tuple[str, ...] = ("support_count", "irrelevant_count", "contradict_count")
ALL_CONTROLS: tuple[str, ...] = ("response_length", *SOURCES)

OUTCOME_OF_WINNER = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}


# --------------------------------------------------------------------------------------------------------------
# battles
# --------------------------------------------------------------------------------------------------------------


def non_leaderboard_models() -> tuple[str, ...]:
    """Models left out of every leaderboard (``in_leaderboard = false`` in ``resources/model_names.csv``, read
    by :func:`analysis_lib.data.model_table`: the non-search gemini-2.5-pro)."""
    table = model_table()
    return tuple(sorted(set(table.filter(~pl.col("in_leaderboard"))["model"].to_list())))


@dataclass(frozen=True)
class PreparedBattles:
    """Battles ready for a fit, and what was dropped on the way."""

    frame: pl.DataFrame
    n_input: int
    n_no_vote: int
    n_excluded_model: int
    n_self: int

    def summary(self) -> str:
        return (
            f"{self.frame.height:,} battles kept of {self.n_input:,}: dropped {self.n_no_vote:,} without a vote, "
            f"{self.n_excluded_model:,} with an excluded model, {self.n_self:,} self-battles"
        )


def prepare_battles(
    battles: pl.DataFrame,
    *,
    exclude_models: Sequence[str] | None = None,
    drop_self: bool = True,
    decided_only: bool = False,
) -> PreparedBattles:
    """Keep voted battles; drop excluded models (default: :func:`non_leaderboard_models`) and self-battles.

    ``decided_only`` also drops ties (``tie``, ``tie (bothbad)``), counted with the no-vote rows.
    """
    exclude = list(non_leaderboard_models() if exclude_models is None else exclude_models)
    n0 = battles.height
    voted = battles.filter(pl.col("winner").is_not_null() & pl.col("winner").is_in(list(OUTCOME_OF_WINNER)))
    if decided_only:
        voted = voted.filter(pl.col("winner").is_in(["model_a", "model_b"]))
    n1 = voted.height
    kept = voted.filter(~pl.col("model_a").is_in(exclude) & ~pl.col("model_b").is_in(exclude))
    n2 = kept.height
    if drop_self:
        kept = kept.filter(pl.col("model_a") != pl.col("model_b"))
    prepared = PreparedBattles(kept, n0, n0 - n1, n1 - n2, n2 - kept.height)
    log.info(prepared.summary())
    return prepared


def both_cite(battles: pl.DataFrame) -> pl.DataFrame:
    """Battles where both sides cite (``citation_count_a > 0`` and ``citation_count_b > 0``), as in SA-32C.

    The test is on the exact (float) mean citations per turn, as the authors' filter. A side with
    ``0 < citations per turn < 1`` (e.g. one citation over two turns) is kept, yet under
    ``convention="paper"`` its feature value is ``int32``-truncated to 0 in the fit: the authors' behaviour,
    kept on purpose (``convention="float"`` uses the exact value).
    """
    return battles.filter((pl.col("citation_count_a") > 0) & (pl.col("citation_count_b") > 0))


def attribution_battles(battles: pl.DataFrame) -> pl.DataFrame | None:
    """The SA-F6R frame: decided battles where both sides cite, among those with attribution counts.

    The counts (``support_count``, ``irrelevant_count``, ``contradict_count`` per side, :data:`ATTRIBUTION`)
    exist only in the citation-attribution release (``citation_attribution_data.jsonl``); returns ``None``
    when the columns are missing or all null. Rows with any count missing are dropped. Pass battles after
    :func:`prepare_battles` (the authors remove the non-search model first, as that does).
    """
    cols = [f"{c}_{s}" for c in ATTRIBUTION for s in ("a", "b")]
    if not all(c in battles.columns for c in cols):
        return None
    labelled = battles.filter(pl.all_horizontal([pl.col(c).is_not_null() for c in cols]))
    if labelled.height == 0:
        return None
    return decided(both_cite(labelled))


def decided(battles: pl.DataFrame) -> pl.DataFrame:
    """Battles with a winner (ties and both-bad ties dropped)."""
    return battles.filter(pl.col("winner").is_in(["model_a", "model_b"]))


def outcomes(battles: pl.DataFrame) -> np.ndarray:
    """Outcome for model A per battle: 1, 0, or 0.5 for ties."""
    return battles.select(pl.col("winner").replace_strict(OUTCOME_OF_WINNER, default=None, return_dtype=pl.Float64))[
        "winner"
    ].to_numpy()


# --------------------------------------------------------------------------------------------------------------
# pair data: unique (model_a, model_b, outcome) rows with counts, built once from a frame
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairData:
    """Unique matchups with their outcomes and counts (the only thing a BT fit needs).

    ``pairs[i] = (index of model_a, index of model_b)`` into ``models``; ``outcomes[i]`` ∈ {0, 0.5, 1};
    ``counts[i]`` = number of battles with that (pair, outcome).
    """

    models: tuple[str, ...]
    pairs: np.ndarray
    outcomes: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_frame(cls, battles: pl.DataFrame, models: Sequence[str] | None = None) -> PairData:
        """From a frame with ``model_a``, ``model_b``, ``winner`` (every row must carry a vote)."""
        if models is None:
            models = sorted(set(battles["model_a"].unique().to_list()) | set(battles["model_b"].unique().to_list()))
        index = {m: i for i, m in enumerate(models)}
        grouped = (
            battles.select(
                pl.col("model_a").replace_strict(index, return_dtype=pl.Int64).alias("a"),
                pl.col("model_b").replace_strict(index, return_dtype=pl.Int64).alias("b"),
                pl.col("winner").replace_strict(OUTCOME_OF_WINNER, return_dtype=pl.Float64).alias("y"),
            )
            .group_by("a", "b", "y")
            .len()
            .sort("a", "b", "y")
        )
        return cls(
            models=tuple(models),
            pairs=grouped.select("a", "b").to_numpy().astype(np.int64),
            outcomes=grouped["y"].to_numpy().astype(float),
            counts=grouped["len"].to_numpy().astype(float),
        )

    @property
    def n_battles(self) -> int:
        return int(self.counts.sum())

    def design(self) -> np.ndarray:
        """The ``(rows, models)`` design matrix ``ln 10 · (e_a − e_b)``."""
        return ALPHA * _incidence(self.pairs, len(self.models))

    def battles_per_model(self) -> np.ndarray:
        n = np.zeros(len(self.models))
        np.add.at(n, self.pairs[:, 0], self.counts)
        np.add.at(n, self.pairs[:, 1], self.counts)
        return n


def _incidence(pairs: np.ndarray, n_models: int) -> np.ndarray:
    d = np.zeros((pairs.shape[0], n_models))
    rows = np.arange(pairs.shape[0])
    d[rows, pairs[:, 0]] += 1.0
    d[rows, pairs[:, 1]] -= 1.0
    return d


# --------------------------------------------------------------------------------------------------------------
# the solver: batched penalised logistic regression by Newton's method
# --------------------------------------------------------------------------------------------------------------


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


def _batch_loss(theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray, reg: float) -> np.ndarray:
    eta = theta @ x.T
    return np.sum(w * (_softplus(eta) - y * eta), axis=1) + 0.5 * reg * np.sum(theta * theta, axis=1)


def fit_logistic_batch(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    *,
    reg: float = 0.0,
    n_ratings: int = 0,
    theta0: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
    chunk: int = 256,
) -> np.ndarray:
    """Minimise ``Σ_i w_bi [softplus(x_iθ_b) − y_i x_iθ_b] + reg/2 ‖θ_b‖²`` for every row ``b`` of ``w``.

    Newton's method with the exact Hessian ``Xᵀ diag(w p (1 − p)) X + reg I``, vectorised over the rows of
    ``w`` (bootstrap rounds), with step halving when the loss would rise. When ``reg == 0`` the first
    ``n_ratings`` coordinates are BT ratings, identified only up to a constant: the Hessian gets ``𝟙𝟙ᵀ / n``
    over them, so every step keeps ``Σ r`` unchanged (zero from the default start). Stops when the largest
    Newton decrement step ``max |Δθ|`` is below ``tol``. Returns ``θ`` with shape ``(B, p)``.
    """
    x = np.ascontiguousarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.atleast_2d(np.asarray(w, dtype=float))
    n_rounds, p = w.shape[0], x.shape[1]
    theta_all = np.zeros((n_rounds, p)) if theta0 is None else np.array(np.broadcast_to(theta0, (n_rounds, p)))
    outer = (x[:, :, None] * x[:, None, :]).reshape(x.shape[0], p * p)
    fix = np.zeros((p, p))
    if reg == 0.0 and n_ratings:
        fix[:n_ratings, :n_ratings] = 1.0 / n_ratings
    eye = reg * np.eye(p)
    for start in range(0, n_rounds, chunk):
        sl = slice(start, min(start + chunk, n_rounds))
        theta, wc = theta_all[sl], w[sl]
        active = np.ones(theta.shape[0], dtype=bool)
        loss = _batch_loss(theta, x, y, wc, reg)
        for _ in range(max_iter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            th, ww = theta[idx], wc[idx]
            prob = expit(th @ x.T)
            grad = (ww * (prob - y)) @ x + reg * th
            hess = ((ww * prob * (1.0 - prob)) @ outer).reshape(idx.size, p, p) + eye + fix
            step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
            t = np.ones(idx.size)
            new = th - step
            new_loss = _batch_loss(new, x, y, ww, reg)
            for _ in range(40):
                bad = ~(new_loss <= loss[idx] + 1e-12 * np.abs(loss[idx]))
                if not bad.any():
                    break
                t[bad] *= 0.5
                new[bad] = th[bad] - t[bad, None] * step[bad]
                new_loss[bad] = _batch_loss(new[bad], x, y, ww[bad], reg)
            theta[idx] = new
            loss[idx] = new_loss
            active[idx] = np.max(np.abs(t[:, None] * step), axis=1) > tol
        if active.any():
            warnings.warn(
                f"Newton did not converge in {max_iter} iterations for {int(active.sum())} of {theta.shape[0]} fits "
                "(a model that never wins or never loses in a resample has no finite ML rating)",
                RuntimeWarning,
                stacklevel=2,
            )
        theta_all[sl] = theta
    return theta_all


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


def fit_logistic_bootstrap(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    theta_hat: np.ndarray,
    *,
    reg: float,
    tol: float = 1e-10,
    max_iter: int = 40,
    chunk: int = 64,
    threads: int | None = None,
) -> np.ndarray:
    """Bootstrap rounds of a penalised fit (``reg > 0``): the same optimum as :func:`fit_logistic_batch`, faster.

    Every round starts from the full-data optimum ``theta_hat`` and iterates ``θ ← θ − H₀⁻¹ ∇L_b(θ)`` with the
    one full-data Hessian ``H₀ = Xᵀ diag(p̂(1 − p̂)) X + reg I`` (a chord / frozen-Hessian Newton method): each
    iteration costs one gradient for all rounds at once, and the fixed point is the exact optimum of each
    round's loss because the gradient is exact. Resampling moves the Hessian little, so the contraction is fast
    (about 9 iterations to 1e-10 on Search Arena-sized data); while steps exceed 1e-5 the gradient is formed
    in float32 (the final iterations, and so the fixed point, are float64). Rounds are processed in chunks on ``threads``
    threads (numpy releases the GIL; BLAS is held to one thread meanwhile); any round that has not converged
    to ``tol`` after ``max_iter`` iterations is refitted with exact Newton (:func:`fit_logistic_batch`).
    """
    if reg <= 0:
        raise ValueError("the frozen-Hessian bootstrap needs a penalty (reg > 0)")
    x = np.ascontiguousarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.atleast_2d(np.asarray(w, dtype=float))
    n_rounds, p = w.shape[0], x.shape[1]
    p_hat = expit(x @ theta_hat)
    h_inv = np.linalg.inv(x.T @ (x * (p_hat * (1.0 - p_hat))[:, None]) + reg * np.eye(p))
    resid_hat = p_hat - y
    xt = np.ascontiguousarray(x.T)
    out = np.empty((n_rounds, p))
    done = np.zeros(n_rounds, dtype=bool)

    x32, xt32, y32 = x.astype(np.float32), xt.astype(np.float32), y.astype(np.float32)

    def work(sl: slice) -> None:
        wc = w[sl]
        wc32 = wc.astype(np.float32)
        th = np.array(np.broadcast_to(theta_hat, (wc.shape[0], p)))
        grad = (wc * resid_hat) @ x + reg * th
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(max_iter):
                step = grad @ h_inv
                th -= step
                size = np.max(np.abs(step), axis=1)
                if not np.any(size >= tol):  # all below tol (NaN counts as not converged)
                    break
                if np.max(size) > 1e-5:  # far from the optimum: a float32 gradient is accurate enough
                    eta32 = th.astype(np.float32) @ xt32
                    expit(eta32, out=eta32)
                    eta32 -= y32
                    eta32 *= wc32
                    grad = (eta32 @ x32).astype(float) + reg * th
                    continue
                eta = th @ xt
                expit(eta, out=eta)
                eta -= y
                eta *= wc
                grad = eta @ x + reg * th
        out[sl] = th
        done[sl] = np.isfinite(size) & (size < tol)

    slices = [slice(s, min(s + chunk, n_rounds)) for s in range(0, n_rounds, chunk)]
    threads = min(2, os.cpu_count() or 1) if threads is None else threads
    if threads > 1 and len(slices) > 1:
        with _one_blas_thread(), ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, slices))
    else:
        for sl in slices:
            work(sl)
    if not done.all():
        bad = np.flatnonzero(~done)
        out[bad] = fit_logistic_batch(x, y, w[bad], reg=reg, theta0=theta_hat, tol=tol)
    return out


@contextmanager
def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        yield
        return
    with threadpool_limits(1):
        yield


def _solve(x, y, w, *, reg, n_ratings, solver: Solver, theta0=None) -> np.ndarray:
    if solver == "newton":
        if theta0 is not None and reg > 0:
            return fit_logistic_bootstrap(x, y, w, theta0, reg=reg)
        return fit_logistic_batch(x, y, w, reg=reg, n_ratings=n_ratings, theta0=theta0)
    if solver == "lbfgs":
        return fit_logistic_lbfgs(x, y, w, reg=reg)
    raise ValueError(f"unknown solver {solver!r}")


def bootstrap_counts(n: int, n_rounds: int, seed: int, p: np.ndarray | None = None) -> np.ndarray:
    """``(n_rounds, n)`` multinomial counts: resampling ``Σ`` battles with replacement.

    With ``p = None`` each of ``n`` battles is equally likely (contextual BT, one row per battle); with ``p``
    the unique-row shares ``counts / Σ counts`` and ``Σ counts`` draws (BT on :class:`PairData`), which is
    the same distribution of resampled battle sets.
    """
    rng = np.random.default_rng(seed)
    if p is None:
        return rng.multinomial(n, np.full(n, 1.0 / n), size=n_rounds).astype(float)
    return rng.multinomial(n, p, size=n_rounds).astype(float)


# --------------------------------------------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------------------------------------------


def bt_params(data: PairData, weights: np.ndarray | None = None, *, solver: Solver = "newton") -> np.ndarray:
    """ML ratings (log10-odds units, ``Σ r = 0``) of :class:`PairData`; one row per row of ``weights``.

    ``weights`` defaults to ``data.counts`` (the observed battles); the loss is that of the module docstring.
    """
    w = data.counts[None, :] if weights is None else np.atleast_2d(weights)
    theta = _solve(data.design(), data.outcomes, w, reg=0.0, n_ratings=len(data.models), solver=solver)
    return theta - theta.mean(axis=1, keepdims=True)


def to_elo(r: np.ndarray, offset: float = INIT_RATING) -> np.ndarray:
    """``400 · r + offset``."""
    return SCALE * r + offset


def _anchor_offset(models: Sequence[str], r: np.ndarray, anchor: str | None) -> float:
    if anchor is None:
        return INIT_RATING
    if anchor not in models:
        raise ValueError(f"anchor {anchor!r} has no battles here")
    return INIT_RATING - SCALE * float(r[list(models).index(anchor)])


def fit_ratings(
    battles: pl.DataFrame,
    anchor: str | None = ANCHOR,
    *,
    exclude_models: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Bradley–Terry ML point estimates on the Elo scale, anchor = 1000 (columns ``model``, ``rating``).

    Likelihood: ``P(a beats b) = σ(ln 10 · (r_a − r_b))``, ties half a win, no penalty; rating ``400 r`` shifted
    so that ``anchor`` is exactly 1000 (``anchor=None``: ``Σ r = 0`` and 1000 on average). Battles pass through
    :func:`prepare_battles` first. Sorted by rating, best first.
    """
    prep = prepare_battles(battles, exclude_models=exclude_models)
    data = PairData.from_frame(prep.frame)
    r = bt_params(data)[0]
    elo = to_elo(r, _anchor_offset(data.models, r, anchor))
    return pl.DataFrame({"model": list(data.models), "rating": elo}).sort("rating", descending=True)


def rank_from_intervals(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rank = 1 + number of models whose lower bound exceeds this model's upper bound (ties share a rank)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    return 1 + (lower[None, :] > upper[:, None]).sum(axis=1)


def _summarise_rounds(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1], np.nan)
        return nan, nan, nan
    return samples.mean(axis=0), np.percentile(samples, 2.5, axis=0), np.percentile(samples, 97.5, axis=0)


def _leaderboard_frame(
    models: Sequence[str], elo_ml: np.ndarray, samples: np.ndarray, num_battles: np.ndarray
) -> pl.DataFrame:
    mean, lo, hi = _summarise_rounds(samples)
    if samples.shape[0] == 0:
        mean = elo_ml
        rank = rank_from_intervals(elo_ml, elo_ml)
    else:
        rank = rank_from_intervals(lo, hi)
    return pl.DataFrame(
        {
            "model": list(models),
            "rating": mean,
            "ci_lower": lo,
            "ci_upper": hi,
            "rank": rank.astype(np.int64),
            "num_battles": num_battles.astype(np.int64),
            "rating_ml": elo_ml,
        }
    ).sort("rating", descending=True)


def bootstrap_bt(
    battles: pl.DataFrame,
    anchor: str | None = ANCHOR,
    n_bootstrap: int = 100,
    seed: int = 0,
    *,
    exclude_models: Sequence[str] | None = None,
    solver: Solver = "newton",
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """``(models, full-data Elo ratings, (n_bootstrap, models) Elo ratings per round)``, leaderboard convention.

    Rounds resample battles with replacement (multinomial counts over unique rows, ``numpy`` generator seeded
    with ``seed``); each round's ``Σ r = 0`` solution is shifted by the offset that puts ``anchor`` at 1000 in
    the full-data fit.
    """
    prep = prepare_battles(battles, exclude_models=exclude_models)
    data = PairData.from_frame(prep.frame)
    r = bt_params(data, solver=solver)[0]
    offset = _anchor_offset(data.models, r, anchor)
    if n_bootstrap > 0:
        w = bootstrap_counts(data.n_battles, n_bootstrap, seed, p=data.counts / data.counts.sum())
        rounds = bt_params(data, w, solver=solver)
    else:
        rounds = np.zeros((0, len(data.models)))
    return data.models, to_elo(r, offset), to_elo(rounds, offset)


def leaderboard(
    battles: pl.DataFrame,
    anchor: str | None = ANCHOR,
    n_bootstrap: int = 100,
    seed: int = 0,
    *,
    exclude_models: Sequence[str] | None = None,
    solver: Solver = "newton",
) -> pl.DataFrame:
    """The Table D.1 leaderboard: ``model, rating, ci_lower, ci_upper, rank, num_battles`` (+ ``rating_ml``).

    Likelihood and convention in the module docstring: BT by ML (logit ``ln 10 · (r_a − r_b)``, ties half),
    ``rating`` = bootstrap mean of ``400 r + offset`` with the offset that puts ``anchor`` at 1000 in the
    full-data fit, CI = 2.5/97.5 percentiles of the rounds, ``rank`` = 1 + #models whose lower bound exceeds
    this model's upper bound; ``rating_ml`` = the full-data fit (anchor exactly 1000). ``num_battles`` counts
    ties too. With ``n_bootstrap=0`` the rating is the ML fit and the interval is NaN.
    """
    prep = prepare_battles(battles, exclude_models=exclude_models)
    data = PairData.from_frame(prep.frame)
    models, elo, rounds = bootstrap_bt(
        prep.frame, anchor, n_bootstrap, seed, exclude_models=[], solver=solver
    )
    return _leaderboard_frame(models, elo, rounds, data.battles_per_model())


# --------------------------------------------------------------------------------------------------------------
# contextual Bradley-Terry (style control)
# --------------------------------------------------------------------------------------------------------------


def style_features(
    battles: pl.DataFrame, features: Sequence[str], convention: Convention = "paper"
) -> tuple[np.ndarray, np.ndarray]:
    """``(z, d)``: z-scored and raw normalised differences ``(x_a − x_b)/(x_a + x_b + 1)``, shape ``(n, k)``.

    ``convention="paper"`` truncates every per-side value to ``int32`` first (the authors' storage);
    ``"float"`` keeps it exact. Null values count as 0 (as a missing count would). A feature with zero spread
    gets ``z = 0`` (its coefficient is then reported as NaN).
    """
    cols = []
    for f in features:
        a = battles[f"{f}_a"].fill_null(0).cast(pl.Float64).to_numpy()
        b = battles[f"{f}_b"].fill_null(0).cast(pl.Float64).to_numpy()
        if convention == "paper":
            a, b = a.astype(np.int32).astype(float), b.astype(np.int32).astype(float)
        elif convention != "float":
            raise ValueError(f"unknown convention {convention!r}")
        cols.append((a - b) / (a + b + 1.0))
    d = np.column_stack(cols) if cols else np.zeros((battles.height, 0))
    sd = d.std(axis=0)
    safe = np.where(sd > 0, sd, 1.0)
    z = np.where(sd > 0, (d - d.mean(axis=0)) / safe, 0.0)
    return z, d


@dataclass(frozen=True)
class StyleFit:
    """Everything one contextual-BT fit produced (the frames of :func:`style_control` are built from it)."""

    models: tuple[str, ...]
    features: tuple[str, ...]
    theta: np.ndarray  # (models + features,) full-data fit
    rounds: np.ndarray  # (n_bootstrap, models + features)
    offset: float
    num_battles: np.ndarray
    constant: np.ndarray  # features with zero spread
    anchor: str | None = ANCHOR

    def ratings(self, anchor_each_round: bool = False) -> pl.DataFrame:
        """Leaderboard frame of the controlled ratings (module-docstring convention).

        ``anchor_each_round=True`` instead puts the anchor at 1000 in every bootstrap round, so the intervals
        are those of the differences to the anchor (the anchor's own interval collapses to 1000).
        """
        m = len(self.models)
        elo = to_elo(self.theta[:m], self.offset)
        rounds = to_elo(self.rounds[:, :m], self.offset)
        if anchor_each_round and self.anchor is not None:
            j = self.models.index(self.anchor)
            rounds = rounds - rounds[:, [j]] + INIT_RATING
        return _leaderboard_frame(self.models, elo, rounds, self.num_battles)

    def coefficients(self) -> pl.DataFrame:
        m = len(self.models)
        est, lo, hi = _summarise_rounds(self.rounds[:, m:])
        ml = self.theta[m:].copy()
        if self.rounds.shape[0] == 0:
            est = ml.copy()
        for arr in (est, lo, hi, ml):
            arr[self.constant] = np.nan
        return pl.DataFrame(
            {"feature": list(self.features), "estimate": est, "ci_lower": lo, "ci_upper": hi, "estimate_ml": ml}
        )


def fit_style(
    battles: pl.DataFrame,
    features: Sequence[str],
    n_bootstrap: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    *,
    anchor: str | None = ANCHOR,
    reg: float = REG,
    exclude_models: Sequence[str] | None = None,
    solver: Solver = "newton",
) -> StyleFit:
    """Contextual BT of the module docstring on ``battles`` (after :func:`prepare_battles`), with bootstrap."""
    prep = prepare_battles(battles, exclude_models=exclude_models)
    frame = prep.frame
    models = tuple(sorted(set(frame["model_a"].to_list()) | set(frame["model_b"].to_list())))
    index = {m: i for i, m in enumerate(models)}
    pairs = np.column_stack(
        [
            frame["model_a"].replace_strict(index, return_dtype=pl.Int64).to_numpy(),
            frame["model_b"].replace_strict(index, return_dtype=pl.Int64).to_numpy(),
        ]
    )
    z, _ = style_features(frame, features, convention)
    x = np.hstack([ALPHA * _incidence(pairs, len(models)), z])
    y = outcomes(frame)
    n = frame.height
    theta = _solve(x, y, np.ones((1, n)), reg=reg, n_ratings=len(models), solver=solver)[0]
    if n_bootstrap > 0:
        w = bootstrap_counts(n, n_bootstrap, seed)
        start = theta if solver == "newton" else None
        rounds = _solve(x, y, w, reg=reg, n_ratings=len(models), solver=solver, theta0=start)
    else:
        rounds = np.zeros((0, x.shape[1]))
    num = np.bincount(pairs.ravel(), minlength=len(models)).astype(float)
    return StyleFit(
        models=models,
        features=tuple(features),
        theta=theta,
        rounds=rounds,
        offset=_anchor_offset(models, theta[: len(models)], anchor),
        num_battles=num,
        constant=z.std(axis=0) == 0,
        anchor=anchor,
    )


def style_control(
    battles: pl.DataFrame,
    features: Sequence[str],
    n_bootstrap: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    *,
    anchor: str | None = ANCHOR,
    reg: float = REG,
    exclude_models: Sequence[str] | None = None,
    solver: Solver = "newton",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Contextual (style-controlled) BT: ``(ratings, coefficients)``.

    Loss (module docstring): ``−Σ_i w_i [y_i log σ(η_i) + (1−y_i) log σ(−η_i)] + reg/2 ‖(r, β)‖²`` with
    ``η_i = ln 10 (r_a − r_b) + z_iᵀβ``, ``z`` the z-scored normalised differences of ``features`` (base names:
    the frame holds ``<f>_a`` and ``<f>_b``; see :data:`LENGTH`, :data:`CITATIONS`, :data:`SOURCES`,
    :data:`ATTRIBUTION`, :data:`ALL_CONTROLS`), ``reg = 0.5``. Battles are resampled ``n_bootstrap`` times.

    ``ratings``: as :func:`leaderboard` (``rating`` = bootstrap mean on the Elo scale with the full-data anchor
    offset, ``rating_ml`` = full-data fit). ``coefficients``: ``feature, estimate`` (bootstrap mean, as the
    paper reports), ``ci_lower, ci_upper`` (2.5/97.5 percentiles), ``estimate_ml`` (full-data fit).
    ``convention``: ``"paper"`` truncates per-side values to int32 as the authors did; ``"float"`` is exact.
    Filters of the paper (e.g. both sides cite, decided battles) are the caller's: :func:`both_cite`,
    :func:`decided`.
    """
    fit = fit_style(
        battles,
        features,
        n_bootstrap,
        seed,
        convention,
        anchor=anchor,
        reg=reg,
        exclude_models=exclude_models,
        solver=solver,
    )
    return fit.ratings(), fit.coefficients()


def style_by_subset(
    battles: pl.DataFrame,
    features: Sequence[str],
    by: str = "primary_intent",
    *,
    skip: Sequence[str] = ("Other",),
    n_bootstrap: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    min_battles: int = 30,
    anchor: str | None = ANCHOR,
    reg: float = REG,
    exclude_models: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Coefficients of ``features`` fitted separately on each value of ``by`` (SA-D7, SA-E1).

    Columns ``subset, feature, estimate, ci_lower, ci_upper, estimate_ml, n``. Subsets with fewer than
    ``min_battles`` battles (after :func:`prepare_battles` with ``exclude_models``) are left out. ``anchor``,
    ``reg``, ``exclude_models``, ``convention`` go to every fit. The anchor only sets the offset of the ratings,
    never the coefficients, so a subset in which ``anchor`` has no battles is fitted with ``anchor=None``
    (same coefficients) instead of failing. The authors' per-intent citation figure (E.1) fits each intent on
    all voted battles, not only those where both sides cite; pass the frame you want.
    """
    frames = []
    for value in sorted(v for v in battles[by].drop_nulls().unique().to_list() if v not in skip):
        sub = prepare_battles(battles.filter(pl.col(by) == value), exclude_models=exclude_models).frame
        if sub.height < min_battles:
            continue
        present = set(sub["model_a"].to_list()) | set(sub["model_b"].to_list())
        _, coefs = style_control(
            sub, features, n_bootstrap, seed, convention,
            anchor=anchor if anchor in present else None, reg=reg, exclude_models=[],
        )
        frames.append(coefs.with_columns(pl.lit(value).alias("subset"), pl.lit(sub.height).alias("n")))
    if not frames:
        return pl.DataFrame(
            schema={"subset": pl.String, "feature": pl.String, "estimate": pl.Float64, "ci_lower": pl.Float64,
                    "ci_upper": pl.Float64, "estimate_ml": pl.Float64, "n": pl.Int64}
        )
    out = pl.concat(frames)
    return out.select("subset", "feature", "estimate", "ci_lower", "ci_upper", "estimate_ml", pl.col("n").cast(pl.Int64))


# --------------------------------------------------------------------------------------------------------------
# SA-E4: do ratings converge once style is controlled?
# --------------------------------------------------------------------------------------------------------------


def rating_spread(ratings: np.ndarray | pl.Series | Sequence[float]) -> np.ndarray | float:
    """Spread of a set of ratings: sample standard deviation across models (``ddof=1``), along the last axis.

    Shift-invariant, so the anchor convention does not matter. A 1-d input gives a float; ``(rounds, models)``
    gives one value per round.
    """
    arr = np.asarray(ratings, dtype=float)
    sd = arr.std(axis=-1, ddof=1)
    return float(sd) if arr.ndim == 1 else sd


@dataclass(frozen=True)
class ControlEffect:
    """Ratings of the same battles without and with style controls (SA-E4), and the change of their spread.

    ``ratings``: ``model, before, after, shift`` (full-data fits, Elo, anchor = 1000 when it has battles).
    ``sd_before``, ``sd_after``: :func:`rating_spread` of the two columns. ``change_ci``: 2.5 / 97.5 percentiles of
    ``sd_after − sd_before`` over paired bootstrap rounds (both fits see the same resampled battles; NaN without
    rounds). ``n_battles``: battles in both fits.
    """

    ratings: pl.DataFrame
    sd_before: float
    sd_after: float
    change_ci: tuple[float, float]
    n_battles: int

    @property
    def change(self) -> float:
        """``sd_after − sd_before`` (negative: the ratings move closer together)."""
        return self.sd_after - self.sd_before

    @property
    def converge(self) -> bool:
        """The paper's reading of Fig E.4: the controlled ratings are less spread out (``sd_after < sd_before``)."""
        return self.sd_after < self.sd_before

    @property
    def converge_significant(self) -> bool:
        """The whole bootstrap interval of the change lies below 0."""
        return bool(self.change_ci[1] < 0)


def control_effect(
    battles: pl.DataFrame,
    features: Sequence[str] = ALL_CONTROLS,
    n_bootstrap: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    *,
    anchor: str | None = ANCHOR,
    reg: float = REG,
    exclude_models: Sequence[str] | None = None,
) -> ControlEffect:
    """Fit the same battles without controls and with ``features``; compare the spread of the ratings (SA-E4).

    "Before" is the contextual model with no features (plain BT with the same penalty ``reg``), "after" the
    contextual model with ``features``, both by :func:`fit_style` on the identical battle frame and the same
    bootstrap draws (same ``seed``), so the only difference is the controls. (The authors' Fig E.4 put the
    plain fit on all voted battles beside the controlled fit on decided battles where both sides cite; dropping
    ties alone moves the spread, so that comparison mixes two effects.)
    """
    prep = prepare_battles(battles, exclude_models=exclude_models).frame
    kw = dict(anchor=anchor, reg=reg, exclude_models=[])
    plain = fit_style(prep, (), n_bootstrap, seed, convention, **kw)
    ctrl = fit_style(prep, features, n_bootstrap, seed, convention, **kw)
    m = len(plain.models)
    before = to_elo(plain.theta[:m], plain.offset)
    after = to_elo(ctrl.theta[:m], ctrl.offset)
    if n_bootstrap > 0:
        change = rating_spread(to_elo(ctrl.rounds[:, :m])) - rating_spread(to_elo(plain.rounds[:, :m]))
        ci = (float(np.percentile(change, 2.5)), float(np.percentile(change, 97.5)))
    else:
        ci = (math.nan, math.nan)
    frame = pl.DataFrame({"model": list(plain.models), "before": before, "after": after}).with_columns(
        (pl.col("after") - pl.col("before")).alias("shift")
    )
    return ControlEffect(
        ratings=frame.sort("before", descending=True),
        sd_before=rating_spread(before),
        sd_after=rating_spread(after),
        change_ci=ci,
        n_battles=prep.height,
    )


def convention_shift(battles: pl.DataFrame, features: Sequence[str], **kwargs) -> pl.DataFrame:
    """Full-data coefficients under ``convention="paper"`` (int32 truncation) and ``"float"``, and the shift.

    Columns ``feature, paper, float, shift`` (``float − paper``); keyword arguments go to :func:`fit_style`.
    """
    kwargs = {**kwargs, "n_bootstrap": 0}
    paper = fit_style(battles, features, convention="paper", **kwargs).coefficients()["estimate_ml"]
    exact = fit_style(battles, features, convention="float", **kwargs).coefficients()["estimate_ml"]
    return pl.DataFrame(
        {"feature": list(features), "paper": paper, "float": exact, "shift": exact.to_numpy() - paper.to_numpy()}
    )


# --------------------------------------------------------------------------------------------------------------
# methods validation: interval coverage over replicate datasets
# --------------------------------------------------------------------------------------------------------------


def interval_coverage(
    replicates: Iterable[tuple[pl.DataFrame, dict[str, float], dict[str, float]]],
    features: Sequence[str] = ALL_CONTROLS,
    *,
    n_bootstrap: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    anchor: str = ANCHOR,
) -> pl.DataFrame:
    """Do the 95% bootstrap intervals of the contextual fit cover planted values? One row per estimate.

    Each replicate is ``(battles, true Elo ratings with anchor = 1000, true coefficients)``, e.g. from
    ``analysis_lib.simulate.search_arena(n, seed)``. Every replicate is fitted with :func:`fit_style`
    (``features``, ``n_bootstrap`` rounds, the leaderboard convention of the module docstring). Columns:
    ``replicate, kind, name, truth, estimate, ci_lower, ci_upper, covered`` with ``kind`` one of
    ``"rating"`` (the paper's convention: rounds centred, one full-data anchor offset), ``"rating, anchored per
    round"`` (intervals of the differences to the anchor) and ``"coefficient"``. Coefficients with zero spread
    in a replicate (NaN) and the anchor's rating are left out.
    """
    rows: list[dict[str, object]] = []
    for k, (battles, ratings, betas) in enumerate(replicates):
        fit = fit_style(battles, features, n_bootstrap, seed + k, convention, anchor=anchor)
        for label, per_round in (("rating", False), ("rating, anchored per round", True)):
            rat = fit.ratings(anchor_each_round=per_round).filter(pl.col("model") != anchor)
            for r in rat.iter_rows(named=True):
                if r["model"] in ratings:
                    rows.append(_coverage_row(k, label, r["model"], ratings[r["model"]], r["rating"], r["ci_lower"], r["ci_upper"]))
        for c in fit.coefficients().drop_nans("estimate").iter_rows(named=True):
            if c["feature"] in betas:
                rows.append(_coverage_row(k, "coefficient", c["feature"], betas[c["feature"]], c["estimate"], c["ci_lower"], c["ci_upper"]))
    return pl.DataFrame(rows)


def coverage_summary(coverage: pl.DataFrame, level: float = 0.95) -> pl.DataFrame:
    """Share of covering intervals per ``kind`` of :func:`interval_coverage`, with a Wilson interval.

    Columns ``kind, coverage, intervals, ci_lower, ci_upper`` (fractions). The Wilson interval treats the
    intervals as independent; ratings of one replicate share a fit, so it is somewhat too narrow for them.
    """
    from statsmodels.stats.proportion import proportion_confint

    out = coverage.group_by("kind").agg(pl.col("covered").sum().alias("_k"), pl.len().alias("intervals")).sort("kind")
    lo, hi = proportion_confint(out["_k"].to_numpy(), out["intervals"].to_numpy(), alpha=1 - level, method="wilson")
    return out.select(
        "kind",
        (pl.col("_k") / pl.col("intervals")).alias("coverage"),
        pl.col("intervals").cast(pl.Int64),
        pl.Series("ci_lower", np.atleast_1d(lo), dtype=pl.Float64),
        pl.Series("ci_upper", np.atleast_1d(hi), dtype=pl.Float64),
    )


def _coverage_row(k: int, kind: str, name: str, truth: float, est: float, lo: float, hi: float) -> dict[str, object]:
    return {
        "replicate": k, "kind": kind, "name": name, "truth": float(truth), "estimate": float(est),
        "ci_lower": float(lo), "ci_upper": float(hi), "covered": bool(lo <= truth <= hi),
    }

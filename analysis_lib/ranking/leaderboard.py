r"""The one leaderboard: Bradley–Terry (or contextual BT with style features) on any battle frame.

:func:`leaderboard` checks the battles (:func:`~analysis_lib.ranking.votes.clean_battles`: no vote, unknown
labels, self-battles are an error unless ``drop_invalid``; ``exclude`` drops models, counted), checks that the
MLE exists (:mod:`~analysis_lib.ranking.graph`; unless ``reg > 0``), fits, and returns a
:class:`~analysis_lib.ranking.result.Ranking` with bootstrap (default) or sandwich intervals. :func:`rank_pairs`
does the same from :class:`~analysis_lib.ranking.pairs.PairData`, :func:`rank_contextual` from checked battles
with feature columns.

Plain BT: ratings ``r`` (log10-odds), ``P(a beats b) = σ(ln 10 · (r_a − r_b))``, ties half a win, loss the
count-weighted negative log-likelihood over the unique ``(a, b, y)`` rows (+ ``reg/2 ‖r‖²`` if asked),
exact sparse Newton (:mod:`~analysis_lib.ranking.newton`); bootstrap rounds resample the battles (multinomial
counts over the unique rows). Contextual BT: ``η = ln 10 · (r_a − r_b) + zᵀβ`` with ``z`` the z-scored
normalised differences ``(x_a − x_b)/(x_a + x_b + 1)`` of each feature (columns ``<f>_a``, ``<f>_b``), penalty
``reg/2 ‖(r, β)‖²`` on the summed loss (the Search Arena authors use ``reg = 0.5``), bootstrap over battles
(:mod:`~analysis_lib.ranking.contextual_solver`). Nothing here is specific to an arena: the anchor, the excluded
models, the penalty and the feature convention are the caller's.

When the MLE of the data does not exist (:mod:`~analysis_lib.ranking.graph`): ``on_separation="error"``
(default) raises :class:`~analysis_lib.ranking.graph.NotIdentifiableError` listing the models concerned;
``"ridge"`` fits with ``ridge/2 ‖r‖²`` (prior ``N(0, 1/ridge)`` per rating), and the result lists the models the
ridge set (``ridge_models``). When the data have an MLE but a bootstrap resample has none (on a skewed arena a
rare model's few wins can all be left out of a resample), that round is fitted with the same ridge whatever
``on_separation`` says: the leaderboard does not stop. Such rounds are counted (``ridge_resamples``) and, per
model, so are the rounds in which the ridge set that model's rating (``ridge_rounds``; the command writes it as
a column): a model's percentile interval is then open-ended on that side in effect, and its bootstrap mean is
pulled by those rounds, unless they are fewer than ``(1 − level)/2`` of the rounds.

Arguments are checked before any work: ``rounds`` in ``1 … MAX_ROUNDS`` with a bootstrap, ``level`` in (0, 1),
``reg`` ≥ 0 and ``ridge`` > 0 (finite); a bad value raises ``ValueError`` naming the argument.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

import numpy as np
import polars as pl

from analysis_lib.ranking import sorted_battles as sb
from analysis_lib.ranking.blas import THREADS, one_blas_thread
from analysis_lib.ranking.bootstrap import (
    LARGE_BATTLES,
    bootstrap_battles,
    bootstrap_pairs,
    bootstrap_sorted,
    check_converged,
)
from analysis_lib.ranking.contextual_solver import ContextualDesign, newton
from analysis_lib.ranking.features import Convention, style_features
from analysis_lib.ranking.graph import RIDGE, NotIdentifiableError, diagnose
from analysis_lib.ranking.intervals import LEVEL, normal_interval, percentiles, sandwich_bt, sandwich_contextual
from analysis_lib.ranking.newton import NewtonReport, PairStats, fit_pairs
from analysis_lib.ranking.pairs import PairData, competitors, pair_indices
from analysis_lib.ranking.result import INIT_RATING, SCALE, Convergence, Ranking, rank_from_intervals
from analysis_lib.ranking.votes import LMARENA, BattleFormat, InvalidBattlesError, clean_battles

log = logging.getLogger(__name__)

CI = Literal["bootstrap", "sandwich", "none"]
Point = Literal["bootstrap_mean", "ml"]
OnSeparation = Literal["error", "ridge"]
#: Most bootstrap rounds (the rounds are kept: ``rounds × (models + features)`` floats).
MAX_ROUNDS = 100_000


def check_arguments(ci: str, rounds: int, level: float, reg: float, ridge: float) -> None:
    """Raise ``ValueError`` naming the first argument whose value cannot be used (module docstring)."""
    if ci not in ("bootstrap", "sandwich", "none"):
        raise ValueError(f"ci must be 'bootstrap', 'sandwich' or 'none', not {ci!r}")
    if ci == "bootstrap" and not (isinstance(rounds, int | np.integer) and 1 <= rounds <= MAX_ROUNDS):
        raise ValueError(f"rounds must be an integer from 1 to {MAX_ROUNDS:,} with a bootstrap, not {rounds!r} "
                         "(no intervals: ci='none')")
    if not (np.isfinite(level) and 0.0 < level < 1.0):
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), not {level!r}")
    if not (np.isfinite(reg) and reg >= 0.0):
        raise ValueError(f"reg must be a finite number >= 0, not {reg!r}")
    if not (np.isfinite(ridge) and ridge > 0.0):
        raise ValueError(f"ridge must be a finite number > 0, not {ridge!r}")


def anchor_offset(models: Sequence[str], r: np.ndarray, anchor: str | None) -> float:
    """The Elo offset ``1000 − 400 · r_anchor`` that puts ``anchor`` at 1000 (``anchor=None``: 1000)."""
    if anchor is None:
        return INIT_RATING
    if anchor not in models:
        raise ValueError(f"anchor {anchor!r} has no battles here")
    return INIT_RATING - SCALE * float(r[list(models).index(anchor)])


def _penalty(models: tuple[str, ...], pairs: np.ndarray, y: np.ndarray, counts: np.ndarray, reg: float,
             on_separation: OnSeparation, ridge: float) -> tuple[float, float, tuple[str, ...]]:
    """``(penalty of the full-data fit, ridge used, models the ridge sets)``; raises when the MLE does not exist
    and the caller did not opt into the ridge."""
    if on_separation not in ("error", "ridge"):
        raise ValueError(f"on_separation must be 'error' or 'ridge', not {on_separation!r}")
    if reg > 0:
        return reg, 0.0, ()
    diag = diagnose(models, pairs, y, counts)
    if diag.identifiable:
        return 0.0, 0.0, ()
    if on_separation == "error":
        raise NotIdentifiableError(diag.message())
    log.info("no MLE; ridge %g sets the ratings of %s", ridge, diag.outside)
    return ridge, ridge, diag.outside


def _convergence(full: NewtonReport, rounds: NewtonReport | None) -> Convergence:
    base = Convergence(int(full.iterations[0]), float(full.grad_norm[0]), float(full.step[0]))
    if rounds is None or not rounds.iterations.size:
        return base
    return replace(base, round_iterations=int(rounds.iterations.max()), round_grad_norm=float(rounds.grad_norm.max()))


def _assemble(
    models: tuple[str, ...], theta: np.ndarray, rounds: np.ndarray | None, cov: np.ndarray | None, *,
    ci: CI, level: float, point: Point, anchor: str | None, num_battles: np.ndarray, n_battles: int,
    convergence: Convergence, features: tuple[str, ...] = (), constant: np.ndarray | None = None, **extra: object,
) -> Ranking:
    m = len(models)
    offset = anchor_offset(models, theta[:m], anchor)
    elo_ml = SCALE * theta[:m] + offset
    coef_ml = theta[m:].copy()
    if ci == "bootstrap":
        assert rounds is not None
        centred = rounds[:, :m] - rounds[:, :m].mean(axis=1, keepdims=True)
        rounds = np.hstack([centred, rounds[:, m:]])
        mean, lo, hi = percentiles(SCALE * centred + offset, level)
        c_mean, c_lo, c_hi = percentiles(rounds[:, m:], level)
        rating = mean if point == "bootstrap_mean" else elo_ml
        coef = c_mean if point == "bootstrap_mean" else coef_ml.copy()
    elif ci == "sandwich":
        assert cov is not None
        lo_t, hi_t = normal_interval(theta, cov, level)
        lo, hi, rating = SCALE * lo_t[:m] + offset, SCALE * hi_t[:m] + offset, elo_ml
        c_lo, c_hi, coef = lo_t[m:], hi_t[m:], coef_ml.copy()
    else:
        lo = hi = np.full(m, np.nan)
        c_lo = c_hi = np.full(theta.size - m, np.nan)
        rating, coef = elo_ml, coef_ml.copy()
    rank = rank_from_intervals(rating, rating) if ci == "none" else rank_from_intervals(lo, hi)
    if constant is not None and constant.any():
        for arr in (coef, c_lo, c_hi, coef_ml):
            arr[constant] = np.nan
    return Ranking(
        models=models, rating=rating, rating_ml=elo_ml, ci_lower=lo, ci_upper=hi, ci_method=ci, level=level,
        rank=rank, num_battles=num_battles, n_battles=n_battles, anchor=anchor, offset=offset, theta=theta,
        convergence=convergence, features=features, coef_estimate=coef, coef_lower=c_lo, coef_upper=c_hi,
        coef_ml=coef_ml, rounds=rounds if ci == "bootstrap" else None, covariance=cov, point=point, **extra,  # type: ignore[arg-type]
    )


def rank_pairs(
    data: PairData,
    *,
    anchor: str | None = None,
    ci: CI = "bootstrap",
    rounds: int = 100,
    seed: int = 0,
    level: float = LEVEL,
    point: Point = "bootstrap_mean",
    reg: float = 0.0,
    on_separation: OnSeparation = "error",
    ridge: float = RIDGE,
    hessian_reg: float = 0.0,
    progress: bool | None = None,
) -> Ranking:
    """Plain BT leaderboard of :class:`PairData` (module docstring; arguments as :func:`leaderboard`)."""
    check_arguments(ci, rounds, level, reg, ridge)
    if not len(data.counts):
        raise InvalidBattlesError("no battles to rank")
    models = tuple(data.models)
    stats = PairStats.from_rows(data.pairs, data.outcomes, len(models))
    penalty, used_ridge, ridge_models = _penalty(models, data.pairs, data.outcomes, data.counts, reg, on_separation,
                                                 ridge)
    n, s = stats.totals(data.counts)
    theta, rep = fit_pairs(stats, n, s, reg=penalty)
    check_converged(rep, "full-data fit")
    theta = theta[0] - theta[0].mean()
    samples, cov, outside, rrep = None, None, None, None
    if ci == "bootstrap":
        samples, outside, rrep = bootstrap_pairs(
            stats, models, data.pairs, data.outcomes, data.counts, theta, rounds, seed, reg=reg, ridge=ridge,
            progress=progress,
        )
    elif ci == "sandwich":
        cov = sandwich_bt(stats, data.counts, theta, reg=penalty, hessian_reg=hessian_reg)
    elif ci != "none":
        raise ValueError(f"ci must be 'bootstrap', 'sandwich' or 'none', not {ci!r}")
    return _assemble(
        models, theta, samples, cov, ci=ci, level=level, point=point, anchor=anchor,
        num_battles=data.battles_per_model(), n_battles=data.n_battles, convergence=_convergence(rep, rrep),
        reg=reg, ridge=used_ridge, ridge_models=ridge_models, dropped=dict(data.dropped),
        **_ridge_counts(outside),  # type: ignore[arg-type]
    )


def _ridge_counts(outside: np.ndarray | None) -> dict[str, object]:
    """``ridge_resamples`` (rounds fitted with the ridge) and ``ridge_rounds`` (per model) of a bootstrap."""
    if outside is None:
        return {"ridge_resamples": 0}
    return {"ridge_resamples": int(outside.any(axis=1).sum()), "ridge_rounds": outside.sum(axis=0).astype(np.int64)}


def rank_contextual(
    frame: pl.DataFrame,
    features: Sequence[str],
    *,
    anchor: str | None = None,
    ci: CI = "bootstrap",
    rounds: int = 100,
    seed: int = 0,
    level: float = LEVEL,
    point: Point = "bootstrap_mean",
    reg: float = 0.0,
    convention: Convention = "float",
    on_separation: OnSeparation = "error",
    ridge: float = RIDGE,
    hessian_reg: float = 0.0,
    progress: bool | None = None,
    dropped: Mapping[str, int] | None = None,
) -> Ranking:
    """Contextual BT leaderboard of checked battles (``model_a``, ``model_b``, ``y``, ``<f>_a``, ``<f>_b``).

    A feature with zero spread gets ``z = 0`` and a NaN coefficient; without a penalty it is left out of the fit
    (its coefficient is not identified)."""
    check_arguments(ci, rounds, level, reg, ridge)
    if frame.height == 0:
        raise InvalidBattlesError("no battles to rank")
    models = competitors(frame)
    pairs = pair_indices(frame, models)
    y = frame["y"].to_numpy().astype(float)
    large = frame.height >= LARGE_BATTLES
    if large:  # arena scale: the features built sorted by pair and oriented, one per task (sorted_battles)
        battles, sd = sb.SortedBattles.from_frame(frame, pairs, y, features, convention, len(models), THREADS)
        constant = ~(sd > 0)
    else:
        z, _ = style_features(frame, features, convention)
        constant = ~(z != 0).any(axis=0)  # zero spread: style_features sets z = 0 (any other feature has some z != 0)
    if constant.any():
        log.info("features with zero spread (coefficient NaN): %s", [f for f, c in zip(features, constant) if c])
    keep = ~constant if not reg else np.ones(len(features), dtype=bool)
    ones = np.ones(len(y))
    penalty, used_ridge, ridge_models = _penalty(models, pairs, y, ones, reg, on_separation, ridge)
    if large:
        battles = battles.keep_features(keep)
        full = battles.full()
        with one_blas_thread():  # the passes run on THREADS threads, each with one BLAS thread
            theta, rep = sb.fit(full, penalty, threads=THREADS)
    else:
        design = ContextualDesign.build(pairs, z[:, keep], y, len(models))
        theta, rep = newton(design, ones, penalty)
    check_converged(rep, "full-data fit")
    samples, cov, outside, rrep = None, None, None, None
    boot_reg = penalty if used_ridge == 0 else 0.0
    if ci == "bootstrap" and large:
        samples, outside, rrep = bootstrap_sorted(battles, models, theta, rounds, seed, reg=boot_reg, ridge=ridge,
                                                  progress=progress)
    elif ci == "bootstrap":
        samples, outside, rrep = bootstrap_battles(design, models, theta, rounds, seed, reg=boot_reg, ridge=ridge,
                                                   progress=progress)
    elif ci == "sandwich":
        cov = sandwich_contextual(full if large else design, theta, reg=penalty, hessian_reg=hessian_reg)
    elif ci != "none":
        raise ValueError(f"ci must be 'bootstrap', 'sandwich' or 'none', not {ci!r}")
    m = len(models)
    full_theta, full_rounds, full_cov = _expand(theta, samples, cov, m, keep)
    num = np.bincount(pairs.ravel(), minlength=m).astype(float)
    return _assemble(
        models, full_theta, full_rounds, full_cov, ci=ci, level=level, point=point, anchor=anchor, num_battles=num,
        n_battles=frame.height, convergence=_convergence(rep, rrep), features=tuple(features), constant=constant,
        reg=reg, ridge=used_ridge, ridge_models=ridge_models, dropped=dict(dropped or {}),
        **_ridge_counts(outside),  # type: ignore[arg-type]
    )


def _expand(theta: np.ndarray, rounds: np.ndarray | None, cov: np.ndarray | None, m: int,
            keep: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Parameters of the fitted features back in the order of all features (0 / NaN for those left out)."""
    if keep.all():
        return theta, rounds, cov
    idx = np.concatenate([np.arange(m), m + np.flatnonzero(keep)])
    p = m + keep.size
    full = np.zeros(p)
    full[idx] = theta
    full_rounds = None
    if rounds is not None:
        full_rounds = np.zeros((rounds.shape[0], p))
        full_rounds[:, idx] = rounds
    full_cov = None
    if cov is not None:
        full_cov = np.full((p, p), np.nan)
        full_cov[np.ix_(idx, idx)] = cov
    return full, full_rounds, full_cov


def leaderboard(
    battles: object,
    *,
    anchor: str | None = None,
    exclude: Sequence[str] = (),
    ci: CI = "bootstrap",
    rounds: int = 100,
    seed: int = 0,
    level: float = LEVEL,
    point: Point = "bootstrap_mean",
    features: Sequence[str] = (),
    reg: float = 0.0,
    convention: Convention = "float",
    on_separation: OnSeparation = "error",
    ridge: float = RIDGE,
    hessian_reg: float = 0.0,
    drop_invalid: bool = False,
    fmt: BattleFormat = LMARENA,
    progress: bool | None = None,
    source: str | None = None,
) -> Ranking:
    """Bradley–Terry leaderboard of ``battles`` (a polars or pandas frame), with intervals (module docstring).

    ``anchor``: the model put at 1000 in the full-data fit (``None``: mean 1000). ``exclude``: models whose
    battles are dropped (counted). ``ci``: ``"bootstrap"`` (``rounds`` rounds, ``seed``), ``"sandwich"`` or
    ``"none"``; ``level``: interval coverage. ``point``: the reported rating with a bootstrap, its mean over
    rounds (the papers' convention) or the full-data fit (``"ml"``). ``features``: base names of style features
    (columns ``<f>_a``, ``<f>_b``) for contextual BT, ``convention`` ``"float"`` (exact values) or ``"paper"``
    (each value truncated to int32 first, as the Search Arena authors stored them). ``reg``: penalty
    ``reg/2 ‖θ‖²`` on the summed loss (default 0: maximum likelihood). ``on_separation`` / ``ridge``: what to do
    when the MLE does not exist. ``hessian_reg``: arena-rank's Hessian ridge for sandwich intervals (0: exact
    ``Σ r = 0`` constraint; :mod:`~analysis_lib.ranking.intervals`). ``drop_invalid``: drop (and count) rows
    without a vote, with an unknown label, a missing name or feature, or a self-battle instead of raising.
    ``fmt``: column names and outcome labels. ``progress``: a tqdm bar over bootstrap rounds (``None``: only on
    an interactive terminal). ``source``: a file name for error messages.
    """
    check_arguments(ci, rounds, level, reg, ridge)
    clean = clean_battles(battles, fmt, features=features, exclude=exclude, drop_invalid=drop_invalid,
                          source=source)
    common = dict(anchor=anchor, ci=ci, rounds=rounds, seed=seed, level=level, point=point, reg=reg,
                  on_separation=on_separation, ridge=ridge, hessian_reg=hessian_reg, progress=progress)
    if features:
        return rank_contextual(clean.frame, features, convention=convention, dropped=clean.dropped,
                               **common)  # type: ignore[arg-type]
    if clean.frame.height == 0:
        raise InvalidBattlesError(f"{source + ': ' if source else ''}no battles left to rank")
    data = PairData.from_clean(clean.frame, dropped=clean.dropped)
    return rank_pairs(data, **common)  # type: ignore[arg-type]

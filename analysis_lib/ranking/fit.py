r"""The one leaderboard: Bradley–Terry (or contextual BT with style features) on any battles, overall or per subset.

:func:`leaderboard` checks the battles once (:class:`~analysis_lib.ranking.battles.Battles`: no vote, unknown
labels, self-battles are an error unless ``drop_invalid``; ``exclude`` drops models, counted; a
:class:`~analysis_lib.ranking.battles.Battles` already checked is not checked again), checks that the MLE exists
(:mod:`~analysis_lib.ranking.graph`; unless ``reg > 0``), fits, and returns a
:class:`~analysis_lib.ranking.result.Ranking` with bootstrap (default) or sandwich intervals; with ``by=COLUMN``
a :class:`~analysis_lib.ranking.result.Leaderboards`: the overall leaderboard and one per value of the column,
each the leaderboard of that subset's battles alone with the same settings (FastChat's per-category boards).

Plain BT: ratings ``r`` (log10-odds), ``P(a beats b) = σ(ln 10 · (r_a − r_b))``, ties half a win, loss the
count-weighted negative log-likelihood *summed* over the unique ``(a, b, y)`` rows (+ ``reg/2 ‖r‖²`` if asked),
exact sparse Newton (:mod:`~analysis_lib.ranking._newton`); bootstrap rounds resample the battles (multinomial
counts over the unique rows, :func:`~analysis_lib.ranking._bootstrap.bootstrap_counts`). Contextual BT:
``η = ln 10 · (r_a − r_b) + zᵀβ`` with ``z`` the z-scored normalised differences ``(x_a − x_b)/(x_a + x_b + 1)``
of each feature (columns ``<f>_a``, ``<f>_b``), penalty ``reg/2 ‖(r, β)‖²`` on the summed loss (the Search Arena
authors use ``reg = 0.5``; arena-rank's ``reg`` is on the mean loss and the coefficients only:
:mod:`~analysis_lib.ranking._contextual`), bootstrap over battles. Both are one problem type each
(:class:`_PlainProblem`, :class:`~analysis_lib.ranking._contextual.ContextualProblem`) that this module fits the
same way. Nothing here is specific to an arena: the anchor, the excluded models, the penalty and the feature
convention are the caller's.

The reported ``rating`` is the full-data fit (``point="ml"``, as arena-rank and FastChat report it, and the
anchor is exactly 1000) with the bootstrap's percentile intervals; ``point="bootstrap_mean"`` reports the mean over
the rounds instead (the Search Arena authors' Table D.1 convention: there the anchor shows near, not at, 1000).
:meth:`~analysis_lib.ranking.result.Ranking.header` prints the settings beside the results.

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
``reg`` ≥ 0 and ``ridge`` > 0 (finite), ``features`` a list (not a string), ``anchor`` a model with battles (the
message names the closest name); a bad value raises ``ValueError`` (``TypeError``) naming the argument.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, overload

import numpy as np
import polars as pl

from analysis_lib.ranking._bootstrap import bootstrap_pairs
from analysis_lib.ranking._contextual import ContextualProblem
from analysis_lib.ranking._intervals import LEVEL, normal_interval, percentiles, sandwich_bt
from analysis_lib.ranking._newton import ConvergenceError, NewtonReport, PairStats, check_converged, fit_pairs
from analysis_lib.ranking._pairs import PairData, competitors, pair_indices
from analysis_lib.ranking.battles import Battles, check_columns, check_features, closest, plural
from analysis_lib.ranking.features import Convention
from analysis_lib.ranking.graph import RIDGE, NotIdentifiableError, diagnose
from analysis_lib.ranking.result import INIT_RATING, SCALE, Convergence, Leaderboards, Ranking, rank_from_intervals
from analysis_lib.ranking.votes import LMARENA, BattleFormat, InvalidBattlesError

log = logging.getLogger(__name__)

CI = Literal["bootstrap", "sandwich", "none"]
Point = Literal["bootstrap_mean", "ml"]
OnSeparation = Literal["error", "ridge"]
Draws = Literal["pairs", "battles"]
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


def check_anchor(anchor: str | None, models: Sequence[str]) -> None:
    """Raise ``ValueError`` when ``anchor`` is not one of ``models``, naming the closest model name."""
    if anchor is not None and anchor not in models:
        raise ValueError(f"anchor {anchor!r} has no battles here{closest(anchor, models)}")


def anchor_offset(models: Sequence[str], r: np.ndarray, anchor: str | None) -> float:
    """The Elo offset ``1000 − 400 · r_anchor`` that puts ``anchor`` at 1000 (``anchor=None``: 1000)."""
    if anchor is None:
        return INIT_RATING
    check_anchor(anchor, models)
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


def _ridge_counts(outside: np.ndarray | None) -> dict[str, object]:
    """``ridge_resamples`` (rounds fitted with the ridge) and ``ridge_rounds`` (per model) of a bootstrap."""
    if outside is None:
        return {"ridge_resamples": 0}
    return {"ridge_resamples": int(outside.any(axis=1).sum()), "ridge_rounds": outside.sum(axis=0).astype(np.int64)}


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


class _PlainProblem:
    """Plain BT on checked battles: the unique matchups (:class:`~analysis_lib.ranking._pairs.PairData`) folded into
    pairs once (:class:`~analysis_lib.ranking._newton.PairStats`); the same methods as
    :class:`~analysis_lib.ranking._contextual.ContextualProblem`."""

    def __init__(self, frame: pl.DataFrame):
        self.data = PairData.from_frame(frame)
        self.models = self.data.models
        self.pairs, self.y, self.counts = self.data.pairs, self.data.outcomes, self.data.counts
        self.stats = PairStats.from_rows(self.pairs, self.y, len(self.models))
        self.constant = np.zeros(0, dtype=bool)
        self.keep = np.zeros(0, dtype=bool)

    def fit(self, penalty: float) -> tuple[np.ndarray, NewtonReport]:
        n, s = self.stats.totals(self.counts)
        theta, rep = fit_pairs(self.stats, n, s, reg=penalty)
        return theta[0] - theta[0].mean(), rep

    def bootstrap(self, theta: np.ndarray, rounds: int, seed: int, *, reg: float, ridge: float,
                  progress: bool | None) -> tuple[np.ndarray, np.ndarray, NewtonReport]:
        return bootstrap_pairs(self.stats, self.models, self.pairs, self.y, self.counts, theta, rounds, seed,
                               reg=reg, ridge=ridge, progress=progress)

    def sandwich(self, theta: np.ndarray, penalty: float, hessian_reg: float) -> np.ndarray:
        return sandwich_bt(self.stats, self.counts, theta, reg=penalty, hessian_reg=hessian_reg)

    @property
    def num_battles(self) -> np.ndarray:
        return self.data.battles_per_model()


@dataclass(frozen=True)
class _Options:
    """The settings of one fit (:func:`leaderboard`'s arguments)."""

    features: tuple[str, ...]
    anchor: str | None
    ci: CI
    rounds: int
    seed: int
    level: float
    point: Point
    reg: float
    convention: Convention
    on_separation: OnSeparation
    ridge: float
    hessian_reg: float
    progress: bool | None
    draws: Draws


def _fit(battles: Battles, o: _Options) -> Ranking:
    """One leaderboard of checked battles (module docstring)."""
    frame = battles.fit_frame(o.features)
    if frame.height == 0:
        raise InvalidBattlesError(f"{battles.source + ': ' if battles.source else ''}no battles left to rank")
    problem: _PlainProblem | ContextualProblem
    if o.features or o.draws == "battles":
        models = competitors(frame)
        check_anchor(o.anchor, models)
        problem = ContextualProblem(frame, o.features, o.convention, models, pair_indices(frame, models),
                                    frame["y"].to_numpy().astype(float), o.reg)
        if problem.constant.any():
            log.info("features with zero spread (coefficient NaN): %s",
                     [f for f, c in zip(o.features, problem.constant) if c])
        counts = np.ones(len(problem.y))
    else:
        problem = _PlainProblem(frame)
        check_anchor(o.anchor, problem.models)
        counts = problem.counts
    models = problem.models
    penalty, used_ridge, ridge_models = _penalty(models, problem.pairs, problem.y, counts, o.reg, o.on_separation,
                                                 o.ridge)
    theta, rep = problem.fit(penalty)
    check_converged(rep, "full-data fit")
    samples, cov, outside, rrep = None, None, None, None
    if o.ci == "bootstrap":  # rounds with an MLE unpenalised (or with the caller's reg), the others with the ridge
        samples, outside, rrep = problem.bootstrap(theta, o.rounds, o.seed, reg=o.reg, ridge=o.ridge,
                                                   progress=o.progress)
    elif o.ci == "sandwich":
        cov = problem.sandwich(theta, penalty, o.hessian_reg)
    m = len(models)
    if isinstance(problem, ContextualProblem):
        theta, samples, cov = _expand(theta, samples, cov, m, problem.keep)
        num = np.bincount(problem.pairs.ravel(), minlength=m).astype(float)
        n_battles = frame.height
    else:
        num, n_battles = problem.num_battles, problem.data.n_battles
    return _assemble(
        models, theta, samples, cov, ci=o.ci, level=o.level, point=o.point, anchor=o.anchor, num_battles=num,
        n_battles=n_battles, convergence=_convergence(rep, rrep), features=o.features,
        constant=problem.constant if isinstance(problem, ContextualProblem) else None, reg=o.reg, ridge=used_ridge,
        ridge_models=ridge_models,
        dropped=dict(battles.dropped), seed=o.seed, convention=o.convention, ties=_ties(battles.fmt),
        on_separation=o.on_separation, fallback_ridge=o.ridge, hessian_reg=o.hessian_reg,
        **_ridge_counts(outside),  # type: ignore[arg-type]
    )


def _ties(fmt: BattleFormat) -> tuple[str, ...]:
    return () if fmt.outcome else tuple(fmt.ties)


def _by(battles: Battles, by: str, o: _Options, min_battles: int) -> Leaderboards:
    """:func:`leaderboard` with ``by``: the overall fit, then one per value of ``by`` (nulls in the overall only)."""
    check_columns(battles.frame, [by], battles.source)
    overall = _fit(battles, o)
    subsets: dict[object, Ranking] = {}
    skipped: dict[object, str] = {}
    for value in sorted(battles.frame[by].drop_nulls().unique().to_list()):
        sub = replace(battles.where(pl.col(by) == value), dropped={})
        if sub.n_battles < min_battles:
            skipped[value] = f"{plural(sub.n_battles, 'battle')}, fewer than min_battles={min_battles}"
            continue
        anchor = o.anchor if o.anchor in sub.models else None  # the anchor sets only the offset
        try:
            subsets[value] = _fit(sub, replace(o, anchor=anchor))
        except (InvalidBattlesError, NotIdentifiableError, ConvergenceError) as exc:
            raise type(exc)(f"{by} = {value!r}: {exc} (leave small subsets out with min_battles=, command line "
                            "--min-battles; or --on-separation ridge)") from exc
    return Leaderboards(by, overall, subsets, skipped)


@overload
def leaderboard(battles: object, *, by: None = None, anchor: str | None = ..., exclude: Sequence[str] = ...,
                ci: CI = ..., rounds: int = ..., seed: int = ..., level: float = ..., point: Point = ...,
                features: Sequence[str] = ..., reg: float = ..., convention: Convention = ...,
                on_separation: OnSeparation = ..., ridge: float = ..., hessian_reg: float = ...,
                drop_invalid: bool = ..., fmt: BattleFormat = ..., min_battles: int = ..., progress: bool | None = ...,
                source: str | None = ..., draws: Draws | None = ...) -> Ranking: ...
@overload
def leaderboard(battles: object, *, by: str, anchor: str | None = ..., exclude: Sequence[str] = ...,
                ci: CI = ..., rounds: int = ..., seed: int = ..., level: float = ..., point: Point = ...,
                features: Sequence[str] = ..., reg: float = ..., convention: Convention = ...,
                on_separation: OnSeparation = ..., ridge: float = ..., hessian_reg: float = ...,
                drop_invalid: bool = ..., fmt: BattleFormat = ..., min_battles: int = ..., progress: bool | None = ...,
                source: str | None = ..., draws: Draws | None = ...) -> Leaderboards: ...
def leaderboard(
    battles: object,
    *,
    by: str | None = None,
    anchor: str | None = None,
    exclude: Sequence[str] = (),
    ci: CI = "bootstrap",
    rounds: int = 100,
    seed: int = 0,
    level: float = LEVEL,
    point: Point = "ml",
    features: Sequence[str] = (),
    reg: float = 0.0,
    convention: Convention = "float",
    on_separation: OnSeparation = "error",
    ridge: float = RIDGE,
    hessian_reg: float = 0.0,
    drop_invalid: bool = False,
    fmt: BattleFormat = LMARENA,
    min_battles: int = 0,
    progress: bool | None = None,
    source: str | None = None,
    draws: Draws | None = None,
) -> Ranking | Leaderboards:
    """Bradley–Terry leaderboard of ``battles`` (a polars or pandas frame, or checked
    :class:`~analysis_lib.ranking.battles.Battles`), with intervals (module docstring).

    ``by``: a column; returns :class:`~analysis_lib.ranking.result.Leaderboards` (the overall leaderboard and one per
    value, values with fewer than ``min_battles`` battles skipped; a subset without the anchor's battles is rated
    with its mean at 1000). ``anchor``: the model put at 1000 in the full-data fit (``None``: mean 1000).
    ``exclude``: models whose battles are dropped (counted). ``ci``: ``"bootstrap"`` (``rounds`` rounds, ``seed``),
    ``"sandwich"`` or ``"none"``; ``level``: interval coverage. ``point``: the reported rating with a bootstrap, the
    full-data fit (``"ml"``, default) or the mean over rounds (``"bootstrap_mean"``, the Search Arena papers').
    ``features``: a list of base names of style features (columns ``<f>_a``, ``<f>_b``) for contextual BT,
    ``convention`` ``"float"`` (exact values) or ``"paper"`` (each value truncated to int32 first, as the Search
    Arena authors stored them). ``reg``: penalty ``reg/2 ‖θ‖²`` on the summed loss (default 0: maximum likelihood).
    ``on_separation`` / ``ridge``: what to do when the MLE does not exist. ``hessian_reg``: arena-rank's Hessian
    ridge for sandwich intervals (0: exact ``Σ r = 0`` constraint; :mod:`~analysis_lib.ranking._intervals`).
    ``drop_invalid``: drop (and count) rows without a vote, with an unknown label, a missing name or feature, or a
    self-battle instead of raising. ``fmt``: column names and outcome labels. ``progress``: a tqdm bar over
    bootstrap rounds (``None``: only on an interactive terminal). ``source``: a file name for error messages.
    ``fmt``, ``drop_invalid`` and ``source`` apply to a frame (checked battles carry their own). ``draws``: what
    the bootstrap resamples, ``"pairs"`` (the unique matchups with multinomial counts: plain BT's default) or
    ``"battles"`` (the battle rows in order: contextual BT's, and the only choice with ``features``); a plain fit
    with ``draws="battles"`` sees the same resampled battles, round by round, as a contextual fit of the same
    battles with the same ``seed`` (paired rounds).
    """
    check_arguments(ci, rounds, level, reg, ridge)
    features = check_features(features)
    if on_separation not in ("error", "ridge"):
        raise ValueError(f"on_separation must be 'error' or 'ridge', not {on_separation!r}")
    draws = draws or ("battles" if features else "pairs")
    if draws not in ("pairs", "battles") or (features and draws != "battles"):
        raise ValueError(f"draws must be 'battles' with features, or 'pairs' or 'battles' without, not {draws!r}")
    if isinstance(battles, Battles):
        checked = battles.without(exclude)
    else:
        checked = Battles.from_frame(battles, fmt, features=features, exclude=exclude, drop_invalid=drop_invalid,
                                     source=source)
    o = _Options(features, anchor, ci, rounds, seed, level, point, reg, convention, on_separation, ridge,
                 hessian_reg, progress, draws)
    return _fit(checked, o) if by is None else _by(checked, by, o, min_battles)

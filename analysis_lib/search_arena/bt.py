"""Search Arena's leaderboards and style control: the battle filter, the paper's anchor, exclusions, penalty,
feature sets and conventions, and the SA-E4 comparison, on top of the paper-agnostic :mod:`analysis_lib.ranking`.

Everything here follows the authors' analysis code (``lmarena/search-arena``, ``scripts/utils.py`` and
``scripts/preference_analysis.ipynb``); where we choose differently the docstring says so. The models, the
solvers and the leaderboard convention are documented in :mod:`analysis_lib.ranking`; every fit here is one call
of :func:`analysis_lib.ranking.leaderboard` on the battles screened here, with the paper's defaults, and returns its
:class:`~analysis_lib.ranking.Ranking` (``.to_frame()``: the leaderboard, ``.coefficients()``: the style
coefficients). The keyword names are the ranking core's (``anchor``, ``rounds``, ``seed``, ``exclude``, ``ci``,
``reg``, ``convention``, ``progress``), and so is the anchor convention (the model put at 1000 in the full-data fit;
``None``: the mean rating is 1000); the paper's anchor is the default, and a release without its battles is rated
with the mean at 1000 (:func:`present_anchor`). The paper's rating is the bootstrap mean
(``point="bootstrap_mean"``, as Table D.1). This module adds what is Search Arena's:

Battles, screened once
    :func:`prepare_battles` keeps battles with a vote, drops the models outside the leaderboard (the non-search
    ``gemini-2.5-pro``: ``in_leaderboard = false`` in ``resources/model_names.csv``) and self-battles
    (``model_a == model_b``) through :meth:`analysis_lib.ranking.Battles.from_frame`, and reports how many of each
    it dropped (a ``winner`` label outside the release's vocabulary is counted and reported, never taken for a
    missing vote). Outcome for model A: 1 (``model_a``), 0 (``model_b``), 0.5 (``tie`` and ``tie (bothbad)``).
    Its result is the ranking core's checked :class:`~analysis_lib.ranking.Battles`: every fit here takes either a
    frame (screened on entry) or those (not screened again; their subsets, ``.where``, and further exclusions,
    ``.without``, stay screened), so the release's battles pass the vote checks once on their way to a leaderboard.

Bradley–Terry (SA-D5): :func:`leaderboard`
    Unpenalised BT on the unique ``(model_a, model_b, outcome)`` rows; ratings ``400 · r + offset`` with the
    anchor (:data:`~analysis_lib.search_arena.models.ANCHOR`, ``gpt-4o-search``) at 1000 in the full-data fit,
    and every bootstrap round shifted by that same offset, so the anchor keeps an interval and its reported
    rating is near, not exactly, 1000 (999.2 in Table D.1).

Contextual Bradley–Terry (SA-32L, SA-32C, SA-F6L, SA-F6R, SA-E4): :func:`style_control`
    The authors' penalty :data:`REG` ``= 0.5`` on ratings and coefficients alike, summed over battles
    (:mod:`analysis_lib.ranking._contextual` states how this ``reg`` differs from arena-rank's), z-scored
    normalised differences of the feature sets :data:`LENGTH`, :data:`CITATIONS`, :data:`SOURCES`,
    :data:`~analysis_lib.search_arena.schema.ATTRIBUTION_COUNTS`, :data:`ALL_CONTROLS`. ``convention="paper"``
    (default): the authors store every per-side value in an ``int32`` array before differencing, so fractional
    values (mean words per turn, citations per turn, attribution counts per turn) are truncated toward zero.
    ``convention="float"`` uses the exact values; :func:`convention_shift` reports how much the coefficients move.

Ratings before and after control (SA-E4)
    :func:`control_effect` fits one battle frame twice, with no features (unpenalised BT, as the authors'
    ``compute_bt``) and with the controls (penalty :data:`REG`, as their ``compute_style_control``), on the same
    bootstrap draws, and compares the spread of the ratings (:func:`rating_spread`: SD across models);
    "converge" = the controlled spread is smaller.

Names as in :func:`analysis_lib.ranking.leaderboard`: ``rounds`` (bootstrap rounds), ``exclude`` (models whose
battles are left out). Intervals: bootstrap (``rounds`` rounds, the paper's method) by default; ``ci="sandwich"``
gives sandwich (robust) intervals of the same fit, ``rounds=0`` none.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from analysis_lib import ranking
from analysis_lib.ranking import Battles, Ranking
from analysis_lib.ranking.features import Convention
from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.models import ANCHOR
from analysis_lib.search_arena.screening import (
    BOTH_CITE,
    DECIDED,
    attribution_battles,
    prepare_battles,
    screened,
)

#: The fits, the paper's feature sets, and the screen with its subsets (:mod:`.screening`, re-exported here).
__all__ = [
    "leaderboard", "style_control", "style_by_subset", "control_effect", "ControlEffect", "convention_shift",
    "rating_spread", "present_anchor", "REG", "LENGTH", "CITATIONS", "SOURCES", "ALL_CONTROLS",
    "prepare_battles", "BOTH_CITE", "DECIDED", "attribution_battles",
]

log = logging.getLogger(__name__)

REG = 0.5
"""The authors' penalty of the contextual fit (``reg/2 ‖(r, β)‖²`` on the summed loss)."""

#: Feature sets of the paper (base names; the frame holds ``<name>_a`` and ``<name>_b``).
LENGTH: tuple[str, ...] = ("response_length",)
CITATIONS: tuple[str, ...] = ("citation_count",)
SOURCES: tuple[str, ...] = ("citation_count", *(f"cites_{g}" for g in DOMAIN_GROUPS))
ALL_CONTROLS: tuple[str, ...] = ("response_length", *SOURCES)

# --------------------------------------------------------------------------------------------------------------
# Bradley-Terry leaderboards (SA-D5) and style control
# --------------------------------------------------------------------------------------------------------------

CI = Literal["bootstrap", "sandwich", "none"]
#: What every fit here takes: a battle frame (screened on entry) or battles already screened.
Frame = pl.DataFrame | Battles


def leaderboard(
    battles: Frame,
    *,
    anchor: str | None = ANCHOR,
    rounds: int = 100,
    seed: int = 0,
    exclude: Sequence[str] | None = None,
    ci: CI = "bootstrap",
    progress: bool | None = None,
) -> Ranking:
    """The Table D.1 leaderboard of the screened battles (:func:`screened`): plain BT by
    :func:`analysis_lib.ranking.leaderboard` with the Search Arena anchor and the paper's rating, the bootstrap
    mean.

    Likelihood: ``P(a beats b) = σ(ln 10 · (r_a − r_b))``, ties half a win, no penalty. ``.to_frame()``: ``model,
    rating, ci_lower, ci_upper, rank, num_battles, rating_ml`` with ``rating`` the bootstrap mean of ``400 r +
    offset`` (offset: ``anchor`` at 1000 in the full-data fit), CI the 2.5/97.5 percentiles of ``rounds``
    bootstrap rounds, ``rank`` 1 + the models whose lower bound exceeds this model's upper bound, ``rating_ml`` the
    full-data fit (anchor exactly 1000); ``num_battles`` counts ties too. ``ci="sandwich"``: sandwich intervals
    around the full-data fit instead; ``ci="none"`` (or ``rounds=0`` with the bootstrap): no intervals, the rating
    is the ML fit.
    """
    return _fit(screened(battles, exclude), (), anchor, ci, rounds, seed, progress=progress)


def _fit(prep: Battles, features: Sequence[str], anchor: str | None, ci: CI, rounds: int, seed: int,
         **kwargs) -> Ranking:
    """One leaderboard of screened battles by the ranking core, with the paper's rating (the bootstrap mean). Where
    the data have no MLE (a model never won or never lost, a group no battle links: a small release) the models
    outside the linked group get ranking's fallback ridge, as the authors' unpenalised logistic regression returns
    finite ratings where it has none; the :class:`~analysis_lib.ranking.Ranking` names them (``ridge_models``)."""
    ci = _ci(ci, rounds)
    kwargs.setdefault("on_separation", "ridge")
    return ranking.leaderboard(prep, anchor=present_anchor(prep.frame, anchor), ci=ci, rounds=rounds, seed=seed,
                               features=features, point="bootstrap_mean", **kwargs)


def present_anchor(battles: pl.DataFrame, anchor: str | None = ANCHOR) -> str | None:
    """``anchor`` when some battle of ``battles`` has it. The paper's anchor (:data:`ANCHOR`) missing gives ``None``:
    a release without it (a later one, another arena) is rated with the ratings' mean at 1000 instead; any other
    anchor missing is a mistake of the caller (``ValueError``, naming the closest model). The anchor only sets the
    offset of the ratings, never their differences or the coefficients."""
    if anchor is None or battles.is_empty():
        return None
    present = battles.select(pl.concat([pl.col("model_a"), pl.col("model_b")]).eq(anchor).any()).item()
    if not present and anchor != ANCHOR:
        names = pl.concat([battles["model_a"], battles["model_b"]]).cast(pl.String).unique().to_list()
        ranking.fit.check_anchor(anchor, names)
    return anchor if present else None


def _ci(ci: CI, rounds: int) -> CI:
    if ci not in ("bootstrap", "sandwich", "none"):
        raise ValueError(f"ci must be 'bootstrap', 'sandwich' or 'none', not {ci!r}")
    if rounds < 0:
        raise ValueError(f"rounds must be 0 or more, not {rounds}")
    return "none" if ci == "bootstrap" and rounds == 0 else ci


def style_control(
    battles: Frame,
    features: Sequence[str],
    *,
    anchor: str | None = ANCHOR,
    rounds: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    reg: float = REG,
    exclude: Sequence[str] | None = None,
    ci: CI = "bootstrap",
    progress: bool | None = None,
) -> Ranking:
    """Contextual (style-controlled) BT of the screened battles (:func:`screened`), by
    :func:`analysis_lib.ranking.leaderboard` with ``features``, the authors' penalty and convention.

    Loss (module docstring): ``−Σ_i [y_i log σ(η_i) + (1−y_i) log σ(−η_i)] + reg/2 ‖(r, β)‖²`` with
    ``η_i = ln 10 (r_a − r_b) + z_iᵀβ``, ``z`` the z-scored normalised differences of ``features`` (base names:
    the frame holds ``<f>_a`` and ``<f>_b``; see :data:`LENGTH`, :data:`CITATIONS`, :data:`SOURCES`,
    :data:`~analysis_lib.search_arena.schema.ATTRIBUTION_COUNTS`, :data:`ALL_CONTROLS`), ``reg = 0.5``. Battles are
    resampled ``rounds`` times.

    ``.to_frame()``: the controlled ratings as :func:`leaderboard`'s; ``.coefficients()``: ``feature, estimate``
    (bootstrap mean, as the paper reports; natural log-odds per SD of the feature), ``ci_lower, ci_upper``
    (2.5/97.5 percentiles), ``estimate_ml`` (full-data fit); ``.relative_to_anchor()``, ``.centred()``,
    ``.differences()``: the intervals of differences to the anchor, of the anchor-free ratings and of every pair.
    ``convention``: ``"paper"`` truncates per-side values to int32 as the authors did; ``"float"`` is exact.
    Filters of the paper (e.g. both sides cite, decided battles) are the caller's: ``prep.where(BOTH_CITE)``,
    ``prep.where(DECIDED)``.
    """
    return _fit(screened(battles, exclude), features, anchor, ci, rounds, seed, reg=reg, convention=convention,
                progress=progress)


def style_by_subset(
    battles: Frame,
    features: Sequence[str],
    by: str = "primary_intent",
    *,
    skip: Sequence[str] = ("Other",),
    rounds: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    min_battles: int = 30,
    anchor: str | None = ANCHOR,
    reg: float = REG,
    exclude: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Coefficients of ``features`` fitted separately on each value of ``by`` (SA-D7, SA-E1).

    Columns ``subset, feature, estimate, ci_lower, ci_upper, estimate_ml, n``. The battles are screened once
    (:func:`screened` with ``exclude``), then split; subsets with fewer than ``min_battles`` battles are left out.
    ``anchor``, ``reg``, ``convention`` go to every fit. The anchor only sets the offset of the ratings, never the
    coefficients, so a subset in which ``anchor`` has no battles is fitted with ``anchor=None`` (same
    coefficients) instead of failing. The authors' per-intent citation figure (E.1) fits each intent on all voted
    battles, not only those where both sides cite; pass the frame you want.
    """
    prep = screened(battles, exclude)
    frames = []
    for value in sorted(v for v in prep.frame[by].drop_nulls().unique().to_list() if v not in skip):
        sub = prep.where(pl.col(by) == value)
        if sub.frame.height < min_battles:
            continue
        present = set(sub.frame["model_a"].to_list()) | set(sub.frame["model_b"].to_list())
        coefs = style_control(sub, features, rounds=rounds, seed=seed, convention=convention,
                              anchor=anchor if anchor in present else None, reg=reg).coefficients()
        frames.append(coefs.with_columns(pl.lit(value).alias("subset"), pl.lit(sub.frame.height).alias("n")))
    if not frames:
        return pl.DataFrame(
            schema={"subset": pl.String, "feature": pl.String, "estimate": pl.Float64, "ci_lower": pl.Float64,
                    "ci_upper": pl.Float64, "estimate_ml": pl.Float64, "n": pl.Int64}
        )
    out = pl.concat(frames)
    cols = ("subset", "feature", "estimate", "ci_lower", "ci_upper", "estimate_ml")
    return out.select(*cols, pl.col("n").cast(pl.Int64))


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
    rounds). ``n_battles``: battles in both fits. ``before_ridge_models``: models whose unpenalised "before"
    rating had no MLE and was set by the ridge; ``before_ridge_resamples``: bootstrap rounds of the "before" fit
    that needed the ridge (both empty / 0 when every fit has an MLE, or with a penalty).
    """

    ratings: pl.DataFrame
    sd_before: float
    sd_after: float
    change_ci: tuple[float, float]
    n_battles: int
    before_ridge_models: tuple[str, ...] = ()
    before_ridge_resamples: int = 0

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
    battles: Frame,
    features: Sequence[str] = ALL_CONTROLS,
    rounds: int = 100,
    seed: int = 0,
    convention: Convention = "paper",
    *,
    anchor: str | None = ANCHOR,
    reg: float = REG,
    before_reg: float = 0.0,
    exclude: Sequence[str] | None = None,
) -> ControlEffect:
    """Fit the same battles without controls and with ``features``; compare the spread of the ratings (SA-E4).

    "Before" is plain BT, ``min_r −Σ_i [y_i log σ(η_i) + (1−y_i) log σ(−η_i)] + before_reg/2 ‖r‖²`` with
    ``η_i = ln 10 (r_a − r_b)``: the default ``before_reg = 0`` is the authors' unpenalised ``compute_bt`` (the
    maximum-likelihood fit; where the data or a bootstrap resample has no MLE, the ridge of
    ``on_separation="ridge"`` sets it, counted in :attr:`ControlEffect.before_ridge_models` and
    :attr:`ControlEffect.before_ridge_resamples`). "After" is the contextual model with ``features`` and the
    authors' penalty ``reg/2 ‖(r, β)‖²`` (``reg = 0.5``, as their ``compute_style_control``). Both are fitted by
    :func:`analysis_lib.ranking.leaderboard` on the identical battles with the same bootstrap draws of
    battles (same ``seed``); ``before_reg=reg`` fits both under the same penalty, so that the controls are the only
    difference. (The authors' Fig E.4 put the plain fit on all voted battles beside the controlled fit on decided
    battles where both sides cite; dropping ties alone moves the spread, so that comparison mixes two effects: here
    both fits see the caller's battles.)
    """
    prep = screened(battles, exclude)
    ci = _ci("bootstrap", rounds)
    fits = []
    for feats, penalty in (((), before_reg), (tuple(features), reg)):
        fits.append(_fit(prep, feats, anchor, ci, rounds, seed, reg=penalty, convention=convention,
                         on_separation="ridge", progress=False, draws="battles"))  # paired rounds
    plain, ctrl = fits
    before, after = plain.rating_ml, ctrl.rating_ml
    m = len(plain.models)
    if plain.rounds is not None and ctrl.rounds is not None:
        change = rating_spread(400.0 * ctrl.rounds[:, :m]) - rating_spread(400.0 * plain.rounds[:, :m])
        change_ci = (float(np.percentile(change, 2.5)), float(np.percentile(change, 97.5)))
    else:
        change_ci = (math.nan, math.nan)
    frame = pl.DataFrame({"model": list(plain.models), "before": before, "after": after}).with_columns(
        (pl.col("after") - pl.col("before")).alias("shift")
    )
    return ControlEffect(
        ratings=frame.sort("before", descending=True),
        sd_before=float(rating_spread(before)),
        sd_after=float(rating_spread(after)),
        change_ci=change_ci,
        n_battles=prep.frame.height,
        before_ridge_models=plain.ridge_models,
        before_ridge_resamples=plain.ridge_resamples,
    )


def convention_shift(battles: Frame, features: Sequence[str], *, fitted: Ranking | None = None,
                     **kwargs) -> pl.DataFrame:
    """Full-data coefficients under ``convention="paper"`` (int32 truncation) and ``"float"``, and the shift.

    Columns ``feature, paper, float, shift`` (``float − paper``); keyword arguments go to :func:`style_control`.
    ``fitted``: the ``convention="paper"`` fit of the same battles and ``features`` already made (any intervals:
    the full-data fit does not depend on them), whose full-data coefficients are used instead of fitting again.
    """
    kwargs = {**kwargs, "rounds": 0}
    if fitted is not None and list(fitted.features) != list(features):
        raise ValueError(f"fitted has the features {list(fitted.features)}, not {list(features)}")
    paper_fit = fitted if fitted is not None else style_control(battles, features, convention="paper", **kwargs)
    paper = paper_fit.coefficients()["estimate_ml"]
    exact = style_control(battles, features, convention="float", **kwargs).coefficients()["estimate_ml"]
    return pl.DataFrame(
        {"feature": list(features), "paper": paper, "float": exact, "shift": exact.to_numpy() - paper.to_numpy()}
    )

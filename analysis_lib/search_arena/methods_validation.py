"""Methods validation (VAL): how far estimated Bradley–Terry ratings sit from the values a simulator planted, how
often their intervals cover them, and which tie model the paper's estimator needs.

**Errors and the shared offset.** Every rating on the Elo scale is a difference to the anchor (``gpt-4o-search``
= 1000): with estimated log-strengths ``r̂`` and true ``r``, the reported rating of model ``m`` is
``1000 + 400 (r̂_m − r̂_a)`` and its error is

    e_m = 400 [(r̂_m − r_m) − (r̂_a − r_a)],

the model's own estimation error minus the anchor's. The anchor's error enters every ``e_m`` with the same sign
and size, so a single fit can place all non-anchor ratings above (or below) their truth although each is
estimated without bias. :func:`error_decomposition` separates the two parts of one fit: the **shared offset**
``ē = mean_{m ≠ a} e_m`` (mostly minus the anchor's own error) and the **anchor-free errors** ``e_m − ē``;
:func:`error_summary` gives their sizes.

**Over many simulated releases.** :func:`seed_study` simulates independent full-size releases (seeds) and fits
each one: plain BT against ``d1_target`` (Table D.1, to which the simulator is calibrated), the thirteen-control
contextual BT against the planted ratings, and plain BT on expected votes (:func:`expected_outcome_fit`) against
``d1_target``; :func:`offset_summary` summarises the decompositions over the seeds (an unbiased estimator has
shared offsets and anchor-free errors that average to zero). The same releases are refitted with their outcomes
drawn under a second tie model (:mod:`analysis_lib.search_arena.simulate.voting`: ties independent of strength
instead of likelier between close responses); :func:`tie_summary` compares the spread of the controlled ratings
and the scale of the coefficients with the planted ones under each tie model.

**Interval coverage.** :func:`coverage_study` fits replicate releases with plain and contextual BT, each with
bootstrap and sandwich intervals (:func:`analysis_lib.ranking.ranking_coverage`), and records whether each
interval covers its truth: the planted ratings and coefficients for the contextual fit; for the plain fit, which
credits each model with its style advantage, the plain fit of the same battles on expected votes (its population
value). :func:`analysis_lib.ranking.coverage_summary` gives the shares with Wilson intervals.

Every release here is drawn by :func:`analysis_lib.search_arena.simulate.battles.simulate_battles` (the battles and
features only, no text: no copy of a release per replicate) and fitted through :mod:`analysis_lib.search_arena.bt`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import polars as pl
from tqdm import tqdm  # type: ignore[import-untyped]

from analysis_lib import ranking
from analysis_lib.ranking import INIT_RATING, BattleFormat, result_coverage
from analysis_lib.search_arena import bt
from analysis_lib.search_arena.models import ANCHOR
from analysis_lib.search_arena.simulate.battles import SimulatedBattles, simulate_battles
from analysis_lib.search_arena.simulate.voting import TIE_MODELS, TieModel

#: The fits of :func:`seed_study`, in order.
FITS: tuple[str, ...] = ("plain", "controlled", "plain, expected votes")

T = TypeVar("T")
R = TypeVar("R")


def error_decomposition(
    estimate: Mapping[str, float], truth: Mapping[str, float], anchor: str = ANCHOR
) -> pl.DataFrame:
    """Per model (the anchor and models without a truth left out): ``model, estimate, truth, error``
    (``estimate − truth``), ``shared_offset`` (mean error over these models, the same on every row) and
    ``anchor_free_error`` (``error − shared_offset``). See the module docstring."""
    models = [m for m in estimate if m != anchor and m in truth]
    if not models:
        raise ValueError("no model other than the anchor has both an estimate and a truth")
    est = np.array([estimate[m] for m in models], dtype=float)
    tru = np.array([truth[m] for m in models], dtype=float)
    err = est - tru
    shared = float(err.mean())
    return pl.DataFrame({"model": models, "estimate": est, "truth": tru, "error": err,
                         "shared_offset": np.full(err.size, shared), "anchor_free_error": err - shared})


def error_summary(decomposition: pl.DataFrame) -> pl.DataFrame:
    """The size of the errors of an :func:`error_decomposition` frame, one row (Elo): ``max_abs_error``,
    ``shared_offset`` and ``max_abs_anchor_free_error``."""
    return decomposition.select(pl.col("error").abs().max().alias("max_abs_error"), pl.col("shared_offset").first(),
                                pl.col("anchor_free_error").abs().max().alias("max_abs_anchor_free_error"))


def table_d1_target(d1: pl.DataFrame, anchor: str = ANCHOR) -> dict[str, float]:
    """Table D.1 ratings shifted so the anchor is exactly 1000 (the published table reports the anchor's
    bootstrap mean, 999.2), which is what an ML fit with the anchor fixed at 1000 estimates."""
    ratings = dict(zip(d1["model"].to_list(), d1["rating"].to_list(), strict=True))
    shift = INIT_RATING - ratings[anchor]
    return {m: v + shift for m, v in ratings.items()}


def expected_outcome_fit(truth: pl.DataFrame, models: Iterable[str], anchor: str = ANCHOR) -> dict[str, float]:
    """Plain BT ratings (Elo, ``anchor`` = 1000) of simulated battles with every vote replaced by its expectation:
    the ML fit on the battles of ``truth`` (``Planted.truth``, whose ``voted`` rows are used, or the battles of
    :class:`~analysis_lib.search_arena.simulate.battles.SimulatedBattles`) between two different ``models``, with
    outcome ``p_a`` = P(A wins) + P(tie)/2 instead of the sampled 1 / ½ / 0. The vote-sampling noise, and with it
    the anchor's share of it, is gone; what remains is the population value of the plain fit for these battles
    (up to the O(1/n) bias of the ML estimate), i.e. what the simulator is calibrated to put on Table D.1."""
    keep = list(models)
    rows = pl.col("model_a").is_in(keep) & pl.col("model_b").is_in(keep) & (pl.col("model_a") != pl.col("model_b"))
    t = truth.filter(rows & pl.col("voted")) if "voted" in truth.columns else truth.filter(rows)
    result = ranking.leaderboard(t.select("model_a", "model_b", "p_a"), fmt=BattleFormat(outcome="p_a"),
                                 anchor=anchor, ci="none")
    return dict(zip(result.models, result.rating_ml.tolist(), strict=True))


def _each(fn: Callable[[T], R], items: Sequence[T], desc: str, progress: bool) -> list[R]:
    """``[fn(x) for x in items]`` with a progress bar in the build log (``sys.__stderr__``), not on the page."""
    return [fn(x) for x in tqdm(items, desc=desc, disable=not progress, file=sys.__stderr__)]


# --------------------------------------------------------------------------------------------------------------
# the study over seeds: shared offsets and the tie model
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedStudy:
    """:func:`seed_study`'s results. ``offsets``: ``seed, fit, model, estimate, truth, error, shared_offset,
    anchor_free_error`` (fits :data:`FITS`, default tie model); ``ties``: ``seed, tie_model, feature, estimate,
    planted`` for every style coefficient of the controlled fit; ``spreads``: ``seed, tie_model, sd_controlled,
    sd_planted, sd_plain, sd_table_d1`` (:func:`~analysis_lib.search_arena.bt.rating_spread` of the controlled
    ratings and of the planted ratings of the same models; of the plain ratings and of Table D.1, models in
    Table D.1)."""

    offsets: pl.DataFrame
    ties: pl.DataFrame
    spreads: pl.DataFrame


def _one_seed(task: tuple[int, int, dict[str, float], tuple[TieModel, ...]]) -> tuple[pl.DataFrame, ...]:
    seed, n, d1_target, tie_models = task
    sims = simulate_battles(n, seed, tie_models)
    frames, coefs, spreads = [], [], []
    for tie_model, sim in sims.items():
        battles = bt.prepare_battles(sim.battles).frame
        ctrl = bt.style_control(battles, bt.ALL_CONTROLS, rounds=0)
        est = dict(zip(ctrl.models, ctrl.rating_ml.tolist(), strict=True))
        coefs.append(ctrl.coefficients().select(
            pl.lit(seed).alias("seed"), pl.lit(tie_model).alias("tie_model"), "feature",
            pl.col("estimate_ml").alias("estimate"),
            pl.col("feature").replace_strict(sim.betas, return_dtype=pl.Float64).alias("planted")))
        plain = bt.leaderboard(battles, rounds=0)
        in_d1 = [i for i, m in enumerate(plain.models) if m in d1_target]
        spreads.append({
            "seed": seed, "tie_model": tie_model, "sd_controlled": bt.rating_spread(ctrl.rating_ml),
            "sd_planted": bt.rating_spread(np.array([sim.ratings[m] for m in ctrl.models])),
            "sd_plain": bt.rating_spread(plain.rating_ml[in_d1]),
            "sd_table_d1": bt.rating_spread(np.array([d1_target[plain.models[i]] for i in in_d1])),
        })
        if tie_model != TIE_MODELS[0]:
            continue
        fits = (("plain", dict(zip(plain.models, plain.rating_ml.tolist(), strict=True)), d1_target),
                ("controlled", est, sim.ratings),
                ("plain, expected votes", expected_outcome_fit(battles, d1_target), d1_target))
        for fit, estimate, truth in fits:
            dec = error_decomposition(estimate, truth)
            frames.append(dec.select(pl.lit(seed).alias("seed"), pl.lit(fit).alias("fit"), pl.all()))
    offsets = pl.concat(frames) if frames else pl.DataFrame()
    return offsets, pl.concat(coefs), pl.DataFrame(spreads)


def seed_study(
    seeds: Iterable[int], n_conversations: int, d1_target: Mapping[str, float], *,
    tie_models: Sequence[TieModel] = TIE_MODELS, progress: bool = True,
) -> SeedStudy:
    """Fit every seed's simulated release (:func:`~analysis_lib.search_arena.simulate.battles.simulate_battles`,
    ``n_conversations`` each) as the module docstring says: under the first of ``tie_models`` (the simulator's
    default) the plain, controlled and expected-vote fits, decomposed (:func:`error_decomposition`); under each
    tie model the controlled fit's coefficients and rating spread. Full-data fits only (no intervals)."""
    if not tie_models or tie_models[0] != TIE_MODELS[0]:
        raise ValueError(f"tie_models must start with the simulator's default {TIE_MODELS[0]!r}")
    tasks = [(int(s), n_conversations, dict(d1_target), tuple(tie_models)) for s in seeds]
    if not tasks:
        raise ValueError("seed_study: no seeds given")
    parts = _each(_one_seed, tasks, "seeds", progress)
    return SeedStudy(*(pl.concat([p[i] for p in parts]) for i in range(3)))


def offset_study(
    seeds: Iterable[int], n_conversations: int, d1_target: Mapping[str, float], *, progress: bool = True,
) -> pl.DataFrame:
    """The ``offsets`` frame of :func:`seed_study` under the simulator's tie model alone: ``seed, fit, model,
    estimate, truth, error, shared_offset, anchor_free_error`` for the fits :data:`FITS`."""
    return seed_study(seeds, n_conversations, d1_target, tie_models=TIE_MODELS[:1], progress=progress).offsets


def offset_summary(study: pl.DataFrame) -> pl.DataFrame:
    """Per fit, over the seeds of :func:`offset_study`: ``mean_shared_offset`` and its standard error,
    ``sd_shared_offset`` (the spread the anchor's estimation error gives every rating), ``sd_anchor_free``
    (pooled SD of the anchor-free errors), ``share_shared`` (the fraction of the error variance that the
    shared offset explains) and ``max_abs_model_bias`` with ``model`` (the largest mean anchor-free error of
    one model over the seeds, and its standard error ``model_bias_se``)."""
    per_seed = study.group_by("fit", "seed", maintain_order=True).agg(pl.col("shared_offset").first())
    shared = per_seed.group_by("fit", maintain_order=True).agg(
        pl.col("shared_offset").mean().alias("mean_shared_offset"),
        (pl.col("shared_offset").std() / pl.len().sqrt()).alias("se_shared_offset"),
        pl.col("shared_offset").std().alias("sd_shared_offset"),
        pl.len().alias("seeds"),
    )
    spread = study.group_by("fit", maintain_order=True).agg(
        pl.col("anchor_free_error").std().alias("sd_anchor_free"),
        (1 - pl.col("anchor_free_error").var() / pl.col("error").var()).alias("share_shared"),
    )
    per_model = study.group_by("fit", "model", maintain_order=True).agg(
        pl.col("anchor_free_error").mean().alias("bias"),
        (pl.col("anchor_free_error").std() / pl.len().sqrt()).alias("model_bias_se"),
    )
    worst = (per_model.sort(pl.col("bias").abs(), descending=True).group_by("fit", maintain_order=True)
             .first().select("fit", pl.col("model"), pl.col("bias").alias("max_abs_model_bias"), "model_bias_se"))
    return shared.join(spread, on="fit").join(worst, on="fit").sort("fit")


def coefficient_scale(estimate: np.ndarray, planted: np.ndarray) -> float:
    """The least-squares slope through the origin of fitted on planted coefficients, ``Σ β̂ β / Σ β²``: 1 when
    the fit recovers the planted scale, below 1 when it shrinks every coefficient by a common factor."""
    estimate, planted = np.asarray(estimate, dtype=float), np.asarray(planted, dtype=float)
    return float(estimate @ planted / (planted @ planted))


def tie_summary(study: SeedStudy) -> pl.DataFrame:
    """Per tie model over the seeds of :func:`seed_study`: ``sd_controlled`` (mean SD across models of the
    controlled ratings) with its standard error ``sd_controlled_se`` and ``sd_planted`` (SD of the planted ratings
    of the same models); ``sd_plain`` (of the plain ratings, models in Table D.1) with ``sd_plain_se`` and
    ``sd_table_d1`` (SD of Table D.1, the plain fit's calibration target); ``coef_scale`` (mean
    :func:`coefficient_scale` of the thirteen coefficients) with ``coef_scale_se``; ``seeds``. Rows in
    :data:`~analysis_lib.search_arena.simulate.voting.TIE_MODELS` order."""
    scale = study.ties.group_by("tie_model", "seed", maintain_order=True).agg(
        pl.map_groups(["estimate", "planted"], lambda s: coefficient_scale(s[0].to_numpy(), s[1].to_numpy()),
                      return_dtype=pl.Float64, returns_scalar=True).alias("coef_scale"))
    per = study.spreads.join(scale, on=["tie_model", "seed"])
    se = lambda c: (pl.col(c).std() / pl.len().sqrt()).alias(f"{c}_se")  # noqa: E731
    out = per.group_by("tie_model", maintain_order=True).agg(
        pl.col("sd_controlled").mean(), se("sd_controlled"), pl.col("sd_planted").mean(),
        pl.col("sd_plain").mean(), se("sd_plain"), pl.col("sd_table_d1").mean(),
        pl.col("coef_scale").mean(), se("coef_scale"), pl.len().alias("seeds"))
    order = {t: i for i, t in enumerate(TIE_MODELS)}
    return out.sort(pl.col("tie_model").replace_strict(order, return_dtype=pl.Int64))


# --------------------------------------------------------------------------------------------------------------
# interval coverage over replicate releases
# --------------------------------------------------------------------------------------------------------------

#: The four interval families of :func:`coverage_study`: (fit, interval method).
COVERAGE_FITS: tuple[tuple[str, bt.CI], ...] = (
    ("contextual", "bootstrap"), ("contextual", "sandwich"), ("plain", "bootstrap"), ("plain", "sandwich"))


def _one_replicate(task: tuple[int, int, int, int, int]) -> pl.DataFrame:
    k, replicate_seed, size, boot_seed, rounds = task
    sim = simulate_battles(size, replicate_seed)[TIE_MODELS[0]]
    return replicate_coverage(k, sim, boot_seed, rounds)


def replicate_coverage(k: int, sim: SimulatedBattles, boot_seed: int, rounds: int) -> pl.DataFrame:
    """The coverage rows (:func:`analysis_lib.ranking.result_coverage`) of one replicate ``k`` for the four
    families of :data:`COVERAGE_FITS`, with a ``fit`` column: the battles kept by
    :func:`~analysis_lib.search_arena.bt.prepare_battles` fitted with the thirteen controls
    (:func:`~analysis_lib.search_arena.bt.style_control`, truth: the planted ratings and coefficients) and without
    (:func:`~analysis_lib.search_arena.bt.leaderboard`, truth: :func:`expected_outcome_fit` of the same battles),
    each with ``rounds`` bootstrap rounds (seed ``boot_seed``) and with sandwich intervals."""
    battles = bt.prepare_battles(sim.battles).frame
    plain_truth = expected_outcome_fit(battles, sim.ratings)
    frames = []
    for fit, method in COVERAGE_FITS:
        if fit == "contextual":
            truth, betas = sim.ratings, sim.betas
            ranked = bt.style_control(battles, bt.ALL_CONTROLS, rounds=rounds, seed=boot_seed, ci=method)
        else:
            truth, betas = plain_truth, {}
            ranked = bt.leaderboard(battles, rounds=rounds, seed=boot_seed, ci=method)
        frames.append(result_coverage(ranked, truth, betas, ANCHOR, replicate=k).with_columns(
            pl.lit(fit).alias("fit")))
    return pl.concat(frames).select("replicate", "fit", "method", "kind", "name", "truth", "estimate", "ci_lower",
                                    "ci_upper", "covered")


def coverage_study(
    n_replicates: int, replicate_size: int, *, rounds: int = 100, seed: int = 0, first_seed: int = 1000,
    progress: bool = True,
) -> pl.DataFrame:
    """Interval coverage over ``n_replicates`` independent simulated releases of ``replicate_size``
    conversations (simulator seeds ``first_seed + k``; bootstrap seed ``seed + k``): the rows of
    :func:`replicate_coverage` for every replicate. Summarise with
    :func:`analysis_lib.ranking.coverage_summary`."""
    if n_replicates < 1:
        raise ValueError("coverage_study: n_replicates must be at least 1")
    tasks = [(k, first_seed + k, replicate_size, seed + k, rounds) for k in range(n_replicates)]
    return pl.concat(_each(_one_replicate, tasks, "coverage replicates", progress))

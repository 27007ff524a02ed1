"""Simulated battles for the methods validation: only what the rating fits read, without the release's text.

:func:`simulate_battles` runs the steps of :func:`~analysis_lib.search_arena.simulate.simulate_release` that
decide the battles (population, content with ``text=False``, votes) from the same generator in the same order,
and skips the text, the release table and the loader. Its frame holds, for every voted conversation, what
:func:`analysis_lib.search_arena.loader.load_battles` gives the fits: the paper model names, the vote, and the
thirteen style features of both sides (:data:`~analysis_lib.search_arena.simulate.calibration.FEATURES`) as the
simulator computes them (the authors' per-side values, int32 as they store them, which is what the loader's
values become under ``convention="paper"``), plus ``p_a``, the model's probability that A wins (the expected
half-win score under the default tie model). So a fit of these battles after
:func:`~analysis_lib.search_arena.bt.prepare_battles` equals the same fit of the loaded release, at a fraction of
the cost and memory (``tests/test_validation_data.py`` checks this).

Several tie models (:mod:`~analysis_lib.search_arena.simulate.voting`) can be drawn for one population and
content: the generator is copied before the votes, so each tie model sees the very same conversations, features
and voters (exactly what ``simulate_release(n, seed, tie_model=…)`` would give).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from analysis_lib.search_arena.simulate.calibration import BETAS, FEATURES, calibrated_models
from analysis_lib.search_arena.simulate.content import draw_content
from analysis_lib.search_arena.simulate.population import draw_population
from analysis_lib.search_arena.simulate.voting import TieModel, draw_votes


@dataclass(frozen=True)
class SimulatedBattles:
    """Voted battles of one simulated release (``battles``: ``model_a, model_b, winner, <feature>_a, <feature>_b,
    p_a``, conversation order) and the truth planted in it: ``ratings`` (Elo, ``gpt-4o-search`` = 1000) and
    ``betas`` (coefficients on the z-scored features); ``n`` conversations, ``seed``, ``tie_model``."""

    battles: pl.DataFrame
    ratings: dict[str, float]
    betas: dict[str, float]
    n: int
    seed: int
    tie_model: str


def simulate_battles(
    n: int, seed: int, tie_models: Sequence[TieModel] = ("closeness",)
) -> dict[str, SimulatedBattles]:
    """The voted battles of ``simulate_release(n, seed, tie_model=t)`` for each ``t`` in ``tie_models``
    (module docstring), keyed by tie model."""
    if n < 2:
        raise ValueError("n must be at least 2")
    rng = np.random.default_rng(seed)
    models = calibrated_models()
    pop = draw_population(rng, n, models)
    content = draw_content(rng, pop, models, text=False)
    fa, fb = content.a.features, content.b.features
    assert fa is not None and fb is not None
    features = {f"{f}_{side}": vals[f] for f in FEATURES for side, vals in (("a", fa), ("b", fb))}
    out: dict[str, SimulatedBattles] = {}
    for k, tie_model in enumerate(tie_models):
        votes = draw_votes(rng if k == len(tie_models) - 1 else copy.deepcopy(rng), pop, content, models, tie_model)
        frame = pl.DataFrame({
            "model_a": models.paper[pop.ma].tolist(),
            "model_b": models.paper[pop.mb].tolist(),
            "winner": pl.Series(votes.winner.tolist(), dtype=pl.String),
            **features,
            "p_a": votes.p_a,
        })
        out[tie_model] = SimulatedBattles(frame.filter(pl.Series(votes.voted)), dict(models.ratings), dict(BETAS), n,
                                          seed, tie_model)
    return out

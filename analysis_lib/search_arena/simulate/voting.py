r"""Step 3 of the Search Arena simulator: who votes and how (package docstring, item 11).

A conversation is voted with probability ``P_VOTE`` (``P_VOTE_NONSEARCH`` when the non-search model is in it).
With ``z`` the z-scored normalised feature differences over the voted battles and

    p = σ( ln 10 · (R_a − R_b) / 400 + βᵀ z ),

a voted battle is a tie of either kind with probability ``q``, split ``P_TIE : P_BOTHBAD``, and otherwise decided.
Two tie models (``tie_model``):

- ``"closeness"`` (the default, the simulator's model): ``q = t · 4 p (1 − p)`` (ties are likelier between close
  responses) and A wins with probability ``p − q / 2``; so the expected half-win score ``P(A) + P(tie) / 2`` is
  exactly ``p`` and counting a tie as half a win (the Search Arena authors' estimator) is consistent for the
  ratings and coefficients. ``t`` makes the voted tie share ``P_TIE + P_BOTHBAD`` (capped at 0.5 so every
  probability stays in [0, 1]).
- ``"independent"`` (a sensitivity check): ``q = P_TIE + P_BOTHBAD`` for every voted battle, whatever the
  strengths, and A wins with probability ``(1 − q) p``. The expected half-win score is then
  ``q/2 + (1 − q) p = ½ + (1 − q)(p − ½)``: the half-win estimator fits a logit compressed toward 0 (near
  ``p = ½`` by about ``1 − q``), so it understates rating gaps and style coefficients.

Both use the same two uniform draws per conversation, so a seed gives the same battles, features and voters under
either model; only the outcomes differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from analysis_lib.ranking import ALPHA, SCALE
from analysis_lib.search_arena.schema import BOTH_BAD, MODEL_A, MODEL_B, TIE
from analysis_lib.search_arena.simulate.calibration import (
    BETAS,
    FEATURES,
    P_BOTHBAD,
    P_TIE,
    P_VOTE,
    P_VOTE_NONSEARCH,
    Models,
)
from analysis_lib.search_arena.simulate.content import Content
from analysis_lib.search_arena.simulate.population import Population

TieModel = Literal["closeness", "independent"]
TIE_MODELS: tuple[TieModel, ...] = ("closeness", "independent")


@dataclass(frozen=True)
class Votes:
    """Per conversation: ``voted``, ``winner`` (None when not voted), the features ``z`` (``(n, features)``,
    z-scored with ``mu``, ``sd`` over the voted battles), ``logit`` and ``p_a = σ(logit)``; the ``tie_model``
    that drew the outcomes."""

    voted: np.ndarray
    winner: np.ndarray
    z: np.ndarray
    mu: np.ndarray
    sd: np.ndarray
    logit: np.ndarray
    p_a: np.ndarray
    tie_model: str = "closeness"


def draw_votes(rng: np.random.Generator, pop: Population, content: Content, models: Models,
               tie_model: TieModel = "closeness") -> Votes:
    """Item 11: two uniform draws per conversation (voted; outcome), in that order; ``tie_model`` as in the module
    docstring (default ``"closeness"``)."""
    if tie_model not in TIE_MODELS:
        raise ValueError(f"tie_model must be one of {TIE_MODELS}, not {tie_model!r}")
    n, ma, mb = pop.n, pop.ma, pop.mb
    fa, fb = content.a.features, content.b.features
    assert fa is not None and fb is not None
    has_ns = (ma == models.ns_idx) | (mb == models.ns_idx)
    voted = rng.random(n) < np.where(has_ns, P_VOTE_NONSEARCH, P_VOTE)
    beta = np.array([BETAS[f] for f in FEATURES])
    d = np.column_stack(
        [(fa[f].astype(float) - fb[f]) / (fa[f].astype(float) + fb[f] + 1.0) for f in FEATURES]
    )
    mu = d[voted].mean(axis=0) if voted.any() else np.zeros(len(FEATURES))
    sd = d[voted].std(axis=0) if voted.any() else np.ones(len(FEATURES))
    sd_safe = np.where(sd > 0, sd, 1.0)
    z = np.where(sd > 0, (d - mu) / sd_safe, 0.0)
    logit = ALPHA / SCALE * (models.r_model[ma] - models.r_model[mb]) + z @ beta
    p_a = 1.0 / (1.0 + np.exp(-logit))
    if tie_model == "closeness":
        # Ties are likelier between close responses: P(tie or both-bad) = t * 4 p (1 - p), and the half-win
        # convention then holds exactly: P(A) + P(tie) / 2 = p. t makes the voted tie share P_TIE + P_BOTHBAD.
        closeness = 4.0 * p_a * (1.0 - p_a)
        t_scale = min((P_TIE + P_BOTHBAD) / closeness[voted].mean(), 0.5) if voted.any() else 0.0
        p_any_tie = t_scale * closeness
        a_wins_below = p_any_tie + p_a - p_any_tie / 2  # u < this: a tie or A wins
    else:
        # Ties independent of strength: the same tie share for every battle; A wins a decided battle with p.
        p_any_tie = np.full(n, P_TIE + P_BOTHBAD)
        a_wins_below = p_any_tie + (1.0 - p_any_tie) * p_a
    u_out = rng.random(n)
    winner = np.select(
        [u_out < p_any_tie * P_TIE / (P_TIE + P_BOTHBAD), u_out < p_any_tie, u_out < a_wins_below],
        [TIE, BOTH_BAD, MODEL_A],
        default=MODEL_B,
    ).astype(object)
    winner[~voted] = None
    return Votes(voted=voted, winner=winner, z=z, mu=mu, sd=sd, logit=logit, p_a=p_a, tie_model=tie_model)

r"""Simulated citation-attribution subset (``citation_attribution_data.jsonl``; SA §3.2, Fig 6 right, E.3).

:func:`simulate_attribution` returns a :class:`SimulatedAttribution`: ``raw`` is the Search Arena 24k release schema
(every column of the rows of :func:`~analysis_lib.search_arena.simulate.conversations.simulate_release`) plus the
``conv_metadata`` struct of the real
subset, whose fields ``support_count_a/b``, ``irrelevant_count_a/b``, ``contradict_count_a/b`` are integer
counts of claim–citation pairs over *all* turns (the loader, :func:`analysis_lib.search_arena.loader.load_battles`,
divides them by ``turn``). ``planted``, an :class:`AttributionPlanted`, holds coefficients, ratings, per-battle truth.

Generative model (one ``numpy.random.default_rng((seed, 0xA77))`` generator after the release simulator's own)
--------------------------------------------------------------------------------------------------------------
1. **Release.** ``simulate_release(n_big, seed)`` with ``n_big = 6 n`` (at least 2,000) conversations;
   its planted ratings ``R`` (Elo, anchor gpt-4o-search = 1000) are the ratings here.
2. **Subset.** Eligible: voted, not a self-battle, both models on the leaderboard, both sides cite (at least
   one ``[marker, url]`` pair over the turns, so the loader's ``citation_count > 0``), primary intent one of
   the eight non-*Other* intents. The authors labelled "roughly 100 conversations per intent category (800
   examples in total)" (SA §3.2), so ``n // 8`` are drawn without replacement per intent (all of an intent if
   fewer are eligible) and the remainder up to ``n`` uniformly from the other eligible rows; rows keep the
   release's time order.
3. **Attribution counts.** Each side's citations over all turns ``C`` (its ``[marker, url]`` pairs) are its
   claim–citation pairs, split ``(support, irrelevant, contradict) ~ Multinomial(C, s)`` with response
   shares ``s ~ Dirichlet(KAPPA · base)``. ``base`` depends on the model (``SHARES`` per family; a reasoning
   model moves a quarter of its irrelevant share to support, as reasoning models filter irrelevant sources,
   SA §3.1, Fig 3). These shares are choices of this simulator, not paper values.
4. **Votes.** The original outcome is kept when it is a tie or both-bad (31.9% of voted battles); only a
   decided battle's side is re-drawn, A winning with probability

       p = σ( ln 10 · (R_a − R_b) / 400 + βᵀ z ),

   the contextual Bradley–Terry model that SA-F6R fits (:func:`analysis_lib.search_arena.bt.style_control` on
   :func:`analysis_lib.search_arena.bt.attribution_battles`, i.e. decided battles where both sides cite). ``z`` is built
   as that fit builds it (:func:`analysis_lib.ranking.features.style_features`, ``convention="paper"``):
   per-side value ``int32(count / turn)``, ``d = (a − b) / (a + b + 1)``, z-scored (population sd) over the
   decided battles of the subset. So the fit's model *is* the generative model (up to its penalty
   ``reg = 0.5``), and β is recovered up to sampling error. The release simulator's own tie mechanism
   (P(tie) = t · 4p(1 − p)) is not reused: conditional on being decided it gives
   P(A) = (p − 2tp(1 − p)) / (1 − 4tp(1 − p)) ≠ p, so a decided-only fit would overstate β. Keeping the
   original ties means the decided set is fixed before the re-draw, and selecting on it does not bias the fit.
   The length, citation-count and source effects of the release are not in the re-drawn votes.

   **Planted β are the paper's estimates** (SA §1: β_support = 0.285, β_irrelevant = 0.273; §3.2 rounds them
   to 0.29, 0.27; contradicting pairs "not significant", planted 0): the point of the simulator is that the
   method recovers what was planted, not that the data agree with the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from analysis_lib.ranking import ALPHA, BASE, SCALE
from analysis_lib.search_arena.domains import DOMAIN_GROUPS
from analysis_lib.search_arena.models import model_table, non_leaderboard_models
from analysis_lib.search_arena.schema import ATTRIBUTION_COUNTS, DECISIVE, INTENTS, MODEL_A, MODEL_B, SIDES
from analysis_lib.search_arena.simulate.conversations import simulate_release

N_SUBSET = 800
"""Conversations in the authors' subset (SA §3.2, App. E.3: ~100 per intent category, 800 in total)."""

BETAS: dict[str, float] = {
    "support_count": 0.285,  # source: SA §1 (§3.2 rounds it to 0.29), Fig 6 right
    "irrelevant_count": 0.273,  # source: SA §1 (§3.2 rounds it to 0.27), Fig 6 right
    "contradict_count": 0.0,  # source: SA §3.2 "not significant" (no number): planted 0
}
"""Planted coefficients on the z-scored per-turn counts: the paper's estimates (SA §1, §3.2, Fig 6 right); 0 for
contradicting citations, which the paper reports as not significant without a number. The simulator's own
targets: ``tests/test_simulator_targets.py`` checks them against the book's paper values (SA-F6R)."""
SHARES: dict[str, tuple[float, float, float]] = {
    "sonar": (0.60, 0.31, 0.09),
    "gemini": (0.66, 0.27, 0.07),
    "gpt": (0.70, 0.24, 0.06),
}
"""Base (support, irrelevant, contradict) shares of a family's pairs (choices, not paper values)."""
REASONING_SHIFT = 0.25
"""Fraction of a reasoning model's irrelevant share moved to support."""
KAPPA = 30.0
"""Dirichlet concentration of a response's shares around its model's base."""
BIG_FACTOR = 6
"""Release conversations simulated per subset conversation (~30% are eligible)."""
STRATA: tuple[str, ...] = tuple(i for i in INTENTS if i != "Other")


@dataclass(frozen=True)
class AttributionPlanted:
    """The truth behind a simulated attribution subset.

    ``betas``: feature -> planted coefficient on the z-scored per-turn count (``features`` gives the order);
    ``ratings``: paper model name -> Elo (the release simulator's planted ratings); ``shares``: raw model
    id -> base (support, irrelevant, contradict) shares; ``feature_mean``, ``feature_std``: of d over the
    decided battles (the z-scoring); ``truth``: one row per subset conversation (``conv_id``, paper model names,
    ``winner``, ``decided``, per-turn int features ``<feature>_a/_b``, ``z_<feature>`` (null unless decided),
    ``logit``, ``p_a``); ``n_big``: conversations of the release it was drawn from.
    """

    betas: dict[str, float]
    features: tuple[str, ...]
    ratings: dict[str, float]
    shares: dict[str, tuple[float, float, float]]
    n: int
    seed: int
    n_big: int
    feature_mean: dict[str, float]
    feature_std: dict[str, float]
    truth: pl.DataFrame
    scale: float = SCALE
    base: float = BASE
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_decided(self) -> int:
        """Decided battles of the subset: the battles SA-F6R's fit uses."""
        return int(self.truth["decided"].sum())


@dataclass(frozen=True)
class SimulatedAttribution:
    """A simulated citation-attribution subset: ``raw``, the rows in the subset's schema (what
    :func:`analysis_lib.search_arena.loader.load_battles` reads), and ``planted``, the truth behind its votes."""

    raw: pl.DataFrame
    planted: AttributionPlanted


def model_shares() -> dict[str, tuple[float, float, float]]:
    """Base shares per raw model id (``SHARES`` by family, the reasoning shift applied)."""
    out = {}
    for row in model_table().iter_rows(named=True):
        s, i, c = SHARES.get(row["family"], SHARES["gemini"])
        if str(row["reasoning"]).lower() == "true":
            s, i = s + REASONING_SHIFT * i, (1 - REASONING_SHIFT) * i
        out[row["raw_model"]] = (s, i, c)
    return out


def _select(rng: np.random.Generator, eligible: np.ndarray, intent: np.ndarray, n: int) -> np.ndarray:
    """Step 2: ``n // 8`` per intent stratum, the rest uniformly from the other eligible rows (sorted)."""
    quota = n // len(STRATA)
    chosen: list[np.ndarray] = []
    for name in STRATA:
        pool = np.flatnonzero(eligible & (intent == name))
        chosen.append(rng.choice(pool, size=min(quota, pool.size), replace=False))
    taken = np.concatenate(chosen)
    rest = np.setdiff1d(np.flatnonzero(eligible), taken)
    extra = rng.choice(rest, size=min(n - taken.size, rest.size), replace=False)
    return np.sort(np.concatenate([taken, extra]))


def _counts(rng: np.random.Generator, total: np.ndarray, raw_models: np.ndarray,
            shares: dict[str, tuple[float, float, float]]) -> np.ndarray:
    """Step 3: ``(n, 3)`` support / irrelevant / contradict counts over all turns for one side."""
    base = np.array([shares[m] for m in raw_models])
    g = rng.standard_gamma(KAPPA * base)  # Dirichlet(KAPPA * base) per row, normalised gammas
    return rng.multinomial(total, g / g.sum(axis=1, keepdims=True))


def simulate_attribution(n: int = N_SUBSET, seed: int = 0) -> SimulatedAttribution:
    """Simulate the citation-attribution subset of ``n`` conversations; see the module docstring."""
    if n < len(STRATA):
        raise ValueError(f"n must be at least {len(STRATA)}")
    n_big = max(BIG_FACTOR * n, 2_000)
    release = simulate_release(n_big, seed)
    raw_big, big = release.raw, release.planted
    rng = np.random.default_rng((seed, 0xA77))
    truth = big.truth
    total = {
        s: truth.select(pl.sum_horizontal([f"num_cites_{g}_{s}" for g in DOMAIN_GROUPS])).to_series()
        .to_numpy()
        for s in SIDES
    }
    excluded = list(non_leaderboard_models())
    intent = raw_big["primary_intent"].fill_null("").to_numpy()
    eligible = (
        np.isin(intent, STRATA)
        & truth["voted"].to_numpy()
        & (raw_big["model_a"] != raw_big["model_b"]).to_numpy()
        & ~truth["model_a"].is_in(excluded).to_numpy()
        & ~truth["model_b"].is_in(excluded).to_numpy()
        & (total["a"] > 0) & (total["b"] > 0)
    )
    rows = _select(rng, eligible, intent, n)
    if rows.size < n:
        raise RuntimeError(f"only {rows.size} eligible conversations for n={n}")
    raw = raw_big[rows]
    sub = truth[rows]
    turns = raw["turn"].to_numpy().astype(float)

    shares = model_shares()
    counts = {s: _counts(rng, total[s][rows], raw[f"model_{s}"].to_numpy(), shares) for s in SIDES}
    features = tuple(ATTRIBUTION_COUNTS)
    per_turn = {s: (counts[s] / turns[:, None]).astype(np.int32).astype(float) for s in SIDES}
    d = (per_turn["a"] - per_turn["b"]) / (per_turn["a"] + per_turn["b"] + 1.0)

    winner = raw["winner"].to_numpy().astype(object)
    decided = np.isin(winner, list(DECISIVE))
    mu, sd = d[decided].mean(axis=0), d[decided].std(axis=0)
    z = np.where(sd > 0, (d - mu) / np.where(sd > 0, sd, 1.0), 0.0)
    beta = np.array([BETAS[f] for f in features])
    r_a = np.array([big.ratings[m] for m in sub["model_a"]])
    r_b = np.array([big.ratings[m] for m in sub["model_b"]])
    logit = ALPHA / SCALE * (r_a - r_b) + z @ beta
    p_a = 1.0 / (1.0 + np.exp(-logit))
    redraw = np.where(rng.random(n) < p_a, MODEL_A, MODEL_B)
    winner = np.where(decided, redraw, winner)

    meta = {f"{f}_{s}": counts[s][:, j].astype(np.int64) for j, f in enumerate(features) for s in SIDES}
    raw = raw.with_columns(
        pl.Series("winner", winner.tolist(), dtype=pl.String),
        pl.DataFrame(meta).to_struct("conv_metadata"),
    )
    truth_cols: dict[str, Any] = {
        "conv_id": sub["conv_id"], "model_a": sub["model_a"], "model_b": sub["model_b"],
        "winner": winner.tolist(), "decided": decided,
    }
    for j, f in enumerate(features):
        for s in SIDES:
            truth_cols[f"{f}_{s}"] = per_turn[s][:, j].astype(np.int64)
    for j, f in enumerate(features):
        truth_cols[f"z_{f}"] = pl.Series(np.where(decided, z[:, j], np.nan)).fill_nan(None)
    truth_cols["logit"], truth_cols["p_a"] = logit, p_a
    planted = AttributionPlanted(
        betas=dict(BETAS),
        features=features,
        ratings=dict(big.ratings),
        shares=shares,
        n=n,
        seed=seed,
        n_big=n_big,
        feature_mean={f: float(mu[j]) for j, f in enumerate(features)},
        feature_std={f: float(sd[j]) for j, f in enumerate(features)},
        truth=pl.DataFrame(truth_cols),
        params={
            "kappa": KAPPA, "reasoning_shift": REASONING_SHIFT, "strata": STRATA,
            "ties": "original tie / both-bad outcomes kept; decided battles' side re-drawn",
            "z_population": "decided battles of the subset, population std",
        },
    )
    return SimulatedAttribution(raw, planted)

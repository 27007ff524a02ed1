"""Swiss tournament of DR-Arena (§4.1; the released ``tournament_cli.py``) and its Bradley–Terry ratings.

Pairing
    Round 1 pairs the models in a random order: (1st, 2nd), (3rd, 4th), … Later rounds sort the models by their
    current Elo (best first; ties by name) and pair greedily: the best unpaired model meets the next unpaired
    model in that order that it has not met yet, falling back to the next unpaired model when it has met them
    all (the framework's rule). The greedy pass can repeat a pair when a repeat-free pairing exists; the default
    rule then searches for one (:func:`swiss_pairs`). With an odd number of models, the one left unpaired gets a
    bye (no match, no points).

Ratings
    A match counts as one battle, decided by the final cumulative scores (higher wins, equal = tie, half a
    win). Ratings are the Bradley–Terry MLE ``P(a beats b) = σ(ln 10 · (r_a − r_b))`` on the Elo scale
    ``400 r + 1000`` (``Σ r = 0``, no anchor), fitted with :mod:`analysis_lib.bt`'s public pieces, with
    percentile bootstrap intervals over matches (:func:`ratings`). ``bt.leaderboard`` itself is not used because
    it has no way out when the MLE does not exist, which happens in a Swiss tournament (after round 1 the
    comparison graph is in pieces): then a small ridge is added and reported.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from analysis_lib import bt
from analysis_lib.dr_arena.match_log import matches as _matches
from analysis_lib.dr_arena.match_log import rounds_frame


@dataclass(frozen=True)
class Pairing:
    """One Swiss round: the pairs (model_a, model_b) and the model with a bye (or None)."""

    pairs: tuple[tuple[str, str], ...]
    bye: str | None


PairingRule = Literal["search", "greedy"]


def _greedy(order: list[str], met: set[frozenset[str]]) -> list[tuple[str, str]]:
    unpaired, pairs = list(order), []
    while len(unpaired) >= 2:
        a = unpaired.pop(0)
        j = next((i for i, b in enumerate(unpaired) if frozenset((a, b)) not in met), 0)
        pairs.append((a, unpaired.pop(j)))
    return pairs


def _no_repeat(order: list[str], met: set[frozenset[str]]) -> list[tuple[str, str]] | None:
    """The first repeat-free perfect pairing of an even-sized ``order`` in the greedy's preference order
    (depth-first: the best unpaired model takes the next model it has not met, backtracking on dead ends)."""
    if not order:
        return []
    a = order[0]
    for j in range(1, len(order)):
        if frozenset((a, order[j])) in met:
            continue
        rest = _no_repeat(order[1:j] + order[j + 1:], met)
        if rest is not None:
            return [(a, order[j]), *rest]
    return None


def swiss_pairs(models: Sequence[str], ratings: Mapping[str, float] | None, met: set[frozenset[str]],
                rng: np.random.Generator, rule: PairingRule = "search") -> Pairing:
    """One round of pairings (module docstring). ``ratings=None`` = round 1 (random order); ``met`` holds the
    pairs that have already played.

    ``rule="greedy"`` is the framework's: the best unpaired model takes the next model it has not met, else the
    next one. ``rule="search"`` (default) avoids repeats while possible: it returns the greedy pairing when that
    has no repeat, else the first repeat-free pairing in the same preference order (the bye going to the
    lowest-rated model that leaves one), and falls back to the greedy pairing when none exists."""
    if len(set(models)) != len(models):
        raise ValueError("model names must be unique")
    if ratings is None:
        order = [models[i] for i in rng.permutation(len(models))]
        pairs = [(order[i], order[i + 1]) for i in range(0, len(order) - 1, 2)]
        return Pairing(tuple(pairs), order[-1] if len(order) % 2 else None)
    missing = [m for m in models if m not in ratings]
    if missing:
        raise ValueError(f"no rating for {missing}")
    order = sorted(models, key=lambda m: (-ratings[m], m))
    greedy = _greedy(order, met)
    if rule == "search" and any(frozenset(p) in met for p in greedy):
        for bye in (reversed(order) if len(order) % 2 else [None]):
            found = _no_repeat([m for m in order if m != bye], met)
            if found is not None:
                return Pairing(tuple(found), bye)
    paired = {m for p in greedy for m in p}
    return Pairing(tuple(greedy), next((m for m in order if m not in paired), None))


def battles(matches: pl.DataFrame) -> pl.DataFrame:
    """Matches as BT battles: ``model_a, model_b, winner`` (``model_a``/``model_b``/``tie``)."""
    return matches.select("model_a", "model_b", "winner")


#: Ridge (``reg/2 ‖r‖²`` added to the BT loss) used only when the unpenalised MLE does not exist: a comparison
#: graph in several pieces (after Swiss round 1) or a model that won or lost every match.
RIDGE_FALLBACK = 1e-3


def _fit(data: bt.PairData, w: np.ndarray) -> tuple[np.ndarray, float]:
    """BT fit of every row of ``w`` (log10-odds, ``Σ r = 0``); the MLE, else the ridge fit."""
    x = data.design()
    for reg in (0.0, RIDGE_FALLBACK):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # non-convergence is handled below
                theta = bt.fit_logistic_batch(x, data.outcomes, w, reg=reg, n_ratings=len(data.models))
        except np.linalg.LinAlgError:
            continue
        if np.isfinite(theta).all() and np.abs(theta).max() < 50:
            return theta - theta.mean(axis=1, keepdims=True), reg
    raise RuntimeError("the Bradley-Terry fit did not converge even with the ridge fallback")


def ratings(matches: pl.DataFrame, n_bootstrap: int = 100, seed: int = 0) -> pl.DataFrame:
    """Elo leaderboard of the matches: ``model, rating, ci_lower, ci_upper, rank, num_battles, rating_ml, ridge``.

    BT on :class:`analysis_lib.bt.PairData` with ``bt``'s Newton solver (``bt.fit_logistic_batch``), Elo scale
    ``bt.to_elo`` (400 r + 1000, ``Σ r = 0``); ``rating`` and the interval are the mean and 2.5/97.5 percentiles
    over ``n_bootstrap`` resamples of the matches (``bt.bootstrap_counts``), ``rank`` by
    ``bt.rank_from_intervals``; ``ridge`` is the penalty used (0 = the MLE; :data:`RIDGE_FALLBACK` when the MLE
    does not exist). With ``n_bootstrap=0`` the rating is the point fit and the interval is NaN."""
    if matches.height == 0:
        raise ValueError("no matches to rate")
    data = bt.PairData.from_frame(battles(matches))
    theta, reg = _fit(data, data.counts[None, :])
    elo_ml = bt.to_elo(theta[0])
    if n_bootstrap > 0:
        w = bt.bootstrap_counts(data.n_battles, n_bootstrap, seed, p=data.counts / data.counts.sum())
        samples = bt.to_elo(_fit(data, w)[0])
        mean, lo, hi = samples.mean(0), np.percentile(samples, 2.5, 0), np.percentile(samples, 97.5, 0)
        rank = bt.rank_from_intervals(lo, hi)
    else:
        mean, lo, hi = elo_ml, np.full(len(elo_ml), np.nan), np.full(len(elo_ml), np.nan)
        rank = bt.rank_from_intervals(elo_ml, elo_ml)
    return pl.DataFrame({
        "model": list(data.models), "rating": mean, "ci_lower": lo, "ci_upper": hi, "rank": rank.astype(np.int64),
        "num_battles": data.battles_per_model().astype(np.int64), "rating_ml": elo_ml,
        "ridge": np.full(len(elo_ml), reg),
    }).sort("rating", descending=True)


def point_ratings(matches: pl.DataFrame, models: Sequence[str]) -> dict[str, float]:
    """Point Elo of every model in ``models`` (1000 for a model without a match yet), for pairing."""
    out = dict.fromkeys(models, bt.INIT_RATING)
    if matches.height:
        board = ratings(matches, n_bootstrap=0)
        out.update(dict(zip(board["model"], board["rating_ml"].cast(pl.Float64), strict=True)))
    return out


PlayMatch = Callable[[str, str, int], list[dict[str, Any]]]
"""``play(model_a, model_b, tournament_round) -> round records`` (the match-log format), one or more matches."""


def run_swiss(models: Sequence[str], play: PlayMatch, n_rounds: int = 4, seed: int = 0,
              progress: Callable[[Any], Any] | None = None,
              rule: PairingRule = "search") -> tuple[pl.DataFrame, pl.DataFrame]:
    """Play a Swiss tournament: ``(rounds, pairings)`` where ``rounds`` is every logged round (match-log
    schema) and ``pairings`` has ``tournament_round, model_a, model_b`` (``model_b`` null for a bye)."""
    rng = np.random.default_rng(seed)
    met: set[frozenset[str]] = set()
    records: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] = []
    iterator = range(1, n_rounds + 1)
    for t in progress(iterator) if progress else iterator:
        current = None if t == 1 else point_ratings(_matches(rounds_frame(records)), models)
        pairing = swiss_pairs(models, current, met, rng, rule)
        for a, b in pairing.pairs:
            met.add(frozenset((a, b)))
            plan.append({"tournament_round": t, "model_a": a, "model_b": b})
            records.extend(play(a, b, t))
        if pairing.bye is not None:
            plan.append({"tournament_round": t, "model_a": pairing.bye, "model_b": None})
    return rounds_frame(records), pl.DataFrame(plan, schema={"tournament_round": pl.Int64, "model_a": pl.String,
                                                               "model_b": pl.String})

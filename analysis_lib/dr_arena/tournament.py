"""Swiss tournament of DR-Arena (§4.1; the released ``tournament_cli.py``) and its Bradley–Terry ratings.

Pairing
    Round 1 pairs the models in a random order: (1st, 2nd), (3rd, 4th), … Later rounds sort the models by their
    current Elo (best first; ties by name, ratings compared to :data:`TIE_DIGITS` decimals so that two ratings
    that differ only by floating-point rounding, e.g. the winners of two identical round-1 matches, are a tie)
    and pair greedily: the best unpaired model meets the next unpaired model in that order that it has not met
    yet, falling back to the next unpaired model when it has met them all (the framework's rule). The greedy
    pass can repeat a pair when a repeat-free pairing exists; the default rule then searches for one
    (:func:`swiss_pairs`). With an odd number of models, the one left unpaired gets a bye (no match, no points).
    Swiss convention gives nobody a second bye while another model has had fewer: both rules get the history of
    byes and move the bye to the lowest-rated model with the fewest byes when the framework's pass would repeat
    one (the framework keeps no such history).

Ratings
    A match counts as one battle, decided by the final cumulative scores (higher wins, equal = tie, half a
    win). Bradley–Terry ``P(a beats b) = σ(ln 10 · (r_a − r_b))``, ratings ``r`` in log10-odds on the Elo scale
    ``400 r + 1000`` (``Σ r = 0``, no anchor), by the one leaderboard of the library,
    :func:`analysis_lib.ranking.leaderboard` (:func:`ratings`), with its check of the comparison graph and its
    ridge option.

When the MLE exists, and the ridge where it does not
    The BT MLE exists if and only if the beat graph of the matches is strongly connected
    (:mod:`analysis_lib.ranking.graph`: Zermelo 1929, Ford 1957). A Swiss tournament breaks that often: after
    round 1 the comparison graph is in pieces, and a model that won (or lost) every match has no finite rating.
    :func:`ratings` therefore opts into the ranking package's ridge (``on_separation="ridge"``): where the matches
    (or a bootstrap resample of them) have no MLE, the fit minimises ``L(r) + (reg/2) ‖r‖²`` with ``reg =``
    :data:`analysis_lib.ranking.RIDGE` ``= 1e-3`` on the summed loss, in log10-odds units: the MAP estimate under
    independent ``N(0, 1/reg)`` priors, a prior SD of ``1/√reg ≈ 31.6`` log10-odds ≈ 12,650 Elo, weak on purpose:
    it only makes the optimum finite. Within one strong component the rating differences stay close to that
    component's own MLE; between components the gap is set by the prior, growing like ``log(n / reg)`` with the
    ``n`` one-way matches (about 1,000 to 2,000 Elo in practice) and meaning only "every result went one way".
    The ridge centres each piece that has no match with the rest at mean 1000, so ratings in different pieces
    (e.g. after Swiss round 1) are not comparable. The leaderboard says which models needed it (``ridge_set``:
    the models outside the largest strongly connected group, whose ratings the ridge sets). Bootstrap resamples
    are fitted with the ridge only where the resample itself has no MLE; their count is reported
    (``ridge_resamples``). When more than 2.5% of the resamples needed it, an interval end can be a ridge value:
    read it as "unbounded" rather than as a number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from analysis_lib.dr_arena.match_log import matches as _matches
from analysis_lib.dr_arena.match_log import rounds_frame
from analysis_lib.ranking import INIT_RATING, leaderboard

#: Decimals of Elo to which ratings are compared when pairing (1e-6 Elo: rounding noise is a tie).
TIE_DIGITS = 6


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


def _bye_candidates(order: Sequence[str], bye_history: Sequence[str]) -> list[str]:
    """The models that may take a bye, lowest-rated (last in ``order``) first: those with the fewest byes in
    ``bye_history`` (everyone, when the history is empty)."""
    counts = Counter(bye_history)
    fewest = min(counts[m] for m in order)
    return [m for m in reversed(order) if counts[m] == fewest]


def swiss_pairs(models: Sequence[str], ratings: Mapping[str, float] | None, met: set[frozenset[str]],
                rng: np.random.Generator, rule: PairingRule = "search",
                bye_history: Sequence[str] = ()) -> Pairing:
    """One round of pairings (module docstring). ``ratings=None`` = round 1 (random order); ``met`` holds the
    pairs that have already played; ``bye_history`` the models that had a bye in earlier rounds (one entry per
    bye).

    ``rule="greedy"`` is the framework's: the best unpaired model takes the next model it has not met, else the
    next one. ``rule="search"`` (default) avoids repeats while possible: it returns the greedy pairing when that
    has no repeat, else the first repeat-free pairing in the same preference order (the bye going to the
    lowest-rated model that leaves one), and falls back to the greedy pairing when none exists.

    Byes (odd count), both rules: a model may take the bye only if no other model has had fewer byes
    (:func:`_bye_candidates`). When the bye the framework's pass leaves (round 1: the last in the random order)
    is not allowed, the lowest-rated allowed model (round 1: the last allowed one in that order) takes it and
    the others are paired by the same pass. The
    search tries allowed byes only; if none of them leaves a repeat-free pairing, the bye rule wins over repeat
    avoidance (the greedy pairing with an allowed bye). With an empty history both rules are the framework's."""
    if len(set(models)) != len(models):
        raise ValueError("model names must be unique")
    odd = len(models) % 2 == 1
    if ratings is None:
        order = [models[i] for i in rng.permutation(len(models))]
        bye = _bye_candidates(order, bye_history)[0] if odd else None  # order[-1] unless it had more byes
        rest = [m for m in order if m != bye]
        return Pairing(tuple((rest[i], rest[i + 1]) for i in range(0, len(rest) - 1, 2)), bye)
    missing = [m for m in models if m not in ratings]
    if missing:
        raise ValueError(f"no rating for {missing}")
    order = sorted(models, key=lambda m: (-round(ratings[m], TIE_DIGITS), m))
    allowed = _bye_candidates(order, bye_history) if odd else []
    greedy = _greedy(order, met)
    paired = {m for p in greedy for m in p}
    bye = next((m for m in order if m not in paired), None)
    if bye is not None and bye not in allowed:
        bye = allowed[0]
        greedy = _greedy([m for m in order if m != bye], met)
    if rule == "search" and any(frozenset(p) in met for p in greedy):
        for candidate in (allowed if odd else [None]):
            found = _no_repeat([m for m in order if m != candidate], met)
            if found is not None:
                return Pairing(tuple(found), candidate)
    return Pairing(tuple(greedy), bye)


def battles(matches: pl.DataFrame) -> pl.DataFrame:
    """Matches as BT battles: ``model_a, model_b, winner`` (``model_a``/``model_b``/``tie``)."""
    return matches.select("model_a", "model_b", "winner")


def ratings(matches: pl.DataFrame, rounds: int = 100, seed: int = 0) -> pl.DataFrame:
    """Elo leaderboard of the matches, best first: ``model, rating, ci_lower, ci_upper, rank, num_battles, mle,
    ridge, ridge_resamples, ridge_set``.

    :func:`analysis_lib.ranking.leaderboard` of :func:`battles` with ``on_separation="ridge"`` and ``point="ml"``
    (module docstring): ``rating`` is the fit on the observed matches (Elo ``400 r + 1000``, ``Σ r = 0``); ``mle``
    says whether their MLE exists: if not, the rating is the ridge fit, ``ridge`` the penalty used
    (:data:`analysis_lib.ranking.RIDGE`, else 0) and ``ridge_set`` marks the models whose ratings the ridge set.
    The interval is the 2.5/97.5 percentiles over ``rounds`` resamples of the matches, each fitted by the MLE
    where that resample has one and by the ridge otherwise; ``ridge_resamples`` counts the latter. ``rank`` = 1 +
    the models whose lower bound exceeds this one's upper bound. With ``rounds=0`` the interval is NaN and
    ``rank`` comes from the ratings alone."""
    if matches.height == 0:
        raise ValueError("no matches to rate")
    result = leaderboard(battles(matches), ci="bootstrap" if rounds > 0 else "none", rounds=rounds,
                         seed=seed, point="ml", on_separation="ridge", progress=False)
    n = len(result.models)
    return result.to_frame().drop("rating_ml").join(
        pl.DataFrame({
            "model": list(result.models), "mle": np.full(n, result.mle_exists), "ridge": np.full(n, result.ridge),
            "ridge_resamples": np.full(n, result.ridge_resamples, np.int64),
            "ridge_set": np.isin(list(result.models), list(result.ridge_models)),
        }), on="model", how="left", maintain_order="left")


def leaderboard_table(board: pl.DataFrame, reference: Mapping[str, float], reference_name: str) -> pl.DataFrame:
    """:func:`ratings` as a page shows it: ``model``, ``rating (Elo)`` and its ``95% interval`` in whole Elo,
    ``rank`` (1 + the models whose interval lies wholly above this one's), ``matches`` played and each model's
    reference rating in a column named ``reference_name`` (2 decimals; null for a model without one)."""

    def whole(col: str) -> pl.Expr:
        return pl.col(col).fill_nan(None).round(0).cast(pl.Int64)

    return board.select(
        "model",
        whole("rating").alias("rating (Elo)"),
        pl.format("{} to {}", whole("ci_lower"), whole("ci_upper")).alias("95% interval"),
        "rank",
        pl.col("num_battles").alias("matches"),
        pl.col("model").replace_strict(dict(reference), default=None, return_dtype=pl.Float64).round(2)
        .alias(reference_name),
    )


def point_ratings(matches: pl.DataFrame, models: Sequence[str]) -> dict[str, float]:
    """Point Elo of every model in ``models`` (1000 for a model without a match yet), for pairing."""
    out = dict.fromkeys(models, INIT_RATING)
    if matches.height:
        board = ratings(matches, rounds=0)
        out.update(dict(zip(board["model"], board["rating"].cast(pl.Float64), strict=True)))
    return out


PlayMatch = Callable[[str, str, int], list[dict[str, Any]]]
"""``play(model_a, model_b, tournament_round) -> round records`` (the match-log format), one or more matches."""


def run_swiss(models: Sequence[str], play: PlayMatch, n_rounds: int = 4, seed: int = 0,
              progress: Callable[[Any], Any] | None = None,
              rule: PairingRule = "search") -> tuple[pl.DataFrame, pl.DataFrame]:
    """Play a Swiss tournament: ``(rounds, pairings)`` where ``rounds`` is every logged round (match-log
    schema) and ``pairings`` has ``tournament_round, model_a, model_b`` (``model_b`` null for a bye). The byes
    given so far go to :func:`swiss_pairs`, so no model gets a second bye before every model has had one."""
    rng = np.random.default_rng(seed)
    met: set[frozenset[str]] = set()
    byes: list[str] = []
    records: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] = []
    iterator = range(1, n_rounds + 1)
    for t in progress(iterator) if progress else iterator:
        current = None if t == 1 else point_ratings(_matches(rounds_frame(records)), models)
        pairing = swiss_pairs(models, current, met, rng, rule, byes)
        for a, b in pairing.pairs:
            met.add(frozenset((a, b)))
            plan.append({"tournament_round": t, "model_a": a, "model_b": b})
            records.extend(play(a, b, t))
        if pairing.bye is not None:
            byes.append(pairing.bye)
            plan.append({"tournament_round": t, "model_a": pairing.bye, "model_b": None})
    return rounds_frame(records), pl.DataFrame(plan, schema={"tournament_round": pl.Int64, "model_a": pl.String,
                                                               "model_b": pl.String})
